#!/bin/sh
# test_ui_line.sh: the question line and stray keys as a new user meets them
# (tmux 60x16, the documented minimum; pyrepo, offline policy). The question
# given on the command line is in the history; C-c on the line cancels it and
# the program goes on, the cancelled question kept for Up; three different
# characters arriving at once after the search is done (a paste without
# bracketed paste) go to the question line: "xqa" neither prunes nor quits.
# The empty line says how to leave it; a question wider than the line is
# marked where it goes on past either end. A clean exit leaves no -wal or
# -shm file beside the index.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
Q="How are URL rules registered?"
run_ui 60 16 DRQA_TUI_ELAPSED=00:00 -- --policy offline --index "$T/idx.sqlite" --iterations 4 --seed 7 "$FIX" "$Q"
wait_for '\| done: ' 1500
ok $? "the search given on the command line runs to its end"

keys a
wait_for '^Ask: +a question, then Enter \(Esc: close this line\)'
ok $? "the empty question line says that Esc closes it"
keys Up
wait_for "^Ask: $Q"
ok $? "Up brings back the question given on the command line"
grep -q -F -x "$Q" "${XDG_STATE_HOME:-$HOME/.local/state}/drqa-tui/history"
ok $? "and it is in the history file"

keys C-u
keys -l "where is the session cookie signed"
wait_for '^Ask: where is the session cookie signed'
keys C-c
wait_for 'question put aside'
ok $? "C-c on the question line cancels it and says the question is kept"
! grep -q '^EXIT=' "$T/screen" && grep -q '| done: ' "$T/screen"
ok $? "and the program goes on"
keys a
wait_for '^Ask: +a question'
keys Up
wait_for '^Ask: where is the session cookie signed'
ok $? "a, then Up, brings the cancelled question back"
keys Escape
wait_for '^question put aside'

# the search is done: x would prune and q would quit at once
keys -l xqa
wait_for '^Ask: xqa'
ok $? "a burst of 'xqa' after the search lands on the question line"
! grep -q '^EXIT=' "$T/screen" && ! grep -q 'prun' "$T/screen"
ok $? "nothing was pruned and the program did not quit"
keys C-u

long="which class registers the URL rules of the application and where are they matched"
keys -l "$long"
wait_for '^Ask: «.*matched *$'
ok $? "a question wider than the line is marked « where it goes on past the left"
keys C-a
wait_for '^Ask: which class.*»$'
ok $? "and » past the right once the cursor is at its start"
keys Escape
wait_for '^question put aside'
keys q
wait_for '^EXIT=0'
ok $? "q quits the finished search"
[ -f "$T/idx.sqlite" ] && [ -z "$(ls "$T" | grep -E '^idx\.sqlite-(wal|shm)$')" ]
ok $? "and leaves no -wal or -shm file beside the index"
echo "1..$n"
exit $fail
