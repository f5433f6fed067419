#!/bin/sh
# test_ui_evidence.sh: Enter in the Evidence pane opens the span in view in
# the file view (tmux 120x40, the pyrepo fixture, offline policy): the first
# span at first, the next one once the pane is scrolled down to it; Esc
# gives the focus back to the Evidence pane.

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
wait_for "│ $hdr[ ━]+line [0-9]+/[0-9]+ +Esc closes"
ok $? "Enter in the Evidence pane opens the span's file view ($hdr)"
keys Escape
wait_for '│ Evidence'
ok $? "Esc closes the file view (the Evidence pane has the focus again)"
# scrolled down to the next span, Enter opens that one, not the first:
# j scrolls the pane a row at a time until its top row is another header
top_row() {
    awk -F'│' '/│ Evidence/ {getline; print $2; exit}' "$T/screen"
}
hdr2= i=0
while [ $i -lt 80 ]; do
    keys j
    sleep 0.05
    screen >"$T/screen"
    h=$(top_row | sed -n 's/^ \([A-Za-z0-9_./-]*\.py:[0-9]*-[0-9]*\).*$/\1/p')
    if [ -n "$h" ] && [ "$h" != "$hdr" ]; then hdr2=$h; break; fi
    i=$((i + 1))
done
[ -n "$hdr2" ]
ok $? "scrolling the evidence brings the next span to the top ($hdr2)"
keys Enter
wait_for "│ $hdr2[ ━]+line [0-9]+/[0-9]+ +Esc closes"
ok $? "scrolled to it, Enter opens the second span ($hdr2)"
keys Escape
wait_for '│ Evidence'
keys q
wait_for '^EXIT=0'
echo "1..$n"
exit $fail
