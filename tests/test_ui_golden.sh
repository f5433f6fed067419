#!/bin/sh
# test_ui_golden.sh: golden screens that pin the front end, not the offline
# policy's choices.
#
# Replay: tests/golden/ui-replay.json, a recorded transcript (11 nodes), is
# opened with --replay at 80x24 and the whole screen -- the root selected,
# then node 1 with its evidence -- equals tests/golden/ui-replay-80x24.txt,
# character for character. The tree, numbers, texts and answer come from the
# file, so no change to a policy can change them; only the front end can.
#
# Live: a search on the pyrepo fixture (offline policy, seed 1, 10
# iterations, the elapsed time fixed by DRQA_TUI_ELAPSED) checked in two
# parts that hold whatever tree the policy grows. The engine: every tree row
# shows the numbers the worker's transcript records for its node (ids,
# depth, N, Q, UCT, status, best path; tests/golden_screen.py). The layout:
# the screen with what the policy decides masked (the tree's rows, texts,
# evidence, answer, the status line's numbers) equals
# tests/golden/ui-offline-80x24.txt.
#
# A difference is shown as a diff. To accept a new screen: UPDATE_GOLDEN=1
# make check TESTS=tests/test_ui_golden.sh (writes both golden files).
set -u
. "$top_srcdir/tests/ui_tmux.sh"
GOLD="$top_srcdir/tests/golden/ui-offline-80x24.txt"
RGOLD="$top_srcdir/tests/golden/ui-replay-80x24.txt"
RTR="$top_srcdir/tests/golden/ui-replay.json"

# golden NAME FILE GOT: compares GOT with the golden FILE (or writes it)
golden() {
    if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
        cp "$3" "$2"
        echo "# wrote $2"
    fi
    diff -u "$2" "$3" >"$T/diff.txt"
    st=$?
    sed 's/^/# /' "$T/diff.txt"
    ok $st "$1"
}

# ---- replay of the recorded transcript
run_ui 80 24 NO_COLOR=1 -- --replay "$RTR"
wait_for '\| replay'
ok $? "--replay opens the recorded transcript"
wait_for '│ Answer'
screen >"$T/r0.txt"
"$PYTHON3" "$top_srcdir/tests/golden_screen.py" "$T/r0.txt" "$RTR" >/dev/null 2>"$T/engine.txt"
st=$?
sed 's/^/# /' "$T/engine.txt"
ok $st "replay: every tree row shows the recorded numbers for its node"
keys j
wait_for '│ Node 1 '
# the frame is drawn pane by pane: wait until the evidence is there too
wait_for '│ tinyweb/'
screen >"$T/r1.txt"
{ cat "$T/r0.txt"; echo "---- j"; cat "$T/r1.txt"; } >"$T/replay.txt"
golden "the replayed screens equal tests/golden/ui-replay-80x24.txt" "$RGOLD" "$T/replay.txt"
keys q
wait_for '^EXIT=0'

# ---- a live search
# a copy, so that the repository's name and index are the same wherever it runs
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/pyrepo"
run_ui 80 24 DRQA_TUI_ELAPSED=00:00 NO_COLOR=1 -- --policy offline --index "$T/idx.sqlite" \
    --iterations 10 --seed 1 --transcript-dir "$T/tr" "$T/pyrepo" "Which class maps names to session backends?"
# the transcript is written just before the search is said to be done
wait_screen 1500 screen_has 'transcript written: .*\.md' '\| done: '
ok $? "the search ends and the worker writes its transcript"
screen >"$T/screen.txt"
"$PYTHON3" "$top_srcdir/tests/golden_screen.py" "$T/screen.txt" "$(ls "$T"/tr/drqa-*.json | head -1)" \
    >"$T/got.txt" 2>"$T/engine.txt"
st=$?
sed 's/^/# /' "$T/engine.txt"
ok $st "every tree row shows the transcript's numbers for its node"
golden "the masked screen (the layout) equals tests/golden/ui-offline-80x24.txt" "$GOLD" "$T/got.txt"
# the front end answers as --ask does: the same question, seed and budget give
# the same citations (both answer from the whole tree)
"$DRQA" --policy offline --index "$T/idx.sqlite" --iterations 10 --seed 1 --json \
    --ask "Which class maps names to session backends?" "$T/pyrepo" >"$T/ask.json" 2>/dev/null
ncites=$("$PYTHON3" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['citations']))" "$T/ask.json")
grep -q "cite 1/$ncites\$" "$T/screen.txt"
ok $? "the answer pane holds as many citations as --ask gives ($ncites)"
keys q
wait_for '^EXIT=0'
ok $? "q quits at once when the search is done"
echo "1..$n"
exit $fail
