#!/bin/sh
# test_ui_golden.sh: the screen of a deterministic run compared with a golden
# file: the pyrepo fixture, the offline policy, seed 1, 10 iterations, an
# 80x24 terminal, the elapsed time fixed (DRQA_TUI_ELAPSED). A difference is
# shown as a diff. To accept a new screen: UPDATE_GOLDEN=1 make check
# TESTS=tests/test_ui_golden.sh (writes tests/golden/ui-offline-80x24.txt).
set -u
. "$top_srcdir/tests/ui_tmux.sh"
GOLD="$top_srcdir/tests/golden/ui-offline-80x24.txt"
# a copy, so that the repository's name and index are the same wherever it runs
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/pyrepo"
run_ui 80 24 DRQA_TUI_ELAPSED=00:00 NO_COLOR=1 -- --policy offline --index "$T/idx.sqlite" \
    --iterations 10 --seed 1 "$T/pyrepo" "Which class maps names to session backends?"
wait_for '\| done: '
ok $? "the search ends"
screen >"$T/got.txt"
if [ "${UPDATE_GOLDEN:-}" = 1 ]; then
    cp "$T/got.txt" "$GOLD"
    echo "# wrote $GOLD"
fi
diff -u "$GOLD" "$T/got.txt" >"$T/diff.txt"
st=$?
sed 's/^/# /' "$T/diff.txt"
ok $st "the screen equals tests/golden/ui-offline-80x24.txt"
# the front end answers as --ask does: the same question, seed and budget give
# the same citations (both answer from the whole tree)
"$DRQA" --policy offline --index "$T/idx.sqlite" --iterations 10 --seed 1 --json \
    --ask "Which class maps names to session backends?" "$T/pyrepo" >"$T/ask.json" 2>/dev/null
ncites=$("$PYTHON3" -c "import json,sys; print(len(json.load(open(sys.argv[1]))['citations']))" "$T/ask.json")
grep -q "cite 1/$ncites\$" "$T/got.txt"
ok $? "the answer pane holds as many citations as --ask gives ($ncites)"
keys q
wait_for '^EXIT=0'
ok $? "q quits at once when the search is done"
echo "1..$n"
exit $fail
