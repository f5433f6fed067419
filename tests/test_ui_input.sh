#!/bin/sh
# test_ui_input.sh: the question line in a real terminal (tmux 100x30, the
# pyrepo fixture, offline policy). A multi-line bracketed paste is text for
# the line, its newlines spaces, and runs nothing; a paste while no line is
# open opens the question line instead of acting as keys; C-w, C-a, C-d,
# Delete and C-e edit the line. The empty question line says what it is for,
# and F1 opens the help from it. A question with nothing to look for is
# refused, and blanks alone ask nothing; one asked while paused says so.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
run_ui 100 30 DRQA_TUI_START_PAUSED=1 -- --policy offline --index "$T/idx.sqlite" --iterations 4 "$FIX"
wait_for '^Ask: +a question about pyrepo, then Enter \(Esc: close this line, F1: the keys\)'
ok $? "started with a repository only, the question line is open with a hint"
wait_for '\| idle'
keys F1
wait_for 'Help: drqa-tui keys'
ok $? "F1 opens the help while the line is open"
keys Escape
wait_for '^Ask: +a question about pyrepo'
ok $? "Esc closes the help and the question line is still open"

printf 'How are\nURL rules\nregistered? extra' >"$T/paste"
tm load-buffer -b p "$T/paste"
tm paste-buffer -p -b p -t "$S"
wait_for '^Ask: How are URL rules registered\? extra'
ok $? "a multi-line paste lands on the line with its newlines as spaces"
grep -q '\| idle' "$T/screen" && ! grep -q 'asking:' "$T/screen"
ok $? "and nothing was submitted or run"
keys C-w
wait_for '^Ask: How are URL rules registered\? *$'
ok $? "C-w deletes the word before the cursor"
keys C-a C-d Delete
wait_for '^Ask: w are URL rules registered\? *$'
ok $? "C-a goes to the start, C-d and Delete delete the character under the cursor"
keys C-e BSpace BSpace   # the space C-w left, then the "?"
wait_for '^Ask: w are URL rules registered *$'
ok $? "C-e goes to the end"
keys Escape
# the line closes, its text put aside
wait_for '^question put aside'
# a paste outside the line: keys such as p, s, f and q must not act
printf 'pause s f q\nmore' >"$T/paste2"
tm load-buffer -b p2 "$T/paste2"
tm paste-buffer -p -b p2 -t "$S"
wait_for '^Ask: pause s f q more'
ok $? "a paste outside the line opens the question line with it"
grep -q '\| idle' "$T/screen" && ! grep -q 'Quit?' "$T/screen"
ok $? "none of its characters acted as a key"
keys Escape
wait_for '^question put aside'
# blanks alone ask nothing; a question with no words to look for is refused
# as --ask refuses it, and no search runs for it
keys a Space Space Enter
keys a
tm send-keys -t "$S" -l '?'
keys Enter
wait_for "the question '\\?' has no words to look for"
ok $? "a question with nothing to look for is refused, saying why"
grep -q '| idle' "$T/screen" && ! grep -q 'planning\|exhausted' "$T/screen"
ok $? "and no search ran for it: still idle, no node"
# a question asked while the pause goes on (the search started paused) says so
keys a
tm send-keys -t "$S" -l 'How are URL rules registered?'
keys Enter
wait_for 'this search starts paused, the pause still on: p resumes it'
ok $? "a question asked while paused says its search is paused and how to go on"
keys q
wait_for 'Quit\?|^EXIT=0'
grep -q 'Quit?' "$T/screen" && keys y
wait_for '^EXIT=0'
ok $? "q quits"
echo "1..$n"
exit $fail
