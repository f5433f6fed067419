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
T=$(mktemp -d /tmp/drqa-test-mcp-sdk-XXXXXX)
fake=
trap '[ -n "$fake" ] && kill $fake 2>/dev/null; rm -rf "$T"' EXIT
export HOME="$T/home" XDG_CACHE_HOME="$T/cache" XDG_CONFIG_HOME="$T/config"
unset DRQA_API_KEY DRQA_MODEL DRQA_API_BASE OPENAI_API_KEY ANTHROPIC_API_KEY OLLAMA_HOST
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
echo '{"default": {"fault": "hang", "hang_s": 30}}' >"$T/script.json"
"${PYTHON3:-python3}" "$top_srcdir/tests/fake_llm.py" --script "$T/script.json" --log "$T/fake.log" \
    --port-file "$T/fake.port" >/dev/null &
fake=$!
i=0
while [ ! -s "$T/fake.port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
flask=/usr/lib/python3/dist-packages/flask
[ -d "$flask" ] || flask=
DRQA=$(cd "$(dirname "$DRQA")" && pwd)/$(basename "$DRQA") WORK="$T" REPO="$T/repo" FLASK="$flask" \
    FAKE_PORT=$(cat "$T/fake.port" 2>/dev/null) \
    "$MCP_NODE" "$top_srcdir/tests/mcp/sdk_client.mjs"
