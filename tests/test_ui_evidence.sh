#!/bin/sh
# test_ui_evidence.sh: Enter in the Evidence pane opens the span in view in
# the file view (tmux 120x40, the pyrepo fixture, offline policy).

set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
run_ui 120 40 DRQA_TUI_ELAPSED=00:00 -- --policy offline --index "$T/idx.sqlite" --iterations 4 --seed 7 \
    "$FIX" "How are URL rules registered?"
wait_for '\| done: ' 1500
ok $? "the search ends"
keys g j
wait_for '│ Node 1 '
hdr=$(sed -n 's/^.*│ \([A-Za-z0-9_./-]*\.py:[0-9]*-[0-9]*\).*$/\1/p' "$T/screen" | head -1)
[ -n "$hdr" ]
ok $? "node 1's evidence starts with a span header ($hdr)"
keys Tab Tab
wait_for '│ Evidence'
keys Enter
start=$(echo "${hdr##*:}" | cut -d- -f1)
wait_for "│ $hdr +line [0-9]+/[0-9]+ +Esc closes"
ok $? "Enter in the Evidence pane opens the span's file view ($hdr)"
keys Escape
wait_for '│ Evidence'
ok $? "Esc closes the file view"
keys q
wait_for '^EXIT=0'
echo "1..$n"
exit $fail
