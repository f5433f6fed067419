#!/bin/sh
# The LLM fault matrix end to end: --ask and --batch with --policy llm
# against tests/fake_llm.py answering every call with one fault -- a hang
# past the timeout, 429 with Retry-After, 500, connection refused, a body
# that is not JSON, the JSON wrapped in prose, a truncated body, a 10 MB
# body, empty choices. Each fault ends as the man page (DIAGNOSTICS) says it
# must: a transient one (timeout, 429, 5xx, a reply that is not JSON, too
# large, with no choices) takes the offline decision for the step, but when
# it meets every call no model call succeeded, so --ask prints no answer
# (the offline policy's is not passed off as the model's), names the cause
# on stderr and exits 3, and each --batch line carries it (exit 3); a
# connection that fails before any call succeeded (refused, or a reply cut
# short) stops the search at once, with the same end. JSON wrapped in prose
# is read (exit 0). One failed call among good ones takes the offline
# decision for that step only (exit 0). Either way --batch writes one
# line per question and a transcript per question. Retries are made few
# through the config file (none but for the 429 case), and the total timeout
# short for the hanging server, so the matrix runs quickly.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
export DRQA_API_KEY=sk-test-faults
mkdir -p "$XDG_CONFIG_HOME/drqa-tui"
cat >"$XDG_CONFIG_HOME/drqa-tui/config" <<'CFG'
timeout_connect_ms = 500
timeout_total_ms = 15000
retries = 0
backoff_ms = 10
backoff_max_ms = 50
retry_after_max_ms = 300
CFG
R="$T/repo"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$R"
"$DRQA" --index "$T/index.sqlite" --no-progress --quiet --index-only "$R" >/dev/null 2>&1
printf '%s\n' '{"id": "q1", "question": "Where is the session flushed?"}' \
    '{"id": "q2", "question": "Which class dispatches requests to views?"}' >"$T/questions.jsonl"

# the replies of a model that works, by role (used by the prose case)
GOOD='{"match": "You are the Planning Agent", "content": "{\"action\": \"FindFunction\", \"args\": {\"function_name\": \"dispatch_request\"}}"},
 {"match": "You are the Answer Agent", "content": "{\"answer\": \"`App.dispatch_request` is in `tinyweb/app.py:46-51`.\"}"},
 {"match": "You are the Perception Agent", "content": "{\"summary\": \"start\", \"candidates\": [\"App\"]}"},
 {"match": "You are the Evaluation Agent", "content": "{\"value\": 80, \"feedback\": \"ok\"}"},
 {"match": "You are the Evidence Filter", "content": "{\"spans\": []}"}'

start_fake() {   # start_fake SCRIPT_JSON
    printf '%s\n' "$1" >"$T/script.json"
    fake_start "$T/script.json" "$T/fake.jsonl"
}
stop_fake() { fake_stop; }

# run NAME BASE WANT: --ask and --batch against BASE, checking the contract
# above: WANT 0, answers, or 3, no model call succeeded (errors)
run() {
    name=$1 base=$2 want=$3
    "$DRQA" --index "$T/index.sqlite" --no-progress --policy llm --api-base "$base" --model fake-model \
        --iterations 1 --ask "Where is the session flushed?" --transcript-dir "$T/tr-$name-ask" "$R" \
        >"$T/$name.out" 2>"$T/$name.err"
    rc=$?
    if [ "$want" = 0 ]; then
        is "$rc" 0 "$name: --ask answers (exit 0)"
        test -s "$T/$name.out"
        ok $? "$name: the answer is on stdout"
    else
        is "$rc" 3 "$name: --ask stops (exit 3: no model call succeeded)"
        grep -q '^drqa-tui: no model call succeeded' "$T/$name.err"
        ok $? "$name: stderr says why"
        is "$(cat "$T/$name.out")" "" "$name: no answer on stdout (none of the model's)"
    fi
    [ "$rc" = "$want" ] || sed 's/^/#   stderr: /' "$T/$name.err" | head -4
    "$DRQA" --index "$T/index.sqlite" --no-progress --policy llm --api-base "$base" --model fake-model \
        --iterations 1 --batch "$T/questions.jsonl" --out "$T/$name.jsonl" --transcript-dir "$T/tr-$name" "$R" \
        >"$T/$name.bout" 2>"$T/$name.berr"
    brc=$?
    res=$("$PYTHON3" - "$T/$name.jsonl" <<'PY'
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
ids = sorted(str(d.get('id')) for d in lines)
ended = all((d.get('answer') or '').strip() or (d.get('error') or '').strip() for d in lines)
failed = sum(1 for d in lines if d.get('error'))
print(len(lines), ','.join(ids), ended, failed)
PY
)
    set -- $res
    is "$1 $2 $3" "2 q1,q2 True" "$name: --batch writes both questions, each with an answer or an error"
    is "$4" $([ "$want" = 0 ] && echo 0 || echo 2) "$name: --batch lines with an error"
    is "$brc" "$want" "$name: --batch exit status"
    ntr=$(ls "$T/tr-$name/" 2>/dev/null | grep -c '\.json$')
    is "$ntr" 2 "$name: a transcript per question"
    [ "$4" = 0 ] || { echo "#   errors:"; grep -o '"error":"[^"]*"' "$T/$name.jsonl" | head -2 | sed 's/^/#     /'; }
}

# the total timeout is short for the hanging server alone: a loaded machine
# may take longer than that over the replies the other cases want answered
start_fake '{"default": {"fault": "hang", "hang_s": 2}}'
sed -i 's/^timeout_total_ms = .*/timeout_total_ms = 700/' "$XDG_CONFIG_HOME/drqa-tui/config"
run timeout "http://127.0.0.1:$port/v1" 3; stop_fake
sed -i 's/^timeout_total_ms = .*/timeout_total_ms = 15000/' "$XDG_CONFIG_HOME/drqa-tui/config"
start_fake '{"default": {"status": 429, "retry_after": "1", "error": "rate limited"}}'
sed -i 's/^retries = 0/retries = 1/' "$XDG_CONFIG_HOME/drqa-tui/config"
run http429 "http://127.0.0.1:$port/v1" 3
sed -i 's/^retries = 1/retries = 0/' "$XDG_CONFIG_HOME/drqa-tui/config"
is "$(grep -c '"path"' "$T/fake.jsonl" | awk '{print ($1 > 1) ? "retried" : "not retried"}')" retried "http429: the client retried after Retry-After"
stop_fake
start_fake '{"default": {"status": 500, "error": "internal"}}'
run http500 "http://127.0.0.1:$port/v1" 3; stop_fake
run refused "http://127.0.0.1:1/v1" 3
# nothing was learnt from the repository: not an answer, a failure that says why
is "$rc" 3 "refused: no model call succeeded, so --ask exits 3"
grep -q '^drqa-tui: no model call succeeded (.*); the last: .*cannot connect' "$T/refused.err"
ok $? "refused: stderr says no model call succeeded and names the connection error"
is "$(grep -c '"error":"no model call succeeded' "$T/refused.jsonl")" 2 "refused: so does each batch line"
# one failed step among good ones: the answer stands and says what was left out
start_fake "{\"rules\": [{\"match\": \"You are the Perception Agent\", \"status\": 500, \"error\": \"boom\", \"times\": 1},
 $GOOD]}"
"$DRQA" --index "$T/index.sqlite" --no-progress --policy llm --api-base "http://127.0.0.1:$port/v1" --model fake-model \
    --iterations 3 --ask "Where is the session flushed?" --transcript-dir "$T/tr-partial" "$R" \
    >"$T/partial.out" 2>"$T/partial.err"
is "$?" 0 "partial: one failed call among three steps, --ask answers (exit 0)"
$PYTHON3 - "$T"/tr-partial/*.json >"$T/partial.nodes" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
for n in t["nodes"][1:]:
    print(n["id"], n["status"], ",".join(n.get("fallback") or []), n.get("notes") or "")
PY
grep -q '^1 done perceive perception: the model call failed (.*500.*boom.*); used the offline report' "$T/partial.nodes"
ok $? "partial: the failed perception call took the offline report, marked on the node with its cause"
is "$(grep -c ' error ' "$T/partial.nodes")" 0 "partial: no step failed: a server hiccup is not a failed step"
stop_fake
start_fake "{\"rules\": [{\"match\": \"You are the Perception Agent\", \"status\": 500, \"error\": \"boom\", \"times\": 1},
 $GOOD]}"
"$DRQA" --index "$T/index.sqlite" --no-progress --policy llm --api-base "http://127.0.0.1:$port/v1" --model fake-model \
    --iterations 3 --json --ask "Where is the session flushed?" "$R" >"$T/partial.json" 2>/dev/null
# (a model that plans one action only also leaves the steps that would repeat
# it to the fallback: at least the failed call's step is counted)
is "$($PYTHON3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["fallback_steps"] >= 1, d["failed_steps"])' "$T/partial.json")" \
   "True 0" "partial: --json counts the steps the fallback decided, and no failed step"
stop_fake
start_fake '{"default": {"fault": "malformed"}}'
run malformed "http://127.0.0.1:$port/v1" 3; stop_fake
start_fake "{\"rules\": [$(printf '%s' "$GOOD" | sed 's/"content"/"fault": "prose", "content"/g')]}"
run prose "http://127.0.0.1:$port/v1" 0
grep -q '"function_name":.*"dispatch_request"' "$T/tr-prose-ask/"*.json
ok $? "prose: the plan found in prose was followed (FindFunction dispatch_request in the transcript)"
stop_fake
start_fake '{"default": {"fault": "truncate", "content": "{\"value\": 50}"}}'
run truncated "http://127.0.0.1:$port/v1" 3; stop_fake
start_fake '{"default": {"fault": "oversize"}}'
run oversize "http://127.0.0.1:$port/v1" 3; stop_fake
start_fake '{"default": {"fault": "empty_choices"}}'
run empty_choices "http://127.0.0.1:$port/v1" 3; stop_fake

echo "1..$n"
exit $fail
