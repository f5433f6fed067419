#!/bin/sh
# test_ui_uct.sh: the tree's UCT column is the engine's. A search on the
# pyrepo fixture runs to its end in tmux (160x45); then, for every node, the
# column is read off the screen and compared with the node's newest UCT mark
# as a child in the worker's transcript (the score of the newest selection
# that compared it, '>' when it won there, '-' when none did) -- live, and
# again in --replay of that transcript. The node pane of a sibling that lost
# says so with the same number.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
IDX="$T/idx.sqlite"

# tree rows -> "id uct" lines, from the screen in $T/screen
tree_ucts() {
    "$PYTHON3" - "$T/screen" <<'PY' | sort -n
import re, sys
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    left = line.split("\u2502")[0]
    m = re.match(r"^.\s*[-+ ]?(\d+) .*?\s(\d+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$", left)
    if m: print(m.group(1), m.group(4))
PY
}
# transcript -> "id uct" lines by the same rule, one decimal
transcript_ucts() {
    "$PYTHON3" - "$1" <<'PY' | sort -n
import json, sys
d = json.load(open(sys.argv[1]))
for nd in d["nodes"]:
    marks = [m for m in nd["uct"] if not m["new"]]
    if not marks: print(nd["id"], "-"); continue
    m = marks[-1]
    s = "%.1f" % m["score"] if abs(m["score"]) < 1000 else "%.0f" % m["score"]
    print(nd["id"], (">" if m.get("chosen") else "") + s)
PY
}

run_ui 160 45 DRQA_TUI_ELAPSED=00:00 -- --policy offline --index "$IDX" --iterations 10 --seed 7 \
    --transcript-dir "$T/tr" "$FIX" "How are URL rules registered?"
wait_for 'transcript written: .*\.md' 1500
ok $? "the search runs to its end and writes its transcript"
js=$(ls "$T"/tr/drqa-*.json 2>/dev/null | head -1)
tree_ucts >"$T/live"
transcript_ucts "$js" >"$T/want"
[ "$(wc -l <"$T/want")" -ge 8 ] && grep -q '^1 ' "$T/live"
ok $? "the transcript has its nodes and the tree shows them"
diff "$T/want" "$T/live" >"$T/diff"
st=$?
[ $st -eq 0 ] || sed 's/^/#   /' "$T/diff"
ok $st "live: every node's UCT column equals the transcript's newest mark"
[ "$(grep -c ' >' "$T/want")" -ge 1 ] && [ "$(grep -E -c ' [0-9]' "$T/want")" -ge 1 ]
ok $? "the column shows winners and the siblings they beat"

# the node pane of a node that lost its newest comparison
lost=$(grep -E -m1 ' [0-9]' "$T/want")
lid=${lost%% *} lval=${lost#* }
keys g
i=0
while [ -n "$lid" ] && [ $i -lt 20 ] && ! wait_for "^ Tree .*│ Node $lid " 5 >/dev/null; do keys j; i=$((i + 1)); done
wait_for "UCT $lval at selection [0-9]+: a sibling was chosen"
ok $? "the node pane of node $lid gives the same UCT and says a sibling won"

keys q y
wait_for '^EXIT=0'
run_ui 160 45 -- --replay "$js"
wait_for '\| replay'
ok $? "--replay opens the transcript"
tree_ucts >"$T/replayed"
diff "$T/want" "$T/replayed" >"$T/diff"
st=$?
[ $st -eq 0 ] || sed 's/^/#   /' "$T/diff"
ok $st "replay: every node's UCT column equals the transcript's newest mark"
keys q
wait_for '^EXIT=0'
echo "1..$n"
exit $fail
