#!/bin/sh
# test_reply_shapes.sh: --ask --policy llm against tests/model_emu.py's reply
# shapes, the 200 replies that carry no completion, on a copy of the pyrepo
# fixture. Never a silent substitute:
#   - a model that refuses every request, a gateway whose every reply is
#     an error body with status 200,
#     OpenRouter's choice-level error on every reply: exit status 3, nothing
#     on stdout (no offline answer passed off as the model's), stderr names
#     the server's reason; --json says so (error, answered_by, answer null,
#     the offline answer apart, failed_calls equal to the ledger's);
#   - a server that streams when asked not to (--no-stream) is read all the
#     same: the model's answer, its calls' tokens estimated and marked (the
#     stream carries no usage unasked);
#   - a choice-level error is a failure with the provider's message, not a
#     reply re-asked three times per role;
#   - a run stopped by a persistent error prints no "No code in the
#     repository was found" on stdout;
#   - a reasoning model that spends its whole reply limit gets it raised
#     once, and answers;
#   - a model that plans Finish with nothing read gets the offline plan for
#     that node, marked, and its answer cites what the search read;
#   - an answer the offline policy wrote for the model comes under a heading
#     saying so;
#   - an answer citing nothing verified exits 4 and --json says uncited.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
"$DRQA" --quiet --no-progress --index "$T/index.sqlite" --index-only "$T/repo" >/dev/null 2>&1
Q="Where does App.dispatch_request call the view function?"

# ask NAME MODEL [ARGS...]: --ask into $T/NAME.out and .err, status in $rc
ask() {
    name=$1 model=$2
    shift 2
    DRQA_API_KEY=sk-shapes "$DRQA" --no-progress --index "$T/index.sqlite" --policy llm \
        --api-base "http://127.0.0.1:$port/v1" --model "$model" --iterations 6 "$@" --ask "$Q" "$T/repo" \
        >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
}
requests() { wc -l <"$T/$1.log" | tr -d ' '; }
py() { $PYTHON3 -c "import json, sys; d = json.load(open(sys.argv[1])); print($2)" "$1"; }

# ---- servers that never answer usably: exit 3, nothing on stdout, the reason on stderr
for shape in refusal http200-error choice-error; do
    case $shape in
    refusal) why="declined to answer (message.refusal): I'm sorry, but I can't help" ;;
    http200-error) why='answered status 200 with an error instead of a completion (server_error): The server had an error processing your request' ;;
    choice-error) why='Upstream provider EmuProvider returned an error' ;;
    esac
    emu_start "$shape" --profile "$shape" --shape-rate 1
    ask "$shape" gpt-4.1-mini
    emu_stop
    is "$rc" 3 "$shape: every reply unusable: exit status 3 (no model call succeeded)"
    is "$(cat "$T/$shape.out")" "" "$shape: no answer on stdout (no offline answer passed off as the model's)"
    like "$(cat "$T/$shape.err")" "no model call succeeded" "$shape: stderr says no model call succeeded"
    like "$(cat "$T/$shape.err")" "$why" "$shape: stderr names the server's reason"
    nreq=$(requests "$shape")
    ok "$([ "$nreq" -le 5 ] && echo 0 || echo 1)" \
        "$shape: the same failure is persistent, not asked again per role ($nreq requests)"
done
# a persistent error at the first call (a key refused): the search stops at once
echo '{"default": {"status": 401, "error": "Incorrect API key provided: sk-sh***es."}}' >"$T/auth.json"
fake_start "$T/auth.json" "$T/auth.log"
ask auth fake-model
fake_stop
ok "$([ "$rc" -ne 0 ] && echo 0 || echo 1)" "a key refused: the run fails (status $rc)"
like "$(cat "$T/auth.err")" "401" "a key refused: stderr names the server's status"
ok "$(cat "$T"/*.out | grep -c 'No code in the repository was found')" \
    "a run stopped on a persistent error prints no 'No code in the repository was found' on stdout"

# --json: the same counts as the ledger, the offline answer apart
emu_start refusal-json --profile refusal
ask refusal-json gpt-4.1-mini --json
emu_stop
is "$rc" 3 "--json: exit status 3"
is "$(py "$T/refusal-json.out" "d['answer'], d['answered_by'], d['policy'], d['failed_calls'] == d['model_calls'] == d['usage']['total']['failures'] > 0")" \
    "None offline llm True" "--json: answer null, answered by the offline policy, failed_calls as the ledger's"
like "$(py "$T/refusal-json.out" "d['error']")" "no model call succeeded" "--json: error says no model call succeeded"
like "$(py "$T/refusal-json.out" "d['error']")" "declined to answer" "--json: error names the server's reason"
ok "$(py "$T/refusal-json.out" "0 if 'offline_answer' in d else 1")" "--json: the offline policy's answer is kept apart, under its own name"

# ---- a server that streams whatever it is asked: read all the same
emu_start sse --profile unasked-sse
ask sse-json gpt-4.1-mini --json --no-stream
emu_stop
is "$rc" 0 "unasked-sse with --no-stream: answered"
is "$(py "$T/sse-json.out" "d['answered_by'], d['failed_calls'], d['verified_citations'] > 0")" "model 0 True" \
    "unasked-sse with --no-stream: the model's cited answer, no failed call"
is "$(py "$T/sse-json.out" "d['usage']['total']['estimated_calls'] == d['model_calls'] > 0")" True \
    "unasked-sse with --no-stream: no usage in the unasked stream: every call's tokens estimated and marked"
is "$($PYTHON3 -c 'import json, sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("stream", {}).get("asked")))' "$T/sse.log")" 0 \
    "unasked-sse with --no-stream: no request asked for a stream"

# ---- a choice-level error on some replies: a failure with the provider's message, the step falls back once
emu_start choice --profile choice-error --shape-rate 0.3 --seed 3
ask choice gpt-4.1-mini --json --transcript-dir "$T/tr-choice"
emu_stop
is "$rc" 0 "choice-error sometimes: the question is answered"
faults=$($PYTHON3 -c 'import json, sys; print(sum(1 for l in open(sys.argv[1]) if json.loads(l).get("fault") == "choice-error"))' "$T/choice.log")
ok "$([ "$faults" -gt 0 ] && echo 0 || echo 1)" "choice-error sometimes: choice-level errors were served ($faults)"
is "$(py "$T/choice.out" "d['failed_calls'] == d['usage']['total']['failures'] == $faults")" True \
    "choice-error sometimes: each choice-level error is a failed call in the ledger, none taken as a reply"
cat "$T"/tr-choice/*.json >"$T/choice.tr"
is "$(py "$T/choice.tr" "d['config']['decided']['failed_calls'] == d['config']['usage']['total']['failures'] == $faults, d['config']['decided']['answered_by']")" \
    "True model" "choice-error sometimes: the transcript carries the same counts as --json and the ledger"
grep -q "^Decided by: the answer by the model's (llm) policy; [0-9]* steps* by the offline policy instead of the model; $faults of [0-9]* model calls failed" "$T"/tr-choice/*.md
ok $? "choice-error sometimes: so does the Markdown transcript"
like "$(cat "$T/choice.tr")" "Upstream provider EmuProvider returned an error" "choice-error sometimes: the provider's message is on the node"
like "$(cat "$T/choice.err")" "decided by the offline policy instead of the model" "choice-error sometimes: stderr says how many steps fell back"
is "$(py "$T/choice.out" "d['answered_by'], d['verified_citations'] > 0, d['uncited']")" "model True False" \
    "choice-error sometimes: the answer is the model's, with a verified citation"

# ---- a reasoning model that spends its first reply limit on reasoning
emu_start length --profile length-empty
ask length o4-mini --json
emu_stop
is "$rc" 0 "length-empty: answered"
like "$(cat "$T/length.err")" "spent its whole reply limit of" "length-empty: stderr says the limit was raised, once"
is "$(grep -c 'spent its whole reply limit' "$T/length.err")" 1 "length-empty: said once"
is "$(py "$T/length.out" "d['answered_by'], d['verified_citations'] > 0")" "model True" "length-empty: the model wrote a cited answer"

# ---- a model that plans Finish with nothing read
emu_start finish --profile finish-now
ask finish gpt-4.1-mini --json --transcript-dir "$T/tr-finish"
emu_stop
is "$rc" 0 "finish-now: exit 0"
is "$(py "$T/finish.out" "d['answered_by'], d['verified_citations'] > 0, d['uncited'], d['fallback_steps'] > 0")" \
    "model True False True" "finish-now: the model's answer cites what the offline plans read; those steps are counted"
like "$(cat "$T"/tr-finish/*.json)" "the model planned Finish with no code read on its path, refused; used the offline plan" \
    "finish-now: the node says the offline policy planned it"

# ---- the answer call fails while the rest works: the offline answer comes under its own heading
cat >"$T/noanswer.json" <<'EOF'
{"rules": [
 {"match": "You are the Perception Agent", "content": "{\"summary\": \"start\", \"candidates\": [\"App.dispatch_request\"]}"},
 {"match": "You are the Planning Agent", "times": 1, "content": "{\"action\": \"FindFunction\", \"args\": {\"function_name\": \"dispatch_request\"}}"},
 {"match": "You are the Planning Agent", "content": "{\"action\": \"Finish\", \"args\": {\"answer\": \"see app.py\", \"finish_reason\": \"found\"}}"},
 {"match": "You are the Evidence Filter", "content": "{\"spans\": [{\"path\": \"tinyweb/app.py\", \"start_line\": 46, \"end_line\": 51}]}"},
 {"match": "You are the Evaluation Agent", "content": "{\"value\": 80, \"feedback\": \"read it\"}"},
 {"match": "You are the Answer Agent", "status": 500, "error": "answer backend down"}
]}
EOF
printf 'retries = 0\n' >"$T/noretry.conf"
fake_start "$T/noanswer.json" "$T/noanswer.log"
ask noanswer fake-model --config "$T/noretry.conf"
fake_stop
is "$rc" 0 "the answer call fails, the rest works: answered"
is "$(head -1 "$T/noanswer.out")" "## The offline policy's answer (the model's answer call failed)" \
    "the offline policy's answer comes under a heading saying so"
like "$(cat "$T/noanswer.err")" "the answer too" "stderr says the answer fell back too"

# ---- the answer call fails once and its retry succeeds: the warning says
# calls failed and why, not that steps fell back (none did)
"$PYTHON3" - "$T/noanswer.json" "$T/hiccup.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["rules"] = [r for r in d["rules"] if "Answer Agent" not in r["match"]] + [
    {"match": "You are the Answer Agent", "times": 1, "fault": "truncate", "content": "It is called in"},
    {"match": "You are the Answer Agent", "content": "It is called in `tinyweb/app.py:46-51`."}]
json.dump(d, open(sys.argv[2], "w"))
EOF
printf 'retries = 0\n' >"$T/oneretry.conf"
fake_start "$T/hiccup.json" "$T/hiccup.log"
ask hiccup fake-model --config "$T/oneretry.conf" --iterations 1
is "$rc" 0 "an answer call cut short, then sent again: answered"
is "$(head -1 "$T/hiccup.out")" 'It is called in `tinyweb/app.py:46-51`.' "the model's answer, under no fallback heading"
grep -E -q "warning: 1 of [0-9]+ model calls failed, none replaced by the offline policy; the last failure: the reply was cut short" \
    "$T/hiccup.err"
ok $? "stderr says a call failed and why"
if grep -E -q 'decided by the offline policy|no reason recorded' "$T/hiccup.err"; then r=1; else r=0; fi
ok $r "and claims no fallback and no missing reason"
# with steps that fell back too (a Finish planned with nothing read): both reasons
fake_stop
fake_start "$T/hiccup.json" "$T/hiccup2.log"
ask hiccup2 fake-model --config "$T/oneretry.conf"
fake_stop
grep -E -q "steps? decided by the offline policy instead of the model \(1 of [0-9]+ model calls failed\); the last: planning: .*; the last call failure: the reply was cut short" \
    "$T/hiccup2.err"
ok $? "with steps that fell back as well, the fallback's reason and the failed call's are both said"

# ---- the transport sends a call again (a 503, then a stream that stalls
# past the idle limit): the answer is the model's, and stderr says once how
# many calls were sent again and why the last was
for fault in 503 stall; do
    if [ "$fault" = 503 ]; then first='"status": 503, "error": "answer backend hiccup"'; else first='"fault": "hang", "hang_s": 5'; fi
    cat >"$T/retry-$fault.json" <<EOF
{"rules": [
 {"match": "You are the Perception Agent", "content": "{\"summary\": \"start\", \"candidates\": [\"App.dispatch_request\"]}"},
 {"match": "You are the Planning Agent", "content": "{\"action\": \"FindFunction\", \"args\": {\"function_name\": \"dispatch_request\"}}"},
 {"match": "You are the Evidence Filter", "content": "{\"spans\": [{\"path\": \"tinyweb/app.py\", \"start_line\": 46, \"end_line\": 51}]}"},
 {"match": "You are the Evaluation Agent", "content": "{\"value\": 80, \"feedback\": \"read it\"}"},
 {"match": "You are the Answer Agent", "times": 1, $first},
 {"match": "You are the Answer Agent", "content": "It is called in \`tinyweb/app.py:46-51\`."}
]}
EOF
    printf 'retries = 2\ntimeout_idle_ms = 400\n' >"$T/retry.conf"
    fake_start "$T/retry-$fault.json" "$T/retry-$fault.log"
    ask "retry-$fault" fake-model --config "$T/retry.conf" --iterations 1 --json
    fake_stop
    is "$rc" 0 "$fault, then a reply: answered"
    is "$(py "$T/retry-$fault.out" "d['answer'].split(chr(10))[0], d['answered_by'], d['retried_calls'], d['last_retry'] != ''")" \
        'It is called in `tinyweb/app.py:46-51`. model 1 True' "$fault: the model's answer; --json counts the call sent again"
    [ "$fault" = 503 ] && why='HTTP 503 from .*answer backend hiccup' || why='no byte from .* for 400 ms \(the idle limit\)'
    grep -E -q "note: 1 model call was sent again after a failed attempt; the last: $why" "$T/retry-$fault.err"
    ok $? "$fault: stderr says the call was sent again and why"
done

# ---- an answer that cites nothing verified: exit 4
cat >"$T/uncited.json" <<'EOF'
{"rules": [
 {"match": "You are the Perception Agent", "content": "{\"summary\": \"start\", \"candidates\": []}"},
 {"match": "You are the Planning Agent", "content": "{\"action\": \"Finish\", \"args\": {\"answer\": \"from memory\", \"finish_reason\": \"known\"}}"},
 {"match": "You are the Evidence Filter", "content": "{\"spans\": []}"},
 {"match": "You are the Evaluation Agent", "content": "{\"value\": 80, \"feedback\": \"fine\"}"},
 {"match": "You are the Answer Agent", "content": "It is done somewhere in the framework, as usual."}
]}
EOF
fake_start "$T/uncited.json" "$T/uncited.log"
ask uncited fake-model --json
fake_stop
is "$rc" 4 "an answer citing no verified span: exit status 4"
is "$(py "$T/uncited.out" "d['uncited'], d['verified_citations'], d['error']")" "True 0 None" "--json: uncited, no verified citation"
like "$(cat "$T/uncited.err")" "cites no code span the search verified" "stderr says the answer is uncited"

echo "1..$n"
exit $fail
