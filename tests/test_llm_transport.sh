#!/bin/sh
# test_llm_transport.sh: drqa-tui --ask over the transports beside plain chat
# completions, against tests/model_emu.py on loopback:
#   Azure OpenAI (profile azure): a classic deployment URL with api-version,
#     the v1 endpoint and a bare resource URL; the key goes in api-key, never
#     in Authorization, and is shown nowhere; a deployment URL without
#     api-version is refused before any request;
#   the Responses API (profile responses): a Responses-only model (gpt-5-pro)
#     is asked on /v1/responses from its first call, and, forced onto chat
#     completions with `api = chat`, is switched there by the server's 404,
#     said once on stderr;
#   Anthropic prompt caching (profile anthropic-cache, the documented minimum
#     per model): each request's first message starts with its stable head as
#     a block marked cache_control; cache writes and reads show per role in
#     --json usage where the cached prefix reaches the model's minimum; for
#     Opus 4.5 (4096 tokens) the repository outline in every role's stable
#     head makes it reach that minimum, so every role reads the cache from its
#     second call on.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
KEY=azk-Transport7SECRETkey42
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
Q="Where does App.dispatch_request call the view function?"

start_emu() {   # start_emu PROFILE: the emulator in the background, its port in $port
    rm -f "$T/emu.log"
    emu_start emu --profile "$1" --log-bodies --max-seconds 300
}
config() {   # config LINE...: the config file, one setting a line
    printf '%s\n' "$@" >"$T/cfg"
    chmod 600 "$T/cfg"
}
ask() {   # ask NAME: --ask with $T/cfg, output in $T/NAME.json, .err and the --log .log, status in $rc
    "$DRQA" --config "$T/cfg" --ask "$Q" --iterations 4 --json --log "$T/$1.log" "$T/repo" >"$T/$1.json" 2>"$T/$1.err"
    rc=$?
}
# emu EXPR: EXPR over the emulator's log (a list of request entries, L)
emu() {
    $PYTHON3 -c 'import json, sys
L = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
print(eval(sys.argv[2]))' "$T/emu.log" "$1"
}
tap_fail_hook() { for f in "$T"/*.err; do [ -f "$f" ] && sed 's/^/# /' "$f" | head -5; done; }

# ---- Azure OpenAI
start_emu azure
config "provider = azure" "api_base = http://127.0.0.1:$port/openai/deployments/gpt-4o-prod?api-version=2024-10-21" \
    "api_key = $KEY" "model = gpt-4o"
ask azure
is "$rc" 0 "azure deployment URL: --ask succeeds"
is "$(jget "$T/azure.json" citations.0.path)" "tinyweb/app.py" "azure deployment URL: the answer cites the code read"
is "$(emu 'sorted(set((e["path"], e["status"]) for e in L))')" \
    "[('/openai/deployments/gpt-4o-prod/chat/completions', 200)]" \
    "azure deployment URL: every request went to the deployment's chat completions and was answered"
is "$(emu 'all(e["azure"]["api_version"] for e in L)')" True "azure deployment URL: every request carries api-version"
is "$(emu 'all("api-key" in e["headers"] and "authorization" not in e["headers"] for e in L)')" True \
    "azure: the key goes in api-key, no Authorization header"
ok "$(cat "$T/azure.json" "$T/azure.err" "$T/azure.log" | grep -c "$KEY")" "azure: the key is in no output, message or log"
ok "$(grep -c 'api-version=2024-10-21' "$T/azure.log" >/dev/null; echo $?)" "azure: the log names the deployment URL it posted to"

for form in "/openai/v1" ""; do
    : >"$T/emu.log"
    config "provider = azure" "api_base = http://127.0.0.1:$port$form" "api_key = $KEY" "model = gpt-4o-mini"
    ask azv1
    is "$rc" 0 "azure base '…$form': --ask succeeds"
    is "$(emu 'sorted(set((e["path"], e["status"]) for e in L))')" "[('/openai/v1/chat/completions', 200)]" \
        "azure base '…$form': requests go to the v1 endpoint, no api-version needed"
done

: >"$T/emu.log"
config "provider = azure" "api_base = http://127.0.0.1:$port/openai/deployments/gpt-4o-prod" "api_key = $KEY" \
    "model = gpt-4o"
ask azbad
ok "$([ "$rc" -ne 0 ] && echo 0 || echo 1)" "azure deployment URL without api-version: refused (status $rc)"
like "$(cat "$T/azbad.err")" "api-version" "azure deployment URL without api-version: the message says what to add"
is "$(emu 'len(L)')" 0 "azure deployment URL without api-version: no request sent"
emu_stop

# ---- the Responses API
start_emu responses
config "provider = openai" "api_base = http://127.0.0.1:$port/v1" "api_key = sk-resp-SECRET5551" "model = gpt-5-pro"
ask resp
is "$rc" 0 "responses: --ask with gpt-5-pro succeeds"
like "$(jget "$T/resp.json" answer)" "From the code shown:" "responses: the answer is the model's"
is "$(jget "$T/resp.json" citations.0.path)" "tinyweb/app.py" "responses: the answer cites the code read"
is "$(emu 'sorted(set((e["path"], e["status"]) for e in L))')" "[('/v1/responses', 200)]" \
    "responses: a Responses-only model is asked on /v1/responses from its first call"
is "$(emu 'all("max_output_tokens" in e["params"] and "messages" not in e["params"] and "reasoning" not in e["params"] for e in L)')" \
    True "responses: max_output_tokens sent, no messages, no reasoning effort the profile does not know"
is "$(emu 'all(json.loads(e["body"]).get("instructions", "").startswith("You are the") for e in L)')" True \
    "responses: the system prompt goes as instructions"
is "$(emu 'all(json.loads(e["body"])["text"]["format"]["type"] == "json_schema" for e in L if e["role"] != "answer")')" \
    True "responses: structured output through text.format json_schema"
ok "$([ "$(jget "$T/resp.json" usage.total.reasoning_tokens)" -gt 0 ] && echo 0 || echo 1)" \
    "responses: reasoning tokens read from usage.output_tokens_details"

: >"$T/emu.log"
config "provider = openai" "api_base = http://127.0.0.1:$port/v1" "api_key = sk-resp-SECRET5551" "model = gpt-5-pro" \
    "api = chat"
ask respsw
is "$rc" 0 "responses, api = chat: --ask still succeeds"
is "$(emu '[(e["path"], e["status"]) for e in L][:2]')" \
    "[('/v1/chat/completions', 404), ('/v1/responses', 200)]" \
    "responses, api = chat: one 404 'only supported in v1/responses', then the Responses API"
is "$(emu 'sum(1 for e in L if e["path"].endswith("/chat/completions"))')" 1 \
    "responses, api = chat: the switch holds for the rest of the run"
is "$(grep -c 'served on the Responses API alone' "$T/respsw.err")" 1 "responses, api = chat: the switch is said once"
ok "$(grep -c 'check the API base URL' "$T/respsw.err")" "responses, api = chat: the user is not told to check the base URL"

# a 400 naming a parameter of the Responses API (reasoning.effort) is adjusted
# for once, as on chat completions
: >"$T/emu.log"
config "provider = openai" "api_base = http://127.0.0.1:$port/v1" "api_key = sk-resp-SECRET5551" "model = gpt-5-pro" \
    "profile.gpt-5-pro.reasoning_effort = medium"
ask respadj
is "$rc" 0 "responses, reasoning.effort refused: --ask succeeds"
is "$(emu '[(e["status"], "reasoning" in e["params"]) for e in L][:2]')" "[(400, True), (200, False)]" \
    "responses, reasoning.effort refused: the 400 naming it drops it, and the request goes again"
is "$(emu 'sum(1 for e in L if e["status"] == 400)')" 1 "responses, reasoning.effort refused: once for the run"
like "$(cat "$T/respadj.err")" "refused 'reasoning.effort'" "responses, reasoning.effort refused: said on stderr"
emu_stop

# ---- Anthropic prompt caching, the documented minimums
start_emu anthropic-cache
config "provider = anthropic" "api_base = http://127.0.0.1:$port" "api_key = sk-ant-SECRET77" "model = claude-sonnet-4-5"
ask cache
is "$rc" 0 "anthropic-cache, claude-sonnet-4-5: --ask succeeds"
is "$(emu 'all(isinstance(json.loads(e["body"])["messages"][0]["content"], list) and json.loads(e["body"])["messages"][0]["content"][0]["text"].startswith("Question") and "cache_control" in json.loads(e["body"])["messages"][0]["content"][0] for e in L)')" \
    True "anthropic: every request's first message starts with its stable head as a block marked cache_control"
is "$(emu '[(e["usage"]["cache_creation_input_tokens"] > 0, e["usage"]["cache_read_input_tokens"] > 0) for e in L if e["role"] == "planning"][:3]')" \
    "[(True, False), (False, True), (False, True)]" \
    "anthropic-cache, claude-sonnet-4-5 (minimum 1024): planning's prefix is written on its first call, read from the second on"
is "$(jget "$T/cache.json" usage.by_tag.planning.cache_write_tokens)" \
    "$(emu 'sum(e["usage"]["cache_creation_input_tokens"] for e in L if e["role"] == "planning")')" \
    "anthropic-cache: --json usage counts planning's cache writes as the server reported them"
is "$(jget "$T/cache.json" usage.by_tag.planning.cached_input_tokens)" \
    "$(emu 'sum(e["usage"]["cache_read_input_tokens"] for e in L if e["role"] == "planning")')" \
    "anthropic-cache: --json usage counts planning's cache reads as the server reported them"
like "$(cat "$T/cache.err")" "cache write)" "anthropic-cache: the ledger line on stderr shows cache writes"

: >"$T/emu.log"
# Opus 4.5's minimum is 4096 tokens: tools, system and question are far under
# it, and the repository outline in every role's stable head is sized to
# reach it. The fixture's outline alone is too short for that, so the
# repository gets a generated package beside it.
cp -r "$T/repo" "$T/big"
mkdir -p "$T/big/shop"
: >"$T/big/shop/__init__.py"
m=1
while [ $m -le 40 ]; do
    {
        printf '"""Stock module %02d of the shop."""\n\n\nclass Shelf%02d:\n    """Keeps the parts of shelf %02d in order."""\n' $m $m $m
        k=1
        while [ $k -le 15 ]; do
            printf '\n    def restock_%02d_%02d(self, part, count=1):\n        """Add count copies of part."""\n        return part\n' $m $k
            k=$((k + 1))
        done
    } >"$T/big/shop/stock_$m.py"
    m=$((m + 1))
done
config "provider = anthropic" "api_base = http://127.0.0.1:$port" "api_key = sk-ant-SECRET77" "model = claude-opus-4-5"
"$DRQA" --config "$T/cfg" --ask "$Q" --iterations 4 --json --log "$T/cache45.log" "$T/big" >"$T/cache45.json" 2>"$T/cache45.err"
rc=$?
is "$rc" 0 "anthropic-cache, claude-opus-4-5: --ask succeeds"
is "$(emu 'all("Repository outline: " in json.loads(e["body"])["messages"][0]["content"][0]["text"] for e in L)')" True \
    "anthropic-cache, claude-opus-4-5: every request's cached head holds the repository outline"
is "$(emu 'min(e["usage"]["cache_creation_input_tokens"] + e["usage"]["cache_read_input_tokens"] for e in L) >= 4096')" \
    True "anthropic-cache, claude-opus-4-5 (minimum 4096): every request's stable prefix reaches the minimum"
is "$(emu '[(e["usage"]["cache_creation_input_tokens"] > 0, e["usage"]["cache_read_input_tokens"] > 0) for e in L if e["role"] == "planning"][:3]')" \
    "[(True, False), (False, True), (False, True)]" \
    "anthropic-cache, claude-opus-4-5: planning's prefix is written on its first call, read from the second on"
is "$(emu 'all(e["usage"]["cache_read_input_tokens"] >= 4096 for r in set(x["role"] for x in L) for e in [x for x in L if x["role"] == r][1:])')" \
    True "anthropic-cache, claude-opus-4-5: every role reads its prefix from the cache from its second call on"
is "$(jget "$T/cache45.json" usage.total.cached_input_tokens)" "$(emu 'sum(e["usage"]["cache_read_input_tokens"] for e in L)')" \
    "anthropic-cache, claude-opus-4-5: --json usage counts the cache reads as the server reported them"
emu_stop

# ---- the profile says which API
"$DRQA" --show-profile --model gpt-5-pro >"$T/prof" 2>&1
like "$(cat "$T/prof")" "api = responses" "--show-profile: gpt-5-pro is asked on the Responses API"
"$DRQA" --show-profile --model gpt-5 >"$T/prof" 2>&1
like "$(cat "$T/prof")" "api = chat" "--show-profile: gpt-5 on chat completions"

echo "1..$n"
exit $fail
