#!/bin/sh
# test_ui_colour_mouse.sh: colours and the mouse in a real terminal (tmux,
# 80x24) on the pyrepo fixture with the offline policy. With a colour TERM
# the screen carries colour SGR sequences (status line, selected node); with
# NO_COLOR=1 it carries none (bold/reverse only); with TERM=vt100 the front
# end falls back to monochrome and still draws the tree. The mouse, as xterm
# SGR (1006) reports: a click selects a tree node (press selects, release
# does not fold), wheel-down scrolls the pane under the pointer, and a click
# on a citation opens the cited span. The mouse runs use TERM=xterm-256color,
# whose kmous is \E[< (SGR); tmux-256color and screen-256color here declare
# kmous=\E[M (X10), so ncurses would not decode SGR reports under them.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
IDX="$T/idx.sqlite"
ESC=$(printf '\033')
# an SGR that sets a colour (30-37, 40-47, 90-97, 100-107, 38;5/2, 48;5/2),
# alone or within a combined SGR; 39/49 (default colours) do not count
COLOUR_SGR="$ESC\\[([0-9]*;)*(3[0-7]|4[0-7]|9[0-7]|10[0-7]|38;[25]|48;[25])[;m]"
# colour_screen: the screen with its attributes, into $T/escreen
colour_screen() { tm capture-pane -p -e -t "$S" >"$T/escreen"; }
# click COL ROW: an SGR left-button press and release at 1-based COL, ROW;
# wheel COL ROW: a wheel-down step there (a press only, as xterm sends it)
click() {
    keys -l "$(printf '\033[<0;%d;%dM' "$1" "$2")"
    keys -l "$(printf '\033[<0;%d;%dm' "$1" "$2")"
}
wheel() { keys -l "$(printf '\033[<65;%d;%dM' "$1" "$2")"; }
# row_of REGEX: the 1-based screen row of the first line matching REGEX
row_of() { grep -n -E -m1 -- "$1" "$T/screen" | cut -d: -f1; }
start() {
    run_ui 80 24 DRQA_TUI_START_PAUSED=1 DRQA_TUI_ELAPSED=00:00 "$@" -- \
        --policy offline --index "$IDX" --iterations 12 --seed 7 \
        "$FIX" "How are URL rules registered?"
}

# ---- colours (TERM=xterm-256color, run_ui's default)
start
wait_for '\| paused'
ok $? "the front end starts with a colour TERM"
keys s
wait_for 'iter 1/12.*paused'
keys s
wait_for 'iter 2/12.*paused'
keys s
wait_for 'iter 3/12.*paused'
ok $? "three steps give nodes 1 to 3"
colour_screen
sed -n 23p "$T/escreen" | grep -E -q -- "$COLOUR_SGR"
ok $? "the status line is drawn in colour"
grep -E -- "$COLOUR_SGR" "$T/escreen" | grep -E -q -- '3 (FindFunction|Func) '
ok $? "the selected node is drawn in colour"

# ---- mouse: click a tree node, wheel, click a citation
r=$(row_of '^. +2 (FindClass|Class) ')
[ -n "$r" ] && click 5 "$r" && wait_for '│ Node 2 '
ok $? "a click on node 2's row selects it (the node pane shows Node 2)"
wait_for '│ Evidence[ ━]+1/[0-9]+$'
ok $? "its evidence starts at the first line"
r=$(row_of '│ Evidence[ ━]+1/')
[ -n "$r" ] && wheel 50 $((r + 3)) && wait_for '│ Evidence[ ━]+4/[0-9]+$'
ok $? "wheel-down over the evidence scrolls it by three lines"
click 5 2
wait_for '│ Node 0'
ok $? "a click on the root's row selects the root"
grep -E -q '^. +2 (FindClass|Class) ' "$T/screen"
ok $? "and its release does not fold the tree (node 2 still shown)"
wheel 5 2
wait_for '│ Node 2 '
ok $? "wheel-down over the tree moves the cursor three rows (to node 2)"
keys f
wait_for 'cite 1/[0-9]+'
ok $? "f finishes; the answer pane lists its citations"
r=$(row_of '│ Answer .*cite 1/')
top=$(sed -n "$((${r:-0} + 1))p" "$T/screen")
[ -n "$r" ] && wheel 50 $((r + 2))
i=0
while [ $i -lt 500 ] && [ "$(screen | sed -n "$((r + 1))p")" = "$top" ]; do sleep 0.02; i=$((i + 1)); done
screen >"$T/screen"
[ -n "$r" ] && [ "$(sed -n "$((r + 1))p" "$T/screen")" != "$top" ] && grep -q 'cite 1/' "$T/screen"
ok $? "wheel-down over the answer scrolls its text (the citation list is not on screen yet)"
keys Tab Tab Tab
wait_for '│ Answer .*━'
keys G
wait_for '│ +\[2\] [a-z]'
r=$(row_of '│ +\[2\] [a-z]')
cite=$(sed -n "${r:-0}p" "$T/screen" | sed 's/.*\[2\] \([^ ]*:[0-9]*-[0-9]*\).*/\1/')
# the view's title keeps the path's end when it is long for the pane ("…/core/x.py:37-40")
[ -n "$r" ] && click 50 "$r" && wait_for "│ ?[^ ]*${cite##*/}[ ━]+line [0-9]+/[0-9]+"
ok $? "a click on citation [2] ($cite) opens that span in the file view"
first=${cite##*:}
grep -E -q "│ *${first%-*} " "$T/screen"
ok $? "which shows the span's first line, numbered"

# ---- NO_COLOR: attributes only
start NO_COLOR=1
wait_for '\| paused'
ok $? "the front end starts with NO_COLOR=1"
keys s
wait_for 'iter 1/12.*paused'
colour_screen
! grep -E -q -- "$COLOUR_SGR" "$T/escreen"
ok $? "with NO_COLOR=1 no colour SGR is drawn"
grep -q -- "$ESC\\[7m" "$T/escreen"
ok $? "the selection and status line are in reverse video instead"

# ---- TERM=vt100: no colours, monochrome fallback
start TERM=vt100
wait_for '\| paused'
ok $? "the front end starts with TERM=vt100 (no colours)"
keys s
wait_for 'iter 1/12.*paused'
# waited for, not read once: the status line can be on screen a moment
# before the rest of the frame that carries node 1's row
wait_for '^.  ?.?1 [A-Za-z]' && grep -E -q '^.-?0 question' "$T/screen"
ok $? "and draws the tree"
colour_screen
! grep -E -q -- "$COLOUR_SGR" "$T/escreen"
ok $? "in monochrome"
keys q
wait_for 'Quit\? \(y/n\)'
keys y
wait_for '^EXIT=0'
ok $? "and quits with status 0"
echo "1..$n"
exit $fail
