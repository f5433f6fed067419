#!/bin/sh
# test_ui_fileview.sh: the file view of a cited span, in tmux (80x24,
# NO_COLOR) on the pyrepo fixture with the offline policy. Whatever file the
# answer cites, every row is checked against the file (tests/ui_screen.py):
# long lines are cut with a marker at the edge, Right/l and Left/h scroll
# sideways (a marker at the left then), W wraps the lines onto the rows
# below and back. / in the file view searches the file, not the tree: the
# input line gives the match's number of the file's count and its line, every
# occurrence in view is highlighted and the current one apart; n and N go
# through the matches in reading order, saying when they wrap around, and a
# text that is not in the file says so. In the tree, n goes through the
# matching nodes in the order of the rows.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
IDX="$T/idx.sqlite"
facts() { "$PYTHON3" "$top_srcdir/tests/ui_screen.py" "$@" 2>"$T/why"; st=$?; sed 's/^/# /' "$T/why"; return $st; }
escreen() { tm capture-pane -p -e -t "$S" >"$T/escreen"; }
# last: the input line of the screen in $T/screen
last() { tail -1 "$T/screen"; }

run_ui 80 24 NO_COLOR=1 DRQA_TUI_ELAPSED=00:00 -- --policy offline --index "$IDX" --iterations 10 \
    --seed 1 --transcript-dir "$T/tr" "$FIX" "How are URL rules registered?"
wait_for 'transcript written: .*\.md' 1500
ok $? "the search runs to its end"
focus_pane Answer && keys Enter && wait_for '│ [^ ]+:[0-9]+-[0-9]+[ ━]+line [0-9]+/[0-9]+'
ok $? "Enter on the first citation opens the file view"
js=$(ls "$T"/tr/drqa-*.json | head -1)
path=$("$PYTHON3" -c 'import json,sys; print(json.load(open(sys.argv[1]))["answer"]["citations"][0]["path"])' "$js")
FILE="$FIX/$path"
[ -f "$FILE" ] && grep -q "│ .*${path##*/}:[0-9]*-[0-9]* " "$T/screen"
ok $? "the view shows the first citation's file ($path)"

facts file "$FILE" "$T/screen" 80 >"$T/out"
st=$?
cat "$T/out" | sed 's/^/# /'
[ $st -eq 0 ] && ! grep -q 'cut 0' "$T/out"
ok $? "every row shows its line; the long ones end in a marker at the edge"

keys l
wait_for 'line [0-9]+/[0-9]+  col 9'
ok $? "l scrolls the view right by 8 columns"
facts file "$FILE" "$T/screen" 80
ok $? "each row shows its line from column 9 on, behind the left marker"
keys Right
wait_for 'line [0-9]+/[0-9]+  col 17'
facts file "$FILE" "$T/screen" 80
ok $? "Right scrolls on (column 17), the rows still the lines' columns"
keys h Left
wait_for 'line [0-9]+/[0-9]+  Esc|line [0-9]+/[0-9]+$'
! grep -q 'col [0-9]' "$T/screen" && facts file "$FILE" "$T/screen" 80
ok $? "h and Left scroll back to the lines' start"

keys W
wait_for 'line [0-9]+/[0-9]+  wrap'
facts file "$FILE" "$T/screen" 80 >"$T/out"
st=$?
cat "$T/out" | sed 's/^/# /'
[ $st -eq 0 ] && ! grep -q 'wrapped 0' "$T/out" && ! grep -q '»' "$T/screen"
ok $? "W wraps the long lines onto the rows below them, without markers"
keys W
wait_for 'long lines are cut'
facts file "$FILE" "$T/screen" 80 >/dev/null && grep -q '»' "$T/screen"
ok $? "W again cuts them again"

# wider: the rows are the lines still, cut at the new edge
resize 200 60
wait_for '^.{150}'
facts file "$FILE" "$T/screen" 200 >"$T/out"
st=$?
cat "$T/out" | sed 's/^/# /'
[ $st -eq 0 ] && ! grep -q 'rows [0-9] ' "$T/out"
ok $? "at 200x60 every row still shows its line (cut only past the wider edge)"
resize 80 24
w=0
while [ $w -lt 300 ]; do
    screen >"$T/screen"
    [ "$(head -1 "$T/screen" | wc -m)" -le 81 ] && grep -q 'line [0-9]*/[0-9]*' "$T/screen" && break
    w=$((w + 1))
    sleep 0.02
done
[ $w -lt 300 ]
ok $? "back at 80x24"

# the search text: a word the file holds several times
word=$("$PYTHON3" - "$FILE" <<'PY'
import collections, re, sys
text = open(sys.argv[1]).read()
words = collections.Counter(w.lower() for w in re.findall(r"[A-Za-z_]{5,}", text))
print(max((c, w) for w, c in words.items() if c >= 3)[1])
PY
)
total=$("$PYTHON3" -c 'import sys; print(open(sys.argv[1]).read().lower().count(sys.argv[2]))' "$FILE" "$word")
# the lines of the matches, in reading order
"$PYTHON3" - "$FILE" "$word" >"$T/lines" <<'PY'
import sys
text, w = open(sys.argv[1]).read().lower(), sys.argv[2]
at = text.find(w)
while at >= 0:
    print(text.count("\n", 0, at) + 1)
    at = text.find(w, at + len(w))
PY
keys /
wait_for '^Find in file:'
ok $? "/ in the file view asks for a text to find in the file"
keys -l "$word"
keys Enter
wait_for "^'$word': match [0-9]+/$total, line [0-9]+"
ok $? "Enter searches the file: match k of the file's $total occurrences of '$word'"
grep -E -q '│ [^ ]+:[0-9]+-[0-9]+[ ━]+line' "$T/screen"
ok $? "the file view stays open (the tree was not searched)"
k=$(last | sed -n "s/.*match \([0-9]*\)\/.*/\1/p")
l=$(last | sed -n "s/.*, line \([0-9]*\).*/\1/p")
[ "$(sed -n "${k}p" "$T/lines")" = "$l" ]
ok $? "match $k is on line $l, as in the file"
keys W
wait_for 'long lines wrap'
escreen
facts matches "$FILE" "$T/escreen" "$word" >"$T/out"
st=$?
cat "$T/out" | sed 's/^/# /'
[ $st -eq 0 ] && grep -q 'current 1$' "$T/out" && ! grep -q 'found 0' "$T/out"
ok $? "every occurrence in view is highlighted, only them, the current one apart"

# n through every match and once around; N back
good=1 wraps=0 prev=$k
it=0
while [ $it -lt "$total" ]; do
    keys n
    want=$((prev % total + 1))
    wait_for "^'$word': match $want/$total, line" 100 >/dev/null || { good=0; break; }
    l=$(last | sed -n "s/.*, line \([0-9]*\).*/\1/p")
    [ "$(sed -n "${want}p" "$T/lines")" = "$l" ] || { echo "# match $want: line $l"; good=0; }
    if [ "$want" -eq 1 ]; then
        last | grep -q 'wrapped around to the top' && wraps=$((wraps + 1)) || good=0
    else
        last | grep -q 'wrapped' && good=0
    fi
    prev=$want
    it=$((it + 1))
done
[ $good -eq 1 ] && [ $wraps -eq 1 ]
ok $? "n goes through the $total matches in reading order, once around with a message"
# N back through them all, once around the other way
good=1 wraps=0
it=0
while [ $it -lt "$total" ]; do
    keys N
    want=$(( (prev + total - 2) % total + 1 ))
    wait_for "^'$word': match $want/$total, line" 100 >/dev/null || { good=0; break; }
    if [ "$want" -eq "$total" ]; then
        last | grep -q 'wrapped around to the bottom' && wraps=$((wraps + 1)) || good=0
    else
        last | grep -q 'wrapped' && good=0
    fi
    prev=$want
    it=$((it + 1))
done
[ $good -eq 1 ] && [ $wraps -eq 1 ]
ok $? "N goes back through them, wrapping around to the bottom once, with a message"

keys /
keys -l zqxjzqxj
keys Enter
wait_for "^no match for 'zqxjzqxj' in $path"
ok $? "a text the file does not hold: no match, said so"

# back in the tree: n goes through the matching nodes in the order of the rows
keys Escape Tab
wait_for '│ Node [0-9]+ '
needle=$("$PYTHON3" -c '
import collections, json, sys
d = json.load(open(sys.argv[1]))
c = collections.Counter(n["action"] for n in d["nodes"] if n.get("action"))
print(c.most_common(1)[0][0])' "$js")
keys /
wait_for '^Find:( |$)'
keys -l "$needle"
keys Enter
wait_for "^node [0-9]+ matches '$needle'"
ok $? "/ in the tree searches the nodes"
: >"$T/visited"
j=0
while [ $j -lt 12 ]; do
    was=$(last)
    echo "$was" >>"$T/visited"
    keys n
    # until the message changes (each n names another node, or says it wrapped)
    w=0
    while [ $w -lt 200 ]; do
        screen >"$T/screen"
        [ "$(last)" != "$was" ] && break
        w=$((w + 1))
        sleep 0.02
    done
    j=$((j + 1))
done
last >>"$T/visited"
"$PYTHON3" - "$js" "$T/visited" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
kids = {}
for n in d["nodes"]:
    kids.setdefault(n["parent"], []).append(n["id"])
order, stack = [], [0]
while stack:
    i = stack.pop()
    order.append(i)
    stack.extend(sorted(kids.get(i, []), reverse=True))
pos = {i: k for k, i in enumerate(order)}
seq = [(int(m.group(1)), "wrapped" in l) for l in open(sys.argv[2])
       for m in [re.match(r"node (\d+) matches", l)] if m]
bad = 0
for (a, _), (b, w) in zip(seq, seq[1:]):
    if pos[b] > pos[a] and not w: continue
    if pos[b] <= pos[a] and w: continue
    print("# node %d (row %d) -> node %d (row %d), wrapped %s" % (a, pos[a], b, pos[b], w)); bad = 1
if len({i for i, _ in seq}) < 3:
    print("# fewer than 3 matching nodes: %s" % seq); bad = 1
print("# visited", [i for i, _ in seq])
sys.exit(bad)
PY
ok $? "n goes through the matching nodes in the order of the tree's rows, wrapping once in a while"
keys q
wait_for '^EXIT=0'
echo "1..$n"
exit $fail
