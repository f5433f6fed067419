#!/bin/sh
# test_ui_term.sh: a terminal that cannot address the cursor is refused (in
# tmux, so stdin and stdout are terminals): TERM=dumb and an empty TERM each
# exit 2 with a message saying what to do, instead of drawing on one line.
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
echo "1..$n"
exit $fail
