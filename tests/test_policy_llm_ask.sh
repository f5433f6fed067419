#!/bin/sh
# test_policy_llm_ask.sh: drqa-tui --ask --policy llm on a copy of the pyrepo
# fixture against the scripted fake model server: the engine builds the LLM
# policy, the answer cites the evidence the model was shown, tokens are
# reported, the transcript is written, and the API key appears nowhere but in
# the requests' auth header; the same with --parallel 3.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
KEY=sk-ask-Pq4SECRETaskKey90

cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
dispatch_script "$T/script.json" \
    '`App.dispatch_request` (`tinyweb/app.py:46-51`) calls the view function at `tinyweb/app.py:51`.'
start_fake() { fake_start "$T/script.json" "$T/$1.jsonl"; }   # start_fake LOGNAME
stop_fake() { fake_stop; }
q="Where does App.dispatch_request call the view function?"

for par in 1 3; do
    start_fake "log$par"
    DRQA_API_KEY=$KEY "$DRQA" --ask "$q" --policy llm --api-base "http://127.0.0.1:$port/v1" --model fake-model \
        --parallel "$par" --iterations 4 --json --transcript-dir "$T/tr$par" "$T/repo" >"$T/out$par.json" 2>"$T/err$par"
    rc=$?
    stop_fake
    is "$rc" 0 "--parallel $par: --ask --policy llm succeeds"
    is "$(jget "$T/out$par.json" policy)" llm "--parallel $par: the llm policy answered"
    is "$(jget "$T/out$par.json" citations.0.path):$(jget "$T/out$par.json" citations.0.start_line)-$(jget "$T/out$par.json" citations.0.end_line)" \
        "tinyweb/app.py:46-51" "--parallel $par: the answer cites the span the model was shown"
    jget "$T/out$par.json" answer | grep -q 'calls the view function'
    ok $? "--parallel $par: the model's answer is used"
    in=$(jget "$T/out$par.json" tokens.input)
    ok "$([ "$in" -gt 0 ] && echo 0 || echo 1)" "--parallel $par: input tokens reported ($in)"
    ok "$(cat "$T/out$par.json" "$T/err$par" "$T/tr$par"/* 2>/dev/null | grep -c "$KEY")" \
        "--parallel $par: the key is in no output, error or transcript"
    ok "$(ls "$T/tr$par"/*.json >/dev/null 2>&1; echo $?)" "--parallel $par: a transcript was written"
    bad=$($PYTHON3 -c 'import json, sys
key = sys.argv[2]; bad = 0; n = 0
for line in open(sys.argv[1]):
    r = json.loads(line); n += 1
    if key in r["body"] or key not in r["headers"].get("authorization", ""): bad += 1
    if r["rule"] == "default": bad += 1
print(bad if n else 99)' "$T/log$par.jsonl" "$KEY")
    is "$bad" 0 "--parallel $par: every request recognised by role, the key only in its auth header"
done

echo "1..$n"
exit $fail
