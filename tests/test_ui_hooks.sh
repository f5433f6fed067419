#!/bin/sh
# test_ui_hooks.sh: the test hooks are in the test build only. drqa-tui holds
# none of their variable names (DRQA_TUI_*, DRQA_TEST_*) and, given them all,
# behaves as without: its search is not paused, its clock not replaced, its
# index update and its loop not held. tests/drqa-tui-hooks holds every name and is paused
# with the clock replaced, so that the checks can fail.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
HOOKS="DRQA_TUI_START_PAUSED DRQA_TUI_ELAPSED DRQA_TEST_PHASE_HOLD DRQA_TEST_SWAP DRQA_TEST_KILL_AFTER DRQA_TEST_HOLD DRQA_TEST_EDGE_BUDGET DRQA_TEST_WAIT_HOLD
DRQA_TEST_EARLY_FIT DRQA_TEST_DERIVE_PLACE DRQA_TEST_HELD_BUDGET DRQA_TEST_TS_ARENA"
for v in $HOOKS; do
    ! LC_ALL=C grep -a -q "$v" "$DRQA"
    ok $? "drqa-tui does not hold the name $v"
    LC_ALL=C grep -a -q "$v" "$DRQA_HOOKS"
    ok $? "the test build holds it"
done

Q="How are URL rules registered?"
mkdir "$T/hold" "$T/wait"
: >"$T/wait/hold"   # the test build's loop would wait while this is there
test_build=$DRQA_HOOKS
DRQA_HOOKS=$DRQA   # run_ui takes the test build for a hook: not here
run_ui 100 30 DRQA_TUI_START_PAUSED=1 DRQA_TUI_ELAPSED=77:77 DRQA_TEST_PHASE_HOLD="$T/hold" \
    DRQA_TEST_WAIT_HOLD="$T/wait" -- --policy offline \
    --index "$T/idx.sqlite" --iterations 3 "$FIX" "$Q"
wait_for '\| done: ' 1500
ok $? "drqa-tui given every hook indexes (not held) and searches to the end (not paused)"
! grep -q '77:77' "$T/screen"
ok $? "its status line shows the clock, not DRQA_TUI_ELAPSED"
keys q
wait_for '^EXIT=0'
ok $? "and quits"

DRQA_HOOKS=$test_build
run_ui 100 30 DRQA_TUI_START_PAUSED=1 DRQA_TUI_ELAPSED=77:77 -- --policy offline --index "$T/idx.sqlite" \
    --iterations 3 "$FIX" "$Q"
wait_for '77:77 \| paused'
ok $? "the test build starts paused and shows DRQA_TUI_ELAPSED"
keys q
wait_for 'Quit\? \(y/n\)' && keys y && wait_for '^EXIT=0'
ok $? "and quits"
echo "1..$n"
exit $fail
