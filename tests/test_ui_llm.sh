#!/bin/sh
# test_ui_llm.sh: the front end with --policy llm against the scripted fake
# model server (tests/fake_llm.py), in tmux at 80x24. While a model request
# hangs in flight, keys are still answered (the help screen opens and
# closes) and quitting cancels the request and exits; with replies, the
# model's answer, its citation and the token counts reach the screen, and the
# worker's transcript names the policy, model, provider and API base.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
"$DRQA" --index-only --no-progress --index "$T/idx.sqlite" "$T/repo" >/dev/null 2>&1
Q="Where does App.dispatch_request call the view function?"

cat >"$T/hang.json" <<'JSON'
{"rules": [
 {"match": "You are the Perception Agent", "content": "{\"summary\": \"start\", \"candidates\": []}"},
 {"match": "You are the Planning Agent", "fault": "hang", "hang_s": 120}
]}
JSON
fake_start "$T/hang.json" "$T/hang.jsonl"
run_ui 80 24 DRQA_API_KEY=sk-ui-test -- --policy llm --api-base "http://127.0.0.1:$port/v1" \
    --model fake-model --iterations 4 --index "$T/idx.sqlite" "$T/repo" "$Q"
wait_for '\| llm fake-model \|.*\| searching'
ok $? "the status line names the llm policy and its model"
i=0
while ! grep -q 'You are the Planning Agent' "$T/hang.jsonl" 2>/dev/null && [ $i -lt 500 ]; do
    sleep 0.02; i=$((i + 1))
done
grep -q 'You are the Planning Agent' "$T/hang.jsonl"
ok $? "a planning request is in flight (the fake server holds it)"
keys '?'
wait_for 'Help: drqa-tui keys'
ok $? "the help screen opens while the request hangs"
keys Escape
wait_for '^ Tree '
ok $? "and closes again"
keys q
wait_for 'Quit\? \(y/n\)'
ok $? "quitting asks, since the search runs"
keys y
wait_for '^EXIT=0'
ok $? "y cancels the request in flight and exits 0"
fake_stop

dispatch_script "$T/ok.json" 'App.dispatch_request calls the view function at tinyweb/app.py:51.'
printf 'price.fake-model.input = 2\nprice.fake-model.output = 8\n' >"$T/prices.conf"
fake_start "$T/ok.json" "$T/ok.jsonl"
# run_llm CONFIG TRANSCRIPT-DIR [COLUMNS]: the front end on the fake server (80x24 by default)
run_llm() {
    run_ui "${3:-80}" 24 DRQA_API_KEY=sk-ui-test -- --policy llm --api-base "http://127.0.0.1:$port/v1" \
        --model fake-model --config "$1" --iterations 4 --index "$T/idx.sqlite" --transcript-dir "$2" "$T/repo" "$Q"
}
run_llm "$T/prices.conf" "$T/tr"
wait_for '\| done: (finish|iterations)'
ok $? "the search ends on the model's Finish (a Finish refused for nothing read took the offline plan)"
wait_for 'transcript written: .*\.md'
"$PYTHON3" - "$(ls "$T"/tr/drqa-*.json | head -1)" "http://127.0.0.1:$port/v1" <<'PY'
import json, re, sys
c = json.load(open(sys.argv[1]))["config"]
want = {"policy": "llm", "model": "fake-model", "provider": "openai", "api_base": sys.argv[2]}
bad = {k: c.get(k) for k in want if c.get(k) != want[k]}
assert not bad, bad
assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", c.get("created") or ""), c.get("created")
PY
ok $? "its transcript names the policy, model, provider, API base and when it was made"
grep -q 'App.dispatch_request calls the' "$T/screen"
ok $? "the model's answer is shown"
grep -E -q 'tok [1-9][0-9]*k?/[1-9][0-9]*k? \$0\.[0-9]{4} ' "$T/screen"
ok $? "the status line counts the tokens spent and their cost"
grep -E -q '^. +.?[2-4] Finish +1 ' "$T/screen" && grep -E -q '^. +.?1 (FindFunction|Func) ' "$T/screen"
ok $? "the tree holds the planned FindFunction and the Finish"
grep -E -q '\| done: [a-z]+ \| offline [1-9]/[1-9]' "$T/screen"
ok $? "the status line counts the steps the offline policy decided and the failed model calls"
# the node pane zoomed (z): the root's ledger, one paragraph wrapped at the
# pane's width (where a row breaks depends on the figures), read joined, and
# once its last row, the total and its cost, is drawn
ledger() { sed -n '/^ Model calls:/,/^ *$/p' "$T/screen" | tr '\n' ' ' | tr -s ' '; }
root_ledger() {
    screen_has '^ Node [0-9]+ \[zoom: z\]' &&
        ledger | grep -E -q 'total [0-9]+ calls [0-9.k]+ in [0-9.k]+ out \$0\.[0-9]{4} $' &&
        ledger | grep -E -q 'planning [0-9]+ calls [0-9.k]+ in [0-9.k]+ out \$0\.[0-9]{4};' &&
        ledger | grep -E -q 'evaluation [0-9]+ calls [0-9.k]+ in [0-9.k]+ out \$0\.[0-9]{4};'
}
keys g Tab z G
wait_until root_ledger
ok $? "the root's node pane shows the run's ledger per role"
# Tab moves the focus through the panes of the layout last drawn: the keys
# after z wait until the screen without the zoom is drawn, or read in one go
# with it (a loaded machine) they go round the zoomed layout's one pane
keys z BTab
wait_for '^ Tree '
keys b
wait_for '^ Tree [^│]*━'
focus_pane Answer && keys Enter && wait_for '│ tinyweb/app.py:[0-9]+-[0-9]+[ ━]+line [0-9]+/85'
ok $? "the citation opens the file view of tinyweb/app.py"
keys Escape q
wait_for '^EXIT=0'
ok $? "quits at once when done"
fake_stop

# the answer call fails while the rest works: the Answer pane's title says
# whose answer it shows, as --ask's heading does, and so do the transcripts
dispatch_script "$T/noans.json" 'unused'
"$PYTHON3" - "$T/noans.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["rules"] = [r for r in d["rules"] if "Answer Agent" not in r["match"]]
d["rules"].append({"match": "You are the Answer Agent", "status": 500, "error": "answer backend down"})
json.dump(d, open(sys.argv[1], "w"))
PY
printf 'retries = 0\n' >"$T/noretry.conf"
fake_start "$T/noans.json" "$T/noans.jsonl"
run_llm "$T/noretry.conf" "$T/tr2"
wait_for 'transcript written: .*\.md'
ok $? "the search ends and its transcripts are written"
grep -q "The offline policy's answer" "$T/screen"
ok $? "the Answer pane is titled as the offline policy's answer, not the model's"
grep -q "the offline policy wrote this answer" "$T"/tr2/drqa-*.md &&
    "$PYTHON3" -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["answer"].get("written_by") != "offline")' \
        "$(ls "$T"/tr2/drqa-*.json | head -1)"
ok $? "the Markdown and JSON transcripts say the offline policy wrote it"
keys q
wait_for '^EXIT=0'
fake_stop

# the answer's first attempt gets a 503 and the transport sends it again: the
# status line says a call was sent again, as --ask does on stderr
dispatch_script "$T/again.json" 'App.dispatch_request calls the view function at tinyweb/app.py:51.'
"$PYTHON3" - "$T/again.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
i = next(k for k, r in enumerate(d["rules"]) if "Answer Agent" in r["match"])
d["rules"].insert(i, {"match": "You are the Answer Agent", "times": 1, "status": 503, "error": "busy"})
json.dump(d, open(sys.argv[1], "w"))
PY
printf 'retries = 2\n' >"$T/retry.conf"
fake_start "$T/again.json" "$T/again.jsonl"
run_llm "$T/retry.conf" "$T/tr3" 140   # wide enough for the whole status line
wait_for 'calls failed, 1 sent again .*\| done: '
ok $? "a call the transport sent again is counted on the status line"
keys q
wait_for '^EXIT=0'
fake_stop
echo "1..$n"
exit $fail
