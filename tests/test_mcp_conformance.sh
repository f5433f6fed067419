#!/bin/sh
# The official MCP conformance suite (@modelcontextprotocol/conformance,
# pinned by tests/mcp/package-lock.json, installed by scripts/test-deps.sh)
# against drqa-tui --mcp-http on the pyrepo fixture: one TAP line per server
# scenario that applies to this server, a SKIP line with the reason for each
# one that does not. A scenario passes when the suite reports no FAILURE
# check (its WARNINGs are SHOULDs it grades, printed here as comments).
# Then the official SDK's client (tests/mcp/sdk_http_client.mjs) runs a
# session with an ask and its progress.
# Skipped as a whole when the Node tools are not installed.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}"
if ! . "$top_srcdir/tests/mcp/node-env.sh"; then
    echo "1..0 # SKIP the MCP test tools are not installed (run scripts/test-deps.sh)"
    exit 0
fi
. "$top_srcdir/tests/lib.sh"
pid=
at_exit '[ -n "$pid" ] && kill $pid 2>/dev/null'
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"

"$DRQA" --mcp-http 127.0.0.1:0 --index "$T/index.sqlite" "$T/repo" 2>"$T/server.err" &
pid=$!
port=
i=0
while [ $i -lt 300 ] && [ -z "$port" ] && kill -0 $pid 2>/dev/null; do
    port=$(sed -n 's|.*listening on http://127\.0\.0\.1:\([0-9]*\)/mcp.*|\1|p' "$T/server.err")
    [ -n "$port" ] || sleep 0.1
    i=$((i + 1))
done
if [ -z "$port" ]; then
    ok 1 "drqa-tui --mcp-http starts"
    sed 's/^/#   /' "$T/server.err"
    echo "1..$n"
    exit 1
fi
url=http://127.0.0.1:$port/mcp

# scenario NAME: runs one scenario, bounded in time
scenario() {
    timeout 120 "$MCP_NODE" "$MCP_DEPS/node_modules/@modelcontextprotocol/conformance/dist/index.js" \
        server --url "$url" --scenario "$1" >"$T/$1.out" 2>&1
    rc=$?
    summary=$(sed 's/\x1b\[[0-9;]*m//g' "$T/$1.out" | sed -n 's/^Passed: //p' | tail -1)
    ok $rc "$1 (${summary:-no summary, exit $rc})"
    if [ $rc != 0 ]; then
        sed 's/\x1b\[[0-9;]*m//g' "$T/$1.out" | grep -v '^ *$' | tail -25 | sed 's/^/#   /'
    else
        sed 's/\x1b\[[0-9;]*m//g' "$T/$1.out" | grep 'WARNING' | sed 's/^/#   /'
    fi
}

applies="server-initialize ping logging-set-level tools-list dns-rebinding-protection
    server-sse-multiple-streams server-sse-polling"
for s in $applies; do
    scenario "$s"
done

# The rest need what this server does not offer: tools, prompts and
# resources of the suite's own reference server, or client features.
classified=$applies
na() { skip "$1: does not apply, $2"; classified="$classified $1"; }
for s in tools-call-simple-text tools-call-image tools-call-audio tools-call-embedded-resource \
    tools-call-mixed-content tools-call-with-logging tools-call-error tools-call-with-progress \
    tools-call-sampling tools-call-elicitation json-schema-2020-12 elicitation-sep1034-defaults \
    elicitation-sep1330-enums; do
    na "$s" "it calls a tool of the suite's reference server; ours are the index's actions and ask"
done
for s in resources-list resources-read-text resources-read-binary resources-templates-read \
    resources-subscribe resources-unsubscribe; do
    na "$s" "the server offers no resources and does not declare the resources capability"
done
for s in prompts-list prompts-get-simple prompts-get-with-args prompts-get-embedded-resource \
    prompts-get-with-image completion-complete; do
    na "$s" "the server offers no prompts (nor completions) and does not declare those capabilities"
done

# the official SDK's client (what most agents embed) over this transport:
# connect, tools, find_class, ask with progress, DELETE
MCP_DEPS=$MCP_DEPS timeout 180 "$MCP_NODE" "$top_srcdir/tests/mcp/sdk_http_client.mjs" "$url" >"$T/sdk.json" 2>"$T/sdk.err"
ok $? "the MCP SDK client runs its session against the server"
[ -s "$T/sdk.json" ] || sed 's/^/#   /' "$T/sdk.err" | tail -20
sid=$(jget "$T/sdk.json" sessionId 2>/dev/null)
case $sid in ""|None) ok 1 "the SDK client got a session id" ;; *) ok 0 "the SDK client got a session id" ;; esac
like " $(jget "$T/sdk.json" tools 2>/dev/null) " '"ask"' "the SDK client lists ask"
like "$(jget "$T/sdk.json" findClass.text 2>/dev/null)" "class Router" "find_class through the SDK client finds Router"
is "$(jget "$T/sdk.json" ask.isError 2>/dev/null)" "false" "ask through the SDK client answers"
cites=$(jget "$T/sdk.json" ask.citations 2>/dev/null)
ok "$([ "${cites:-0}" -gt 0 ] && echo 0 || echo 1)" "the SDK client's ask result has citations in structuredContent ($cites)"
progress=$(jget "$T/sdk.json" progress 2>/dev/null)
ok "$([ "${progress:-0}" -gt 0 ] && echo 0 || echo 1)" "the SDK client's progress callback ran ($progress notifications on the event stream)"
is "$(jget "$T/sdk.json" terminated 2>/dev/null)" "true" "the SDK client ended its session with DELETE"

# a scenario a newer pin of the suite adds must be classified here
"$MCP_NODE" "$MCP_DEPS/node_modules/@modelcontextprotocol/conformance/dist/index.js" list --server \
    >"$T/list" 2>&1
listed=$(sed -n 's/^  - \([^ ]*\).*/\1/p' "$T/list")
unknown=
for s in $listed; do
    case " $(echo $classified) " in *" $s "*) ;; *) unknown="$unknown $s" ;; esac
done
is "${listed:+listed}${unknown:-}" "listed" "every server scenario of the suite is run or said not to apply"

kill -TERM $pid
wait $pid
rc=$?
pid=
is "$rc" 0 "the server exits 0 on SIGTERM after the suite"
echo "1..$n"
exit $fail
