#!/bin/sh
# test_ui_tmux.sh: the front end in a real terminal (tmux, 80x24) on the
# pyrepo fixture with the offline policy, driven by keys: the search starts
# paused, is stepped, a subtree pruned, a node force-expanded, the search
# finished and answered, the transcript exported (both files parse), the
# help screen opened, the window resized, and quitting asks for confirmation
# while a search runs. Also: the front end refuses to start without a
# terminal, and --replay shows a transcript whose texts hold escape
# sequences as visible text, with the cited file opened from the index.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
IDX="$T/idx.sqlite"

"$DRQA" --policy offline --index "$IDX" "$FIX" "q" </dev/null >/dev/null 2>"$T/err"
st=$?
[ $st -eq 2 ] && grep -q "needs a terminal" "$T/err"
ok $? "without a terminal the front end exits 2 and says why"

run_ui 80 24 DRQA_TUI_START_PAUSED=1 DRQA_TUI_ELAPSED=00:00 -- \
    --policy offline --index "$IDX" --iterations 12 --seed 7 --transcript-dir "$T/tr" \
    "$FIX" "How are URL rules registered?"
wait_for '\| paused' 
ok $? "the search starts paused once the index is ready"
grep -q '^\*\{0,1\} *-\{0,1\}0 question' "$T/screen" && ! grep -q '^ *.1 ' "$T/screen"
ok $? "only the root is in the tree"

keys s
wait_for 'iter 1/12.*paused'
ok $? "s runs one iteration and pauses again"
grep -E -q '^.  ?.?1 [A-Za-z]' "$T/screen"
ok $? "node 1 appears in the tree"
keys s
wait_for 'iter 2/12.*paused'
ok $? "a second step"
grep -E -q '^.  ?.?2 [A-Za-z]' "$T/screen"
ok $? "node 2 appears"

# the cursor follows the newest node (2); move it up to node 1 and prune it
keys k
wait_for 'cursor held'
ok $? "moving the cursor stops it following the search"
keys x
wait_for '^.  ?.?1 .* prun'
ok $? "x prunes the selected node (status prun)"

keys j
keys e
wait_for 'node 2 will be expanded next'
ok $? "e asks for the selected node to be expanded next (the worker confirms)"
keys s
wait_for 'iter 3/12.*paused'
ok $? "the forced expansion runs"
grep -E -q '^.   ?.?3 [A-Za-z]' "$T/screen"
ok $? "node 3 is a child of node 2 (indented under it)"
grep -E -q '^.   ?.?3 .* forc' "$T/screen"
ok $? "node 3, expanded on request, is marked forced"

keys f
wait_for 'done: user'
ok $? "f finishes now; the status line says why the search stopped"
grep -E -q '│ Answer.* cite 1/[0-9]+$' "$T/screen"
ok $? "the answer pane appears with its citations"

keys w
wait_for 'exported .*-export.json'
ok $? "w exports the transcript and says where"
js=$(ls "$T"/tr/*-export.json 2>/dev/null | head -1)
md=$(ls "$T"/tr/*-export.md 2>/dev/null | head -1)
[ -n "$js" ] && "$PYTHON3" -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["format"]=="drqa-transcript"; assert len(d["nodes"])==4, len(d["nodes"])' "$js"
ok $? "the exported JSON parses as a transcript of the four nodes"
[ -n "$md" ] && grep -q '^## Answer' "$md"
ok $? "the exported Markdown holds the answer"
ls "$T"/tr/drqa-*.json | grep -v -q -- '-export.json$'
ok $? "the worker wrote its own transcript into --transcript-dir too"

keys '?'
wait_for 'Help: drqa-tui keys'
ok $? "? opens the help screen"
grep -q '^ *j, Down  *move the cursor down' "$T/screen"
ok $? "which lists the keys from the keymap table"
keys G
wait_for 'Help: drqa-tui keys +([2-9]|[1-9][0-9]+)/[0-9]+ '
at=$(sed -n 's/.*Help: drqa-tui keys *\([0-9]*\)\/\([0-9]*\) .*/\1 \2/p' "$T/screen")
[ -n "$at" ] && [ $(( ${at#* } - ${at% *} + 1 )) -eq 21 ]
ok $? "G scrolls the help to its end (the last 21 lines in view: $at)"
keys Escape
wait_for '^ Tree '
ok $? "Esc closes it"

resize 132 30
wait_for '^ Tree .* N +Q +UCT status'
ok $? "after a resize to 132x30 the tree shows its wide columns"
# the fixture lies in the project's checkout when there is one: the status line names its commit
HEAD7=$(git -C "$FIX" rev-parse --short=7 HEAD 2>/dev/null)
# (the wide tree can be on the screen before the rest of the redraw: wait for the status line too)
wait_for "^ pyrepo${HEAD7:+@$HEAD7}[*]? \| offline"
[ "$(wc -l <"$T/screen")" -eq 30 ] && sed -n 29p "$T/screen" | grep -q "^ pyrepo${HEAD7:+@$HEAD7}[*]\{0,1\} | offline"
ok $? "and the status line moved to row 29, naming the repository and its commit"
resize 80 24
wait_for '^ Tree .* N +Q +UCT st '
ok $? "back at 80x24 the narrow columns return"

# a new question: the tree restarts (paused, as configured), so quitting asks
keys a
wait_for '^Ask:'
ok $? "a opens the question line"
keys 'Where is the session cookie signed?' Enter
wait_for 'iter 0/12.*paused'
ok $? "the new question restarts the search"
keys q
wait_for 'Quit\? \(y/n\)'
ok $? "q asks for confirmation while a search runs"
keys n
wait_for 'not quitting'
ok $? "n keeps the program running"
keys q
wait_for 'Quit\? \(y/n\)'
keys y
wait_for '^EXIT=0'
ok $? "y quits with status 0"

# --replay of the exported transcript, its texts laced with escape sequences
"$DRQA" --index-only --no-progress --index "$IDX" "$FIX" >/dev/null 2>&1
"$PYTHON3" - "$js" "$T/replay.json" "$IDX" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["config"]["index"] == sys.argv[3], d["config"]["index"]   # --replay opens the index it names
d["nodes"][1]["report"] = "evil \x1b]0;pwned\x07 title \x1b[2J clear \u202e bidi"
d["answer"]["citations"] = [{"path": "tinyweb/app.py", "start_line": 3, "end_line": 5,
                             "text": "", "label": None, "score": 0, "elided": False}]
json.dump(d, open(sys.argv[2], "w"))
PY
run_ui 80 24 -- --replay "$T/replay.json"
wait_for '\| replay'
ok $? "--replay opens the transcript"
keys g j
wait_for 'Node 1 '
keys Tab G
wait_for 'evil'
grep -F -q 'evil ^[]0;pwned^G title ^[[2J' "$T/screen" && grep -F -q '<U+202E> bidi' "$T/screen"
ok $? "escape sequences in a report are shown as visible text"
keys Tab Tab Enter
wait_for 'tinyweb/app.py:3-5'
ok $? "Enter on a citation opens the file view, from the index the transcript records"
grep -E -q '│ *3 from \.core\.scaffold import' "$T/screen" &&
    grep -E -q '│ *5 from \.sessions\.db import' "$T/screen"
ok $? "with the cited lines numbered"
keys Escape q
wait_for '^EXIT=0'
ok $? "a replay quits without asking"
echo "1..$n"
exit $fail
