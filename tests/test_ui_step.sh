#!/bin/sh
# test_ui_step.sh: s and f do what they say (tmux 100x30, the pyrepo
# fixture, offline policy): under --parallel 3, s runs one iteration, not a
# batch of three; with no question, and after the search is done, s and f
# are refused with the reason instead of announcing what will not happen,
# and the message line holds that reason alone (no other reason appended).
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
run_ui 100 30 DRQA_TUI_START_PAUSED=1 DRQA_TUI_ELAPSED=00:00 -- --policy offline --index "$T/idx.sqlite" \
    --parallel 3 --iterations 6 --seed 7 "$FIX" "How are URL rules registered?"
wait_for '\| paused'
keys s
wait_for 'iter 1/6.*paused'
ok $? "under --parallel 3, s runs iteration 1 and pauses"
sleep 0.3
screen >"$T/screen"
grep -q 'iter 1/6' "$T/screen" && grep -q '^ Tree 2 ' "$T/screen"
ok $? "and only that one: the tree has the root and one node"
keys s
wait_for 'iter 2/6.*paused'
ok $? "the next s runs iteration 2"
keys p
wait_for '\| done: '
ok $? "resumed, the search runs to its end"
keys s
wait_for '^nothing to step: the search is done \(iterations\); a asks a new question *$'
ok $? "s after the end says the search is done, and why"
keys f
wait_for '^nothing to finish: the search is done \(iterations\); a asks a new question *$'
ok $? "so does f"
keys q
wait_for '^EXIT=0'

run_ui 100 30 -- --policy offline --index "$T/idx.sqlite" "$FIX"
wait_for '^Ask:'
keys Escape
wait_for '\| idle'
keys s
wait_for '^nothing to step: ask a question first \(a\) *$'
ok $? "s with no question is refused with the reason"
keys f
wait_for '^nothing to finish: ask a question first \(a\) *$'
ok $? "so is f"
keys q
wait_for '^EXIT=0'
echo "1..$n"
exit $fail
