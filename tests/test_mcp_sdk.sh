#!/bin/sh
# The official TypeScript SDK client (@modelcontextprotocol/sdk, pinned by
# tests/mcp/package-lock.json, installed by scripts/test-deps.sh) driving
# drqa-tui --mcp over stdio on the pyrepo fixture and on Debian's flask,
# checked against --action and --ask (tests/mcp/sdk_client.mjs prints the
# TAP). A loopback fake model whose requests hang gives the cancel something
# to cancel. Skipped when the Node tools are not installed.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}"
if [ ! -f "$top_srcdir/tests/mcp/node-env.sh" ] || ! . "$top_srcdir/tests/mcp/node-env.sh"; then
    echo "1..0 # SKIP the MCP test tools are not installed (run scripts/test-deps.sh)"
    exit 0
fi
. "$top_srcdir/tests/lib.sh"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
echo '{"default": {"fault": "hang", "hang_s": 30}}' >"$T/script.json"
fake_start "$T/script.json" "$T/fake.log"
flask=/usr/lib/python3/dist-packages/flask
[ -d "$flask" ] || flask=
DRQA=$(cd "$(dirname "$DRQA")" && pwd)/$(basename "$DRQA") WORK="$T" REPO="$T/repo" FLASK="$flask" \
    FAKE_PORT=$port \
    "$MCP_NODE" "$top_srcdir/tests/mcp/sdk_client.mjs"
