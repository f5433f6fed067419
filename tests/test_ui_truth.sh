#!/bin/sh
# test_ui_truth.sh: the front end's status line and messages say what is
# true after the commands that change the search (tmux 120x36, offline
# policy):
#   - pruning the Finish that ended the search: the status line no longer
#     says "done: finish" (the search has not finished; with no iteration
#     left it is done on its iterations), and the answer drawn again names
#     the nodes its citations were read by;
#   - "node N will be expanded next" is gone once N is expanded, and after
#     f, which drops the expansion;
#   - a Finish node's evidence pane says why it holds none, with no "yet";
#   - "What is g?" about a repository that defines g: no step fails, the
#     answer cites where g is defined.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
IDX="$T/idx.sqlite"
Q="How are sessions stored?"

# the iteration at which the search finishes, so that none is left after it
"$DRQA" --policy offline --index "$IDX" --no-progress --quiet --iterations 40 --transcript-dir "$T/tr" \
    --ask "$Q" "$FIX" >/dev/null 2>&1
its=$("$PYTHON3" -c 'import json,sys,glob; t=json.load(open(glob.glob(sys.argv[1]+"/*.json")[0])); print(t["search"]["iterations"] if t["search"]["stop_reason"]=="finish" else 0)' "$T/tr")
[ "$its" -gt 0 ]
ok $? "--ask: the search ends on a Finish, at iteration $its"
run_ui 120 36 -- --policy offline --index "$IDX" --iterations "$its" "$FIX" "$Q"
wait_for '\| done: finish'
ok $? "the front end's search ends on the same Finish"
keys b
wait_for 'Finish reads no code'
ok $? "the Finish node's evidence pane says a Finish reads no code, not that its evidence is still to come"
! grep -q 'no evidence yet' "$T/screen"
ok $? "and not '(no evidence yet)'"
keys x
wait_for 'node [0-9]* pruned'
# 'done: finish' is on the screen until the answer is made again: the state
# after it is waited for, not any 'done:'
wait_for '\| done: iterations'
! grep -q '| done: finish' "$T/screen"
ok $? "after the Finish is pruned the status line no longer says done: finish"
grep -q '| done: iterations' "$T/screen"
ok $? "it says the search is done on its iterations"
keys w
wait_for 'exported .*-export\.json and '
"$PYTHON3" "$top_srcdir/tests/tree_truth.py" evidence "$T"/data/drqa-tui/transcripts/*-export.json >"$T/ev" 2>&1
st=$?
sed 's/^/# /' "$T/ev" | head -5
ok $st "after the prune every citation is read by a node the answer names"

run_ui 120 36 DRQA_TUI_START_PAUSED=1 -- --policy offline --index "$IDX" --iterations 12 "$FIX" "$Q"
wait_for '\| paused'
keys s
wait_for 'iter 1/12 .*\| paused'
keys s
wait_for 'iter 2/12 .*\| paused'
keys b
sleep 0.2
keys e
wait_for 'node [0-9]* will be expanded next'
keys s
wait_for 'expanded as asked'
ok $? "the asked-for expansion is said to have happened"
! grep -q 'will be expanded next' "$T/screen"
ok $? "and 'will be expanded next' is gone"
keys b
sleep 0.2
keys e
wait_for 'node [0-9]* will be expanded next'
keys f
wait_for '\| done: '
sleep 0.3
screen >"$T/screen"
! grep -q 'will be expanded next' "$T/screen"
ok $? "after f, 'will be expanded next' is gone too"
grep -q 'will not be expanded' "$T/screen"
ok $? "f says the node will not be expanded"

G="$T/grepo"
mkdir -p "$G/pkg"
printf 'from .globals import g\n' >"$G/pkg/__init__.py"
printf 'class _Globals:\n    """Holds data for one request."""\n\n\ndef _make():\n    return _Globals()\n\n\ng = _make()\n' \
    >"$G/pkg/globals.py"
run_ui 120 36 -- --policy offline --index "$T/g.sqlite" --iterations 6 "$G" "What is g?"
wait_for '\| done: '
ok $? "'What is g?' is searched and answered"
sleep 0.3
screen >"$T/screen"
! grep -q -E ' err$|error |every step of the search failed' "$T/screen"
ok $? "no step failed"
grep -q 'pkg/globals.py:9' "$T/screen"
ok $? "the answer cites where g is defined"
echo "1..$n"
exit $fail
