#!/bin/sh
# test_ui_control.sh: what the front end says about its commands is what
# happens (tmux 110x32, the pyrepo fixture, offline policy). The clock does
# not run while the search is paused; "resuming" does not outlive the
# search; x on a pruned node says it is pruned already; a prune after the
# answer answers again without the pruned node (the export shows it); x
# while the file view covers the node's panes is refused; a new question
# does not bring back the last search's messages. C-c when the search is
# done exits 130, also when it comes while the front end is busy (a resize
# then is drawn at once too); SIGTERM during a search 143.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
IDX="$T/idx.sqlite"
Q="How are URL rules registered?"

run_ui 110 32 DRQA_TUI_START_PAUSED=1 -- --policy offline --index "$IDX" --iterations 6 --seed 3 "$FIX" "$Q"
wait_for '\| paused'
# the clock would read 00:02 after this wait if it ran while paused
sleep 2.3
wait_for '\| 00:00 \| paused'
ok $? "the elapsed time stands still while paused"
# and after an iteration has run: s steps one, then the clock stops again
keys s
wait_for 'iter 1/6 .*\| paused'
el=$(sed -n 's/^.*| \([0-9][0-9]:[0-9][0-9]\) | paused.*$/\1/p' "$T/screen" | head -1)
sleep 2.3
wait_for "\\| $el \\| paused"
ok $? "and again after a step ($el)"
keys p
wait_for '\| done: '
ok $? "p resumes the search and it ends"
sleep 0.2
screen >"$T/screen"
! tail -1 "$T/screen" | grep -q 'resuming'
ok $? "'resuming' is gone once the search is done"

keys b
sleep 0.2
screen >"$T/screen"
best=$(sed -n 's/^.*│ Node \([0-9]*\) .*$/\1/p' "$T/screen" | head -1)
[ -n "$best" ] && [ "$best" -gt 0 ]
ok $? "b selects the best path's last node ($best)"
keys x
wait_for "node $best pruned"
ok $? "x prunes it and the worker says so"
wait_for '\| done: '
keys x
wait_for "node $best is pruned already"
ok $? "x on the pruned node says it is pruned already, not that it prunes"
keys w
wait_for 'exported .*-export\.json and '
exp=$(ls "$T"/data/drqa-tui/transcripts/*-export.json | head -1)
"$PYTHON3" - "$exp" "$best" <<'PY'
import json, sys
t = json.load(open(sys.argv[1])); b = int(sys.argv[2])
st = {n["id"]: n["status"] for n in t["nodes"]}
assert st[b] == "pruned", st[b]
path = t["answer"]["path"]
assert b not in path, (b, path)
assert all(st[i] != "pruned" for i in path[1:]), path
PY
ok $? "after the prune the answer is drawn again, from a path without pruned nodes"

keys Tab Tab Enter
wait_for 'Esc closes'
keys x
wait_for 'close the file view first'
ok $? "x while the file view covers the node's panes is refused"
screen >"$T/screen"
grep -q 'Esc closes' "$T/screen"
ok $? "and the file view stays"
keys Escape
wait_for '│ Evidence'
# C-c quits a finished search at once, with the shell's status for it, not 0
keys C-c
wait_for '^EXIT=130' 400
ok $? "C-c when the search is done exits 130"

# a new question starts clean: no message of the last search
run_ui 110 32 DRQA_TUI_START_PAUSED=1 -- --policy offline --index "$IDX" --iterations 6 --seed 3 "$FIX" "$Q"
wait_for '\| paused'
keys f
wait_for '\| done: '
keys g x
wait_for 'cannot prune the root'
keys a
keys -l "Where is the session cookie signed?"
keys Enter
wait_for '^ Tree 1 .*\| paused|\| paused.*' 
wait_for 'iter 0/6'
sleep 0.2
screen >"$T/screen"
! grep -q 'cannot prune the root' "$T/screen"
ok $? "a new question does not bring back the last search's message"
# SIGTERM while a search is under way: 143, not 0
sh_pid=$(tm list-panes -t "$S" -F '#{pane_pid}')
ui_pid=$(ps -o pid= --ppid "$sh_pid" | tr -d ' ' | head -1)
[ -n "$ui_pid" ] && kill -TERM "$ui_pid"
wait_for '^EXIT=143' 400
ok $? "SIGTERM during a search exits 143"

# C-c while the loop is busy, not waiting for keys (held here by the test
# hook just before it waits): the wait that follows wakes for it, with no
# key or event to come after a finished search. held_then CMD...: a finished
# search, the loop held after a key, CMD run meanwhile, then let go.
H="$T/hold"
mkdir -p "$H"
held_then() {
    rm -f "$H/held"
    run_ui 110 32 DRQA_TEST_WAIT_HOLD="$H" -- --policy offline --index "$IDX" --iterations 2 --seed 3 "$FIX" "$Q"
    wait_for '\| done: '
    : >"$H/hold"
    keys j
    w=0
    while [ ! -e "$H/held" ] && [ $w -lt 1500 ]; do w=$((w + 1)); sleep 0.02; done
    "$@"
    # the signal is handled while the loop is held
    sleep 0.3
    rm -f "$H/hold"
}
held_then keys C-c
wait_for '^EXIT=130' 400
ok $? "C-c that comes while the front end draws, not waiting for keys, exits 130 at once"

# a resize in the same place: the frame at the new size follows at once
held_then resize 80 24
# drawn by the program at 80 columns, not the 110-column frame as tmux
# crops it: the title row is the tree's, up to the node pane's counter
at_80() { head -1 "$T/screen" | grep -E -q '^ Tree .*[0-9]+/[0-9]+$' && [ "$(head -1 "$T/screen" | wc -m)" -le 81 ]; }
wait_until at_80
ok $? "a resize that comes while the front end draws is drawn at once, with no key after it"
echo "1..$n"
exit $fail
