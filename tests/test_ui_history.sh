#!/bin/sh
# test_ui_history.sh: the question line's history (tmux 100x30, the pyrepo
# fixture, offline policy). Questions asked in one run come back with Up and
# Down in the next, from ~/.local/state/drqa-tui/history (owner-only), and
# Down past the newest gives back what was typed; $XDG_STATE_HOME moves the
# file; C-u clears the line.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
unset XDG_STATE_HOME
H="$HOME/.local/state/drqa-tui/history"

run_ui 100 30 -- --policy offline --index "$T/idx.sqlite" --iterations 2 "$FIX"
wait_for '^Ask: +a question'
keys -l "How are URL rules registered?"
keys Enter
wait_for '\| done: '
keys a
keys -l "Where is the session cookie signed?"
keys Enter
# kept when it is asked; its search of two iterations may be over before
# a screen is read, so the file is waited for, not the search's status
w=0
while [ $w -lt 1500 ] && [ "$(wc -l <"$H" 2>/dev/null || echo 0)" -lt 2 ]; do w=$((w + 1)); sleep 0.02; done
wait_for '\| done: '
keys q
wait_for '^EXIT=0'
[ "$(cat "$H" 2>/dev/null)" = "How are URL rules registered?
Where is the session cookie signed?" ]
ok $? "both questions are kept in ~/.local/state/drqa-tui/history, oldest first"
[ "$(stat -c %a "$H")" = 600 ]
ok $? "the history file is owner-only"

run_ui 100 30 -- --policy offline --index "$T/idx.sqlite" --iterations 2 "$FIX"
wait_for '^Ask: +a question'
keys -l "draft"
keys Up
wait_for '^Ask: Where is the session cookie signed\? *$'
ok $? "in the next run, Up brings back the newest question"
keys Up
wait_for '^Ask: How are URL rules registered\? *$'
ok $? "Up again the one before"
keys Up
sleep 0.1
wait_for '^Ask: How are URL rules registered\? *$'
ok $? "the oldest stays at the top"
keys Down
wait_for '^Ask: Where is the session cookie signed\? *$'
ok $? "Down goes back to the newer one"
keys Down
wait_for '^Ask: draft *$'
ok $? "Down past the newest gives back what was typed"
keys C-u
wait_for '^Ask: +a question about pyrepo'
ok $? "C-u clears the line"
keys Escape q
wait_for '^EXIT=0'

run_ui 100 30 XDG_STATE_HOME="$T/xdg" -- --policy offline --index "$T/idx.sqlite" --iterations 2 "$FIX"
wait_for '^Ask: +a question'
keys Up
sleep 0.1
wait_for '^Ask: +a question about pyrepo'
ok $? "with XDG_STATE_HOME elsewhere the history there is empty"
keys -l "What does dispatch_request do?"
keys Enter
wait_for '\| done: '
keys q
wait_for '^EXIT=0'
[ "$(cat "$T/xdg/drqa-tui/history" 2>/dev/null)" = "What does dispatch_request do?" ]
ok $? "and the question is kept in \$XDG_STATE_HOME/drqa-tui/history"
echo "1..$n"
exit $fail
