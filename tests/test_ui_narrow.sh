#!/bin/sh
# test_ui_narrow.sh: a replayed search at the widths a new user tries (tmux,
# 60x16 to 100x30, NO_COLOR). The transcript is the golden one with three
# ViewCode nodes reading the same long span at two depths and two Finish
# nodes. Every row keeps its action (a narrow tree drops its number columns
# first, UCT then N); a span is cut at its start, keeping the end of the file
# name and the lines; the focused pane shows without colours; / in the tree
# says which match of how many; an export names its file whole in a narrow
# input line and the help screen ends with the message in full; the help
# explains the UCT column's marks and "cursor held". In the answer pane g
# goes to the first line and k on the first citation scrolls up.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
TR="$T/crafted.json"
"$PYTHON3" - "$top_srcdir/tests/golden/ui-replay.json" "$TR" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for n in d["nodes"]:
    if n["id"] in (2, 7, 9):
        n["action"] = "ViewCode"
        n["args"] = {"code_span_list": ["django/db/models/base.py:743-790"]}
        n["args_key"] = "viewcode " + json.dumps(n["args"], separators=(",", ":"))
    if n["id"] in (8, 10):
        n["action"], n["args"], n["args_key"], n["status"] = "Finish", {}, "finish {}", "finished"
json.dump(d, open(sys.argv[2], "w"))
PY
tree() { sed -n '2,12p' "$T/screen" | sed 's/│.*//'; }
# the tree's last row is on the screen: the screen is read while it is
# drawn top down, and its title line alone says nothing of the rows below
tree_drawn() { sed -n '12p' "$T/screen" | grep -q -E '^. *[-+]?[0-9]+ [A-Za-z]'; }

for size in 60x16 66x16 70x20 80x24 100x30; do
    run_ui "${size%x*}" "${size#*x}" NO_COLOR=1 -- --replay "$TR"
    wait_for '^ Tree 11 '
    wait_until tree_drawn
    # the 11 rows: mark, indentation, fold mark, id, then an action name
    is "$(tree | grep -c -E '^. *[-+]?[0-9]+ [A-Za-z][a-z]')" 11 "$size: every row shows its action"
    is "$(tree | grep -c -E '^. *[-+]?(8|10) Fin')" 2 "$size: the Finish rows are not blank"
    spans=$(tree | grep -E '^. *[-+]?(2|7|9) View' | grep -c -E '…[a-z./:0-9]*-790 ')
    is "$spans" 3 "$size: the span rows keep the end of the span, after the marker"
    grep -q '^ Tree 11 ━' "$T/screen"
    ok $? "$size: the focused tree's title holds the focus line"
    case $size in 80x24|100x30)
        is "$(tree | grep -E '^. *[-+]?(2|7|9) View' | grep -c -E '…[a-z.]*py:743-790 ')" 3 \
            "$size: the span rows keep the file name's end and the lines at both depths";;
    esac
done
is "$(tree | grep -E '^. *[-+]?(2|7|9) ViewCode' | grep -c '…base\.py:743-790 ')" 3 \
    "100x30: the span rows read …base.py:743-790 at both depths"
grep -E -q '^ Tree 11 .* N +Q +UCT st' "$T/screen"
ok $? "100x30: the tree keeps all of its columns"

run_ui 60 16 NO_COLOR=1 -- --replay "$TR"
wait_for '^ Tree 11 '
grep -q '^ Tree 11 [━ ]* Q st ' "$T/screen" && ! grep -q 'UCT' "$T/screen"
ok $? "60x16: the narrow tree drops UCT and N and keeps Q and status"
keys Tab
wait_for '│ Node 0 ━'
grep -q '^ Tree 11 ━' "$T/screen"
[ $? -ne 0 ]
ok $? "Tab moves the focus line to the node pane"
keys BTab /
wait_for '^Find:'
keys -l View
keys Enter
wait_for "^node [0-9]+ matches 'View' \(match 1/[0-9]+\)"
ok $? "/ in the tree says which match of how many"
keys n
wait_for "^node [0-9]+ matches 'View' \(match 2/[0-9]+\)"
ok $? "n goes to the next match and counts it"

keys w
wait_for '^exported '
js=$(ls "$T"/data/drqa-tui/transcripts/*.json 2>/dev/null | head -1)
name=$(basename "$js")
grep -q -F "exported …/$name and .md" "$T/screen"
ok $? "60x16: the export message keeps the file name whole, the directories shortened and marked"
resize 200 40
keys ?
wait_for 'Help: drqa-tui keys'
keys G
wait_all 'Recent messages' 'exported .* and \.md'
grep -q 'won there' "$T/screen" && grep -q 'cursor held  ' "$T/screen"
ok $? "the help explains the UCT marks and 'cursor held'"
grep -q -F "exported $js and .md" "$T/screen"
ok $? "the end of the help screen shows the export message with the full path"
keys Escape

# the answer pane: longer than its rows at 100x30
resize 100 30
# the help gone and the frame at the new size before the focus moves: Tabs
# read before the resize and the Escape go round the layout of the moment
at_100() { [ "$(head -1 "$T/screen" | wc -m)" -le 101 ] && ! grep -q 'Help: drqa-tui keys' "$T/screen"; }
wait_until at_100 && focus_pane Answer
wait_for '│ Answer .*━.*cite 1/'
keys G
wait_for 'cite 6/6'
keys g
wait_for '│ \(no trajectory reached'
ok $? "g in the answer pane goes to its first line"
keys G
wait_for 'cite 6/6'
i=0
while [ $i -lt 15 ]; do keys k k k k k k k k k k; i=$((i + 1)); done
wait_for '│ \(no trajectory reached'
ok $? "k goes up the citations, then scrolls up past the first one to the text"
grep -q 'cite 1/6' "$T/screen"
ok $? "the first citation stays selected"
keys q
wait_for '^EXIT=0'
echo "1..$n"
exit $fail
