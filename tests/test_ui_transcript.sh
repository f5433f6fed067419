#!/bin/sh
# test_ui_transcript.sh: what the front end writes keeps the engine's facts.
# On the pyrepo fixture (offline policy, tmux 120x30): the worker's own
# transcript names the policy and when it was made; an export of the
# finished search is the engine's tree (rationale, args_key, the UCT history,
# timings, the RNG state equal to the worker's transcript), not a mirror of
# the screen; an export before any question is refused with a reason; one
# while paused says the search has not stopped; the
# Markdown transcript of a search whose text holds escape sequences shows
# them as visible escapes.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
IDX="$T/idx.sqlite"
Q="How are URL rules registered?"

run_ui 120 30 DRQA_TUI_ELAPSED=00:00 -- --policy offline --index "$IDX" --iterations 6 --seed 3 \
    --transcript-dir "$T/tr" "$T/repo" "$Q"
wait_for 'transcript written: .*\.md' 1500
ok $? "the search ends and the worker writes its transcript"
keys w
wait_for 'exported .*-export\.json and '
ok $? "w exports the finished search and names both files"
own=$(ls "$T"/tr/drqa-*.json | grep -v -- '-export\.json$' | head -1)
exp=$(ls "$T"/tr/drqa-*-export.json | head -1)
"$PYTHON3" - "$own" <<'PY'
import json, re, sys
c = json.load(open(sys.argv[1]))["config"]
assert c["policy"] == "offline", c["policy"]
assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$", c["created"] or ""), c["created"]
PY
ok $? "the transcript names the policy and when it was created"
"$PYTHON3" - "$own" "$exp" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["search"]["rng_state"] == b["search"]["rng_state"] and b["search"]["rng_state"] != "1"
assert len(a["nodes"]) == len(b["nodes"])
for x, y in zip(a["nodes"], b["nodes"]):
    for k in ("rationale", "args_key", "uct", "timings", "last_uct", "value", "visits"):
        assert x.get(k) == y.get(k), (x["id"], k, x.get(k), y.get(k))
assert any(n["args_key"] for n in b["nodes"][1:])
assert any(n["uct"] for n in b["nodes"][1:])
assert any(n["timings"]["started_ms"] or n["timings"]["execute_ms"] for n in b["nodes"][1:])
assert b["search"]["stop_reason"] == a["search"]["stop_reason"]
PY
ok $? "the export holds the engine's facts: rationale, args_key, UCT history, timings, RNG state"
keys q
wait_for '^EXIT=0'

# an export before any question
run_ui 120 30 -- --policy offline --index "$IDX" --transcript-dir "$T/tr2" "$T/repo"
wait_for '^Ask:'
keys Escape
keys w
wait_for 'nothing to export yet: ask a question first'
ok $? "an export before any question is refused with a reason"
[ -z "$(ls "$T/tr2" 2>/dev/null)" ]
ok $? "and writes nothing"
keys q
wait_for '^EXIT=0'

# an export of a search under way (paused after one step): the Markdown is
# titled by the question and says the search has not stopped
run_ui 120 30 DRQA_TUI_START_PAUSED=1 -- --policy offline --index "$IDX" --iterations 6 --seed 3 \
    --transcript-dir "$T/tr4" "$T/repo" "$Q"
wait_for 'iter 0/6 .*\| paused'
keys s
wait_for 'iter 1/6 .*\| paused'
keys w
wait_for 'exported .*-export\.json and '
md=$(ls "$T"/tr4/*-export.md | head -1)
[ -n "$md" ] && head -1 "$md" | grep -q -x "# $Q" && grep -q '^1 iteration, 2 nodes, not stopped when this was written' "$md" &&
    ! grep -q 'still running\|stopped by' "$md"
ok $? "an export while paused is titled by the question and says the search has not stopped"
keys q y
wait_for '^EXIT=0'

# escape sequences in a question reach the Markdown only as visible escapes
run_ui 120 30 DRQA_TUI_ELAPSED=00:00 -- --policy offline --index "$IDX" --iterations 2 --seed 3 \
    --transcript-dir "$T/tr3" "$T/repo" "$(printf 'url rules \033]0;pwned\007 \302\233 registered')"
wait_for 'transcript written: .*\.md' 1500
md=$(ls "$T"/tr3/*.md | head -1)
! LC_ALL=C grep -q "$(printf '\033')" "$md" && ! LC_ALL=C grep -q "$(printf '\302\233')" "$md" &&
    grep -F -q '\x1b]0;pwned\x07' "$md"
ok $? "the Markdown transcript shows ESC, OSC and C1 as visible escapes"
keys q
wait_for '^EXIT=0'
echo "1..$n"
exit $fail
