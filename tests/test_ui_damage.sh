#!/bin/sh
# test_ui_damage.sh: a damaged index met while the front end answers. One
# file's stored text is damaged (sqlite finds the database sound, so opening
# the index does not notice): the search over it cannot read that file. The
# front end says what was found, checks the index (the damaged one is kept
# aside and a new one built), asks the question again and answers it from the
# file that was damaged; the file view then reads the rebuilt index. Met
# again after the check, the damage is said beside the answer, never hidden.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
IDX="$T/idx.sqlite"
Q="where is the session flushed?"
q() { sqlite3 -batch "$1" "$2"; }
# one bit flipped in the middle of the file's stored text
damage_text() {
    "$PYTHON3" -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
z = bytearray(db.execute("SELECT ztext FROM files WHERE path = ?", (sys.argv[2],)).fetchone()[0])
z[len(z) // 2] ^= 0x10
db.execute("UPDATE files SET ztext = ? WHERE path = ?", (bytes(z), sys.argv[2]))
db.commit()' "$1" "$2"
}

# said_damage: the help's recent messages (its last page) hold what was said
# when the damage was met. That line is on screen only while the index is
# checked, until the question is asked again: too short a time to be sure to
# read it there on a loaded machine.
said_damage() {
    keys F1 && wait_for 'Help: drqa-tui keys' && keys G &&
        wait_all '^ Recent messages' \
            '^   the index was found damaged while answering; checking it and asking again: the index holds a dam'
    st=$?
    keys Escape
    return $st
}

"$DRQA" --no-progress --index "$IDX" --index-only "$T/repo" >/dev/null 2>&1
ok $? "the fixture is indexed"
# a first question stores the derived data, so that opening the index later
# reads no file text and the damage is met by the search itself
"$DRQA" --no-progress --quiet --policy offline --index "$IDX" --ask "$Q" "$T/repo" >"$T/sound.out" 2>&1
ok $? "a question over the sound index"
grep -q "tinyweb/sessions/base.py" "$T/sound.out"
ok $? "whose answer cites the file about to be damaged"
damage_text "$IDX" tinyweb/sessions/base.py
is "$(q "$IDX" "PRAGMA quick_check")" "ok" "sqlite finds nothing wrong with the damaged text"

run_ui 120 30 -- --policy offline --index "$IDX" --iterations 6 --seed 3 "$T/repo" "$Q"
wait_for 'done: ' 1500
ok $? "the search asked again ends"
like "$(cat "$T/screen")" "tinyweb/sessions/base.py" "its answer cites the file that was damaged"
said_damage
ok $? "the front end said the index was found damaged while answering, and that it checks it and asks again"
ls "$T"/idx.sqlite.corrupt-* >/dev/null 2>&1
ok $? "the damaged index is kept aside"
is "$(q "$IDX" "PRAGMA quick_check")" "ok" "the index in its place is sound"
"$DRQA" --json --no-progress --index "$IDX" --check --index-only "$T/repo" >"$T/check.json" 2>/dev/null
is "$("$PYTHON3" -c 'import json, sys; print(json.load(open(sys.argv[1]))["check"]["result"])' "$T/check.json")" \
   "ok" "--check finds every stored text of it whole"
keys q
wait_for '^EXIT=0'
ok $? "q quits with status 0"

# the file view keeps the index open: a view opened before the damage is met
# reads, after the check, the index the check built, not the one kept aside
damage_text "$IDX" tinyweb/sessions/base.py
rm -f "$T"/idx.sqlite.corrupt-*
run_ui 120 30 -- --policy offline --index "$IDX" --iterations 6 --seed 3 "$T/repo" "How are URL rules registered?"
wait_for 'done: ' 1500
ok $? "a question that reads no damaged text is answered"
! grep -q 'damaged' "$T/screen"
ok $? "and nothing is said of damage"
focus_pane Answer && keys Enter && wait_for '│ [^ ]+:[0-9]+-[0-9]+[ ━]+line [0-9]+/[0-9]+'
ok $? "its first citation opens in the file view"
keys Escape a
wait_for '^Ask:'
keys "$Q" Enter
# done, with the answer to this question: the last one's status said done
# too, and its screen stays until the new question is taken; the answer being
# written (and dropped when the damage is met) has no citations yet
wait_screen 1500 screen_has 'done: ' 'Answer.*cite 1/' 'In short:.*SessionBase\.flush'
ok $? "the question asked from the question line is answered"
said_damage
ok $? "the damage was met, said, and the index checked"
ls "$T"/idx.sqlite.corrupt-* >/dev/null 2>&1
ok $? "the damaged index is kept aside again"
focus_pane Answer && keys Enter && wait_for 'base\.py:67-74[ ━]+line [0-9]+/[0-9]+'
ok $? "the first citation, in the file that was damaged, opens in the file view"
like "$(cat "$T/screen")" "def flush(self):" "showing its text from the rebuilt index"
keys Escape q
wait_for '^EXIT=0'

echo "1..$n"
exit $fail
