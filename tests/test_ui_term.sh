#!/bin/sh
# test_ui_term.sh: a terminal that cannot address the cursor is refused (in
# tmux, so stdin and stdout are terminals): TERM=dumb and an empty TERM each
# exit 2 with a message saying what to do, instead of drawing on one line.
# Below 60x16 the screen says the terminal is too small instead of drawing
# columns without ids, and the panes come back when it grows.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
run_ui 80 24 TERM=dumb -- --policy offline --index "$T/idx.sqlite" "$FIX" "q"
wait_for '^EXIT=2'
ok $? "TERM=dumb exits 2"
grep -q "the terminal 'dumb' (TERM) cannot move the cursor" "$T/stderr"
ok $? "and says the terminal cannot move the cursor"
run_ui 80 24 TERM= -- --policy offline --index "$T/idx.sqlite" "$FIX" "q"
wait_for '^EXIT=2'
ok $? "an unset TERM exits 2"
grep -q "TERM is not set" "$T/stderr"
ok $? "and says TERM is not set"
run_ui 80 24 TERM=no-such-terminal-xyz -- --policy offline --index "$T/idx.sqlite" "$FIX" "q"
wait_for '^EXIT=2'
ok $? "an unknown TERM exits 2"
grep -q "not in the terminfo database" "$T/stderr"
ok $? "and says so"
run_ui 40 12 DRQA_TUI_START_PAUSED=1 -- --policy offline --index "$T/idx.sqlite" "$FIX" "How are URL rules registered?"
# both lines waited for: a capture can come between the two being drawn
wait_for 'terminal too small \(40x12\):' && wait_for '^drqa-tui needs at least 60x16'
ok $? "at 40x12 the screen says the terminal is too small"
! grep -q 'Tree' "$T/screen"
ok $? "and draws no pane"
resize 100 30
wait_for '^ Tree .* N +Q +UCT st'
ok $? "at 100x30 the panes come back"
keys q y
wait_for '^EXIT=0'
echo "1..$n"
exit $fail
