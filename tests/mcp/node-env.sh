# node-env.sh: sourced by the tests that run the Node tools of
# scripts/test-deps.sh. Sets MCP_DEPS (the folder holding node_modules) and
# MCP_NODE (its Node 22 binary) from $DRQA_TEST_DEPS, else test-deps/ in
# the build tree, else in the source tree; returns 1 when none is installed.
MCP_DEPS=
for d in ${DRQA_TEST_DEPS:+"$DRQA_TEST_DEPS"} "${top_builddir:-.}/test-deps" "${top_srcdir:-.}/test-deps"; do
    if [ -x "$d/node_modules/.bin/node" ] && [ -d "$d/node_modules/@modelcontextprotocol/sdk" ]; then
        MCP_DEPS=$(cd "$d" && pwd)
        break
    fi
done
[ -n "$MCP_DEPS" ] || return 1
MCP_NODE=$MCP_DEPS/node_modules/.bin/node
"$MCP_NODE" --version >/dev/null 2>&1 || return 1
export MCP_DEPS MCP_NODE
