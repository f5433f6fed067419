#!/bin/sh
# test_ui_layout.sh: the tree pane's room, in tmux on the pyrepo fixture with
# the offline policy. While the cursor follows a stepped search at 80x24, and
# then as it is moved (G, k, g, PgDn, b), the node at the cursor and all its
# ancestors are on screen. At 80x24, 160x45 and 200x60 the tree takes at
# least half the width, each row's action is the node's action whole or its
# short name from the man page (never a cut word), the argument shown is the
# start of one of its arguments, the number columns line up under the title;
# at 80 columns shallow rows keep some of their argument, at 200 every
# argument is whole and ViewCode rows show their span. A search with a huge
# exploration constant (UCT >= 10000) keeps the columns aligned, narrow and
# wide, with the transcript's numbers. z shows the focused pane alone and
# gives the panes back. The facts are checked by tests/ui_screen.py against
# the worker's transcript, whatever tree the policy grows.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
IDX="$T/idx.sqlite"
# wait_cols COLS: polls until the top row reaches the last columns (the
# panes redrawn at the new size); the screen is left in $T/screen
wait_cols() {
    j=0
    while [ $j -lt 300 ]; do
        screen >"$T/screen"
        [ "$(head -1 "$T/screen" | wc -m)" -ge "$1" ] && [ "$(wc -l <"$T/screen")" -ge 20 ] && return 0
        j=$((j + 1))
        sleep 0.02
    done
    return 1
}
facts() { "$PYTHON3" "$top_srcdir/tests/ui_screen.py" "$@" 2>"$T/why"; st=$?; sed 's/^/# /' "$T/why"; return $st; }

run_ui 80 24 DRQA_TUI_START_PAUSED=1 DRQA_TUI_ELAPSED=00:00 -- --policy offline --index "$IDX" \
    --iterations 30 --seed 1 --transcript-dir "$T/tr" "$FIX" "How are URL rules registered?"
wait_for '\| paused'
ok $? "the search starts paused"
# the cursor follows each new node: keep every screen
it=1
while [ $it -le 24 ]; do
    keys s
    wait_for "iter $it/30.*paused|done:" >/dev/null || break
    grep -q 'done:' "$T/screen" && break
    cp "$T/screen" "$T/follow.$it"
    it=$((it + 1))
done
keys p
wait_for 'transcript written: .*\.md' 1500
ok $? "the search runs to its end and writes its transcript"
js=$(ls "$T"/tr/drqa-*.json 2>/dev/null | head -1)
facts ancestors "$js" "$T"/follow.* >"$T/out"
st=$?
cat "$T/out" | sed 's/^/# /'
[ $st -eq 0 ] && ! grep -q 'tall 0' "$T/out"
ok $? "following the search, the newest node's ancestors are on screen (the tree taller than the pane)"

# the cursor moved by hand
n_sc=0
for k in G k k k k k g PgDn b; do
    keys "$k"
    sleep 0.1
    n_sc=$((n_sc + 1))
    screen >"$T/moved.$n_sc"
done
facts ancestors "$js" "$T"/moved.* >"$T/out"
st=$?
cat "$T/out" | sed 's/^/# /'
ok $st "moving the cursor (G k g PgDn b), its node's ancestors stay on screen"

for size in "80 24" "160 45" "200 60"; do
    set -- $size
    resize "$1" "$2"
    wait_cols "$1"
    whole=
    [ "$1" -ge 200 ] && whole=whole
    facts labels "$js" "$T/screen" "$1" $whole >"$T/out"
    st=$?
    cat "$T/out" | sed 's/^/# /'
    ok $st "at $1x$2: tree width, whole or short action names, arguments, aligned columns"
    if [ "$1" -ge 200 ]; then
        ! grep -q 'viewcode 0' "$T/out"
        ok $? "at $1x$2 the tree has ViewCode rows (their spans checked above)"
    fi
done

# z: the focused pane alone, Tab moves the zoom, z again gives the panes back
resize 80 24
wait_for 'Tree [0-9]+'
keys z
wait_for '^ Tree [0-9]+ \[zoom: z\]'
ok $? "z zooms the tree pane"
! grep -q '│' "$T/screen" && grep -E -q ' [0-9]+ +[-0-9.]+ +>?[-0-9.e]+ +[a-z]+ *$' "$T/screen"
ok $? "the zoomed tree takes the whole width, no other pane beside it"
keys Tab
wait_for '^ Node [0-9]+ \[zoom: z\]'
ok $? "Tab moves the zoom on to the node pane"
keys z
wait_for '^ Tree [0-9]+ .*│ Node [0-9]+ '
ok $? "z again shows all the panes"
# the help lists the same short names as the man page (tall enough for its
# last page to hold them above the recent messages). The keys go once the
# screen has the new size (G scrolls by the pane's height as last drawn); the
# list is read once the file view's legend below it is drawn too.
resize 200 70
wait_cols 200 && keys F1 && wait_for 'Help: drqa-tui keys' && keys G &&
    wait_all 'Actions in a narrow tree' '^ File view *$' &&
"$PYTHON3" - "$T/screen" "$top_srcdir/tests/ui_screen.py" <<'PY'
import re, sys, types
src = open(sys.argv[2]).read().replace("sys.exit(main())", "")
m = types.ModuleType("ui_screen")
m.__file__ = sys.argv[2]
exec(src, m.__dict__)
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
at = next(i for i, l in enumerate(lines) if "Actions in a narrow tree" in l)
shown = {}
for l in lines[at + 1:]:
    f = l.split()
    if len(f) != 2:
        break
    shown[f[1]] = f[0]
want = m.man_abbrev()
print("# help %s\n# man  %s" % (sorted(shown.items()), sorted(want.items())))
sys.exit(0 if shown == want and want else 1)
PY
ok $? "the help's short action names are the man page's"
keys Escape
keys q
wait_for '^EXIT=0'

# UCT scores of 10000 and more (a huge exploration constant), narrow and wide
run_ui 80 24 DRQA_TUI_ELAPSED=00:00 -- --policy offline --index "$IDX" --iterations 8 --seed 3 \
    --exploration 3000000 --transcript-dir "$T/tr2" "$FIX" "Where are sessions stored?"
wait_for 'transcript written: ' 1500
ok $? "a search with --exploration 3000000 runs to its end"
js2=$(ls "$T"/tr2/drqa-*.json 2>/dev/null | head -1)
facts uct "$js2" "$T/screen" >"$T/out"
st=$?
cat "$T/out" | sed 's/^/# /'
[ $st -eq 0 ] && ! grep -q 'uct>=10000 0' "$T/out"
ok $? "80x24: UCT values of 10000 and more keep the columns aligned and match the transcript"
resize 160 45
wait_cols 160
facts uct "$js2" "$T/screen" >"$T/out"
st=$?
cat "$T/out" | sed 's/^/# /'
ok $st "160x45: the same in the wide columns"
keys q
wait_for '^EXIT=0'
echo "1..$n"
exit $fail
