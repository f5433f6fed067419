#!/bin/sh
# test_ui_golden.sh: the screen of a run (the pyrepo fixture, the offline
# policy, seed 1, 10 iterations, an 80x24 terminal, the elapsed time fixed by
# DRQA_TUI_ELAPSED) checked in two parts. The engine: every tree row shows
# the numbers the worker's transcript records for its node (ids, depth, N,
# Q, UCT, status, best path; tests/golden_screen.py). The layout: the screen
# with what the policy decides masked (actions, texts, evidence, answer)
# equals the golden file, so retuning the policy changes neither. A
# difference is shown as a diff. To accept a new layout: UPDATE_GOLDEN=1
# make check TESTS=tests/test_ui_golden.sh (writes
# tests/golden/ui-offline-80x24.txt).
set -u
. "$top_srcdir/tests/ui_tmux.sh"
GOLD="$top_srcdir/tests/golden/ui-offline-80x24.txt"
# a copy, so that the repository's name and index are the same wherever it runs
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/pyrepo"
run_ui 80 24 DRQA_TUI_ELAPSED=00:00 NO_COLOR=1 -- --policy offline --index "$T/idx.sqlite" \
    --iterations 10 --seed 1 --transcript-dir "$T/tr" "$T/pyrepo" "Which class maps names to session backends?"
wait_for 'transcript written: .*\.md' 1500
ok $? "the search ends and the worker writes its transcript"
screen >"$T/screen.txt"
"$PYTHON3" "$top_srcdir/tests/golden_screen.py" "$T/screen.txt" "$(ls "$T"/tr/drqa-*.json | head -1)" \
    >"$T/got.txt" 2>"$T/engine.txt"
st=$?
sed 's/^/# /' "$T/engine.txt"
ok $st "every tree row shows the transcript's numbers for its node"
if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$T/got.txt" "$GOLD"
    echo "# wrote $GOLD"
fi
diff -u "$GOLD" "$T/got.txt" >"$T/diff.txt"
st=$?
sed 's/^/# /' "$T/diff.txt"
ok $st "the masked screen (the layout) equals tests/golden/ui-offline-80x24.txt"
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
