#!/bin/sh
# test_data_safety_index.sh: what the indexer does with what it finds at the
# index path and in the repository. Only a file that is one of the project's
# indexes is ever replaced (a foreign database, a text file, a FIFO, a device,
# a directory, a symlink are refused with exit 2 and left as they were); a
# file swapped for a link between the scan and the read never brings outside
# content into the index; a damaged index is kept aside and rebuilt; the
# indexing options are recorded in the index; an edit that restores size and
# mtime is still seen, and --verify hashes every file; a failed first build
# leaves no side file.
set -u
: "${top_srcdir:?}" "${top_builddir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
# $DRQA_HOOKS: the program with the test hooks DRQA_TEST_SWAP and DRQA_TEST_KILL_AFTER
. "$top_srcdir/tests/lib.sh"
FIX="$top_srcdir/tests/fixtures/pyrepo"
q() { sqlite3 -batch "$1" "$2"; }
# the same with the functions that read file texts (drqa_text, the view chunks' text)
qt() { "$PYTHON3" "$top_srcdir/tests/index_sql.py" "$1" "$2"; }
# drops the rows a fresh index derives for questions (src/derive.h), as an
# index an older drqa-tui built has none: its first question derives them
# again, reading every chunk (a later question reads what it needs only)
underive() { q "$1" "DELETE FROM vec_models; DELETE FROM lp_meta; DELETE FROM act_names"; }
index() {  # index REPO INDEX [extra options]: JSON in $T/out.json, stderr in $T/err.txt, status returned
    r=$1 i=$2; shift 2
    "$DRQA" --json --no-progress --index "$i" "$@" --index-only "$r" >"$T/out.json" 2>"$T/err.txt"
}
index_hooks() {  # index_hooks REPO INDEX: as index, with the program that has the test hooks
    r=$1 i=$2; shift 2
    "$DRQA_HOOKS" --json --no-progress --index "$i" "$@" --index-only "$r" >"$T/out.json" 2>"$T/err.txt"
}
R="$T/repo"
cp -R "$FIX" "$R"

# ---- 1. the index path: only our own indexes are replaced -------------------------------
O="$T/other.db"
sqlite3 "$O" "CREATE TABLE t(x); INSERT INTO t VALUES('keep me')"
index "$R" "$O"
is "$?" 2 "a foreign sqlite database as --index: exit 2"
like "$(cat "$T/err.txt")" "'$O' is an sqlite database of another application, not a drqa-tui index" \
    "the message names the path and what it is"
like "$(cat "$T/err.txt")" "pass --index with the path of a drqa-tui index or of a new file" "and says what to do"
is "$(q "$O" "SELECT group_concat(name) FROM sqlite_master") $(q "$O" "SELECT x FROM t")" "t keep me" \
    "the foreign database keeps its table and row"
test ! -e "$O.tmp"
ok $? "no side file is made next to it"
"$DRQA" --no-progress --index "$O" --action ListFiles '{}' "$R" >/dev/null 2>"$T/err.txt"
is "$?" 2 "--action with a foreign database as --index: exit 2"
"$DRQA" --no-progress --index "$O" --ask "where is the session flushed?" "$R" >/dev/null 2>"$T/err.txt"
is "$?" 2 "--ask with a foreign database as --index: exit 2"
is "$(q "$O" "SELECT group_concat(name) FROM sqlite_master") $(q "$O" "SELECT x FROM t")" "t keep me" \
    "after --action and --ask too"

printf 'notes that are not a database, kept as they are\n%.0s' 1 2 3 4 5 >"$T/notes.txt"
cp "$T/notes.txt" "$T/notes.orig"
index "$R" "$T/notes.txt"
is "$?" 2 "a text file as --index: exit 2"
like "$(cat "$T/err.txt")" "is not an sqlite database" "the message says it is not a database"
cmp -s "$T/notes.txt" "$T/notes.orig"
ok $? "the text file is unchanged"

mkfifo "$T/fifo"
timeout 20 "$DRQA" --json --no-progress --index "$T/fifo" --index-only "$R" >/dev/null 2>"$T/err.txt"
is "$?" 2 "a FIFO as --index: exit 2, without blocking on it"
like "$(cat "$T/err.txt")" "'$T/fifo' is a FIFO, not an index file" "the message says it is a FIFO"
test -p "$T/fifo"
ok $? "the FIFO is still a FIFO"

mkdir "$T/adir"
index "$R" "$T/adir"
is "$?" 2 "a directory as --index: exit 2"
like "$(cat "$T/err.txt")" "is a directory" "the message says it is a directory"

ln -s "$T/notes.txt" "$T/link.sqlite"
index "$R" "$T/link.sqlite"
is "$?" 2 "a symlink as --index: exit 2 (a rename would replace the link)"
test -L "$T/link.sqlite" && cmp -s "$T/notes.txt" "$T/notes.orig"
ok $? "the link and its target are unchanged"

if [ "$(id -u)" = 0 ] && mknod "$T/null" c 1 3 2>/dev/null; then
    index "$R" "$T/null"
    is "$?" 2 "a character device as --index: exit 2"
    test -c "$T/null"
    ok $? "the device node is still a device node"
else
    skip "mknod needs root"
    skip "mknod needs root"
fi

I="$T/idx/a.sqlite"
index "$R" "$I"
ok $? "a new index is built"
# the schema version the program writes, as its source states it
SCHEMA=$(sed -n 's/^#define STORE_SCHEMA_VERSION \([0-9][0-9]*\).*/\1/p' "$top_srcdir/src/store.h")
is "$(q "$I" "PRAGMA application_id") $(q "$I" "PRAGMA user_version")" "1146245441 $SCHEMA" \
    "it carries the project's application_id and the schema version"
# an index written before the marker (as by the previous release): no
# application_id, an older user_version, known by its meta and files tables
q "$I" "PRAGMA application_id = 0; PRAGMA user_version = 5" >/dev/null
index "$R" "$I"
ok $? "an older index of the project's (no marker) is accepted"
is "$(jget "$T/out.json" rebuilt) $(jget "$T/out.json" files.added)" "true 15" "and rebuilt from scratch"
is "$(q "$I" "PRAGMA application_id") $(q "$I" "PRAGMA user_version")" "1146245441 $SCHEMA" "now with the marker"
: >"$T/empty.sqlite"
index "$R" "$T/empty.sqlite"
ok $? "an empty file as --index is used (nothing to lose)"

# ---- 5. a file swapped for a link after the scan ---------------------------------------
printf 'OUTSIDE_SECRET = "must never be indexed"\n' >"$T/outside.py"
S="$T/swap"
cp -R "$FIX" "$S"
DRQA_TEST_SWAP="symlink:tinyweb/auth.py:$T/outside.py" index_hooks "$S" "$T/idx/swap.sqlite"
ok $? "a file swapped for a symlink during indexing: exit 0"
is "$(qt "$T/idx/swap.sqlite" "SELECT count(*) FROM files WHERE instr(drqa_text(ztext, tlen), 'OUTSIDE_SECRET')") $(qt "$T/idx/swap.sqlite" "SELECT count(*) FROM chunks WHERE instr(text, 'OUTSIDE_SECRET')")" \
   "0 0" "the symlink's outside content is not in the index"
is "$(q "$T/idx/swap.sqlite" "SELECT reason FROM skipped WHERE path = 'tinyweb/auth.py'")" \
   "changed into a symbolic link after the scan; not read" "the file is skipped with its reason"
rm -rf "$S"
cp -R "$FIX" "$S"
# a directory on the path swapped for a link: the component walk does not follow it
mkdir "$T/outdir" && cp "$T/outside.py" "$T/outdir/scaffold.py"
DRQA_TEST_SWAP="symlink:tinyweb/core:$T/outdir" "$DRQA_HOOKS" --json --no-progress --index "$T/idx/swap4.sqlite" --index-only "$S" \
    >"$T/out.json" 2>"$T/err.txt"
is "$(qt "$T/idx/swap4.sqlite" "SELECT count(*) FROM files WHERE instr(drqa_text(ztext, tlen), 'OUTSIDE_SECRET')")" "0" \
   "a directory swapped for a link to an outside directory: nothing of it is indexed"
rm -rf "$S"
cp -R "$FIX" "$S"
DRQA_TEST_SWAP="hardlink:tinyweb/auth.py:$T/outside.py" index_hooks "$S" "$T/idx/swap2.sqlite"
ok $? "a file swapped for another file (a hard link) during indexing: exit 0"
is "$(qt "$T/idx/swap2.sqlite" "SELECT count(*) FROM files WHERE instr(drqa_text(ztext, tlen), 'OUTSIDE_SECRET')")" "0" \
   "the other file's content is not in the index (device and inode differ from the scan's)"
is "$(q "$T/idx/swap2.sqlite" "SELECT reason FROM skipped WHERE path = 'tinyweb/auth.py'")" \
   "replaced by another file after the scan; not read" "the file is skipped with its reason"

# ---- 8. a damaged index is found, kept aside and rebuilt --------------------------------
C="$T/idx/c.sqlite"
index "$R" "$C"
index "$R" "$C" --check
ok $? "--check on a sound index: exit 0"
is "$(jget "$T/out.json" check.result)" "ok" "and reports it sound"
"$DRQA" --no-progress --index "$C" --index-only --check "$R" >"$T/out.txt" 2>&1
like "$(cat "$T/out.txt")" "check        ok (sqlite quick_check, every file text, chunk text and docstring read whole)" "the text output says so"
# 64 KiB of a fixed pattern over the middle of the file
smash() { $PYTHON3 -c 'import os, sys
p = sys.argv[1]; f = open(p, "r+b"); f.seek(os.path.getsize(p) // 2); f.write(b"\xa5" * 65536); f.close()' "$1"; }
smash "$C"
cp "$C" "$T/broken.copy"
index "$R" "$C" --check
ok $? "--check on a damaged index: exit 0 (rebuilt)"
is "$(jget "$T/out.json" check.result) $(jget "$T/out.json" rebuilt) $(jget "$T/out.json" files.added)" "damaged true 15" \
   "it reports the damage and rebuilds the index"
aside=$(jget "$T/out.json" check.kept_as)
like "$aside" "$C.corrupt-" "the damaged file is kept aside as PATH.corrupt-TIME"
cmp -s "$aside" "$T/broken.copy"
ok $? "byte for byte"
like "$(cat "$T/err.txt")" "the index '$C' was damaged" "stderr says what happened"
is "$(q "$C" "PRAGMA quick_check")" "ok" "the rebuilt index is sound"
smash "$C"
index "$R" "$C" --check
test "$(ls "$T/idx" | grep -c '^c.sqlite.corrupt-[0-9-]*$')" = 2
ok $? "a second damaged index kept aside never replaces the first"
# damaged where the update reads nothing of it (the chunks' pages, which every
# search reads): the search that fails to read it repairs it
index "$R" "$C"
underive "$C"
page=$(q "$C" "SELECT min(pageno) FROM dbstat WHERE name = 'chunk_spans'")
psize=$(q "$C" "PRAGMA page_size")
$PYTHON3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); f.write(b"\xa5" * int(sys.argv[3])); f.close()' \
    "$C" $(( (page - 1) * psize )) "$psize"
"$DRQA" --no-progress --index "$C" --ask "where is the session flushed?" "$R" >"$T/ask.txt" 2>"$T/err.txt"
is "$?" 0 "--ask on a damaged index: exit 0"
like "$(cat "$T/err.txt")" "was damaged" "it says the index was damaged and rebuilt"
test -s "$T/ask.txt"
ok $? "and answers"
# a truncated index: opening fails, the plain update repairs it
index "$R" "$C"
truncate -s 60000 "$C"
index "$R" "$C"
ok $? "a truncated index: the plain update exits 0"
is "$(jget "$T/out.json" check.result) $(jget "$T/out.json" files.added)" "damaged 15" "it is rebuilt"
like "$(cat "$T/err.txt")" "was damaged" "stderr says so"
"$DRQA" --no-progress --index "$C" --action ListFiles '{}' "$R" >/dev/null 2>&1
is "$?" 0 "the next --action reads the rebuilt index"

# a damaged file text (each file's text is stored compressed; sqlite finds
# the index sound): it is never shown, every reader of it fails saying so and
# what to do, and --check, or an update that meets it, rebuilds the index
Z="$T/idx/z.sqlite"
index "$R" "$Z"
"$DRQA" --no-progress --quiet --policy offline --index "$Z" --ask "where is the session flushed?" "$R" >/dev/null 2>&1
ok $? "a question stores the derived data of a sound index"
damage_text() {  # damage_text INDEX PATH: one bit flipped in the middle of the file's stored text
    $PYTHON3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
z = bytearray(db.execute("SELECT ztext FROM files WHERE path = ?", (sys.argv[2],)).fetchone()[0])
z[len(z) // 2] ^= 0x10
db.execute("UPDATE files SET ztext = ? WHERE path = ?", (bytes(z), sys.argv[2]))
db.commit()' "$1" "$2"
}
damage_text "$Z" tinyweb/sessions/base.py
is "$(q "$Z" "PRAGMA quick_check")" "ok" "sqlite finds nothing wrong with the damaged text"
act() {  # act NAME JSON: the action on the damaged index, stdout in $T/act.out, stderr in $T/act.err
    "$DRQA" --no-progress --index "$Z" --action "$1" "$2" "$R" >"$T/act.out" 2>"$T/act.err"
}
act ViewCode '{"code_span_list": ["tinyweb/sessions/base.py:60-70"]}'
is "$?" 1 "ViewCode of the damaged file: exit 1"
like "$(cat "$T/act.err")" "cannot read the index: the index holds a damaged file text (" "saying what is wrong"
like "$(cat "$T/act.err")" "run drqa-tui --index-only --check on the repository" "and what to do"
is "$(wc -c <"$T/act.out")" 0 "and printing nothing of it"
act ViewCode '{"code_span_list": ["tinyweb/auth.py:1-3"]}'
is "$?" 0 "ViewCode of another file works"
act FindFunction '{"function_name": "flush"}'
is "$?:$(grep -c 'damaged file text' "$T/act.err")" "1:1" "FindFunction whose definition is in the damaged file fails saying why"
act FindCodeSnippet '{"code_snippet": "self._session_key = None"}'
is "$?:$(grep -c 'damaged file text' "$T/act.err")" "1:1" "FindCodeSnippet reading the damaged file among its candidates"
act FindCodeSnippet '{"code_snippet": "}) ;"}'
is "$?:$(grep -c 'damaged file text' "$T/act.err")" "1:1" "FindCodeSnippet scanning every file (no term to search for)"
"$DRQA" --no-progress --quiet --policy offline --index "$Z" --ask "where is the session flushed?" "$R" >"$T/ask.out" 2>"$T/ask.err"
is "$?" 0 "--ask over the damaged text: exit 0"
like "$(cat "$T/ask.err")" "found damaged while answering; checking it and asking again: the index holds a damaged file text" \
   "the damage a search met is told"
like "$(cat "$T/ask.err")" "the index was rebuilt" "the index is checked and rebuilt"
grep -q "tinyweb/sessions/base.py" "$T/ask.out"
ok $? "and the question answered again from it, with the file that was damaged"
damage_text "$Z" tinyweb/sessions/base.py
index "$R" "$Z" --check
ok $? "--check: exit 0"
is "$(jget "$T/out.json" check.result) $(jget "$T/out.json" rebuilt)" "damaged true" "it finds the damaged text and rebuilds"
like "$(cat "$T/err.txt")" "the stored text of 'tinyweb/sessions/base.py' is damaged" "naming the file"
act ViewCode '{"code_span_list": ["tinyweb/sessions/base.py:67-67"]}'
is "$?" 0 "the rebuilt index reads the file"
like "$(cat "$T/act.out")" "def flush(self):" "with its text"
# an update that meets a damaged text (the file changed: its old rows are
# deleted, which reads the old text for the full-text index)
damage_text "$Z" tinyweb/sessions/base.py
printf '\n# edited\n' >>"$R/tinyweb/sessions/base.py"
index "$R" "$Z"
ok $? "an update meeting a damaged text: exit 0"
is "$(jget "$T/out.json" check.result) $(jget "$T/out.json" rebuilt)" "damaged true" "it rebuilds the index"
act ViewCode '{"code_span_list": ["tinyweb/sessions/base.py:67-67"]}'
is "$?" 0 "which reads the file again"
# a damaged class outline (kept packed against its class's lines): never
# another text; a question over it says so, sets the index aside, rebuilds it
# and answers
underive "$Z"
$PYTHON3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for cid, z in db.execute("SELECT id, text FROM chunk_spans WHERE typeof(text) = '"'blob'"'").fetchall():
    z = bytearray(z)
    z[len(z) // 2] ^= 0x20
    db.execute("UPDATE chunk_spans SET text = ? WHERE id = ?", (bytes(z), cid))
db.commit()' "$Z"
is "$(q "$Z" "PRAGMA quick_check")" "ok" "sqlite finds nothing wrong with the damaged outlines"
"$DRQA" --no-progress --policy offline --index "$Z" --ask "where is the session flushed?" "$R" >"$T/ask.out" 2>"$T/ask.err"
is "$?" 0 "--ask over damaged outlines: exit 0"
like "$(cat "$T/ask.err")" "was damaged (the index holds a damaged chunk text" "saying what was damaged"
like "$(cat "$T/ask.err")" "the index was rebuilt" "and that the index was rebuilt"
test -s "$T/ask.out"
ok $? "and answers"
index "$R" "$Z" --check
is "$(jget "$T/out.json" check.result)" "ok" "the rebuilt index is sound"
# damaged packed docstrings (src/store_rows.h): the same
damage_docs() {
    $PYTHON3 -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
n = 0
for sid, z in db.execute("SELECT id, docstring FROM symbols WHERE typeof(docstring) = '"'blob'"'").fetchall():
    z = bytearray(z)
    z[len(z) // 2] ^= 0x20
    db.execute("UPDATE symbols SET docstring = ? WHERE id = ?", (bytes(z), sid))
    n += 1
db.commit()
print(n)' "$1"
}
n_docs=$(damage_docs "$Z")
test "$n_docs" -gt 0
ok $? "the index holds packed docstrings to damage ($n_docs)"
is "$(q "$Z" "PRAGMA quick_check")" "ok" "sqlite finds nothing wrong with the damaged docstrings"
"$DRQA" --no-progress --policy offline --index "$Z" --ask "where is the session flushed?" "$R" >"$T/ask.out" 2>"$T/ask.err"
is "$?" 0 "--ask over damaged docstrings: exit 0"
like "$(cat "$T/ask.err")" "was damaged (the index holds a damaged docstring" "saying what was damaged"
like "$(cat "$T/ask.err")" "the index was rebuilt" "and that the index was rebuilt"
grep -q "flush" "$T/ask.out"
ok $? "and answers"
is "$(grep -c "still damaged after its check" "$T/ask.err")" 0 "from the rebuilt index: nothing is missing"
# --batch does not rebuild under its questions: each answer names the damage it met
damage_docs "$Z" >/dev/null
printf '{"id": "q1", "question": "where is the session flushed?"}\n' >"$T/batch.jsonl"
"$DRQA" --no-progress --policy offline --index "$Z" --batch "$T/batch.jsonl" --out "$T/batch.out" "$R" 2>"$T/batch.err"
is "$?" 0 "--batch over damaged docstrings: exit 0"
is "$($PYTHON3 -c 'import json, sys
a = json.loads(open(sys.argv[1]).readline())
print("stop_reason" in a, "damaged docstring" in a.get("index_damage", ""))' "$T/batch.out")" "True True" \
   "its answer names the damage in index_damage"
index "$R" "$Z" --check
is "$(jget "$T/out.json" check.result) $(jget "$T/out.json" rebuilt)" "damaged true" "--check finds damaged docstrings and rebuilds"
like "$(cat "$T/err.txt")" "damaged docstring" "naming what is damaged"
index "$R" "$Z" --check
is "$(jget "$T/out.json" check.result)" "ok" "the rebuilt index is sound"

# ---- 9. indexing options are recorded in the index ---------------------------------------
B="$T/big"
cp -R "$FIX" "$B"
$PYTHON3 -c 'open("'"$B"'/big.py", "w").write("x = 1\n" * 250000)'   # 1.5 MB
M="$T/idx/m.sqlite"
index "$B" "$M" --max-file-size 2000000
is "$(jget "$T/out.json" files.indexed)" 16 "--max-file-size 2000000 indexes the 1.5 MB file"
index "$B" "$M"
is "$(jget "$T/out.json" files.indexed) $(jget "$T/out.json" files.deleted)" "16 0" \
   "a later run without the option keeps it (the recorded limit)"
is "$(jget "$T/out.json" options.max_file_size) $(jget "$T/out.json" options.max_file_size_recorded)" "2000000 true" \
   "--json reports the recorded limit"
"$DRQA" --no-progress --index "$M" --index-only "$B" >"$T/out.txt" 2>&1
like "$(cat "$T/out.txt")" "--max-file-size 2000000 (recorded in the index" "the text output says a recorded value is used"
index "$B" "$M" --max-file-size 1048576
is "$(jget "$T/out.json" files.indexed) $(jget "$T/out.json" options.max_file_size_recorded)" "15 false" \
   "giving the option again replaces it"
index "$B" "$M"
is "$(jget "$T/out.json" files.indexed) $(jget "$T/out.json" options.max_file_size)" "15 1048576" \
   "and the new value is the one kept"

# ---- 10. same-size edits with a restored mtime; --verify --------------------------------
E="$T/edit"
cp -R "$FIX" "$E"
X="$T/idx/e.sqlite"
index "$E" "$X"
f="$E/tinyweb/auth.py"
touch -r "$f" "$T/stamp"
sed 's/import/IMPORT/' "$f" >"$T/tmp.py" && cat "$T/tmp.py" >"$f"   # same size, same inode
touch -r "$T/stamp" "$f"
index "$E" "$X"
is "$(jget "$T/out.json" files.updated)" 1 "an edit with the same size and a restored mtime is seen (ctime)"
is "$(qt "$X" "SELECT count(*) FROM files WHERE path = 'tinyweb/auth.py' AND instr(drqa_text(ztext, tlen), 'IMPORT')")" 1 \
   "its new text is indexed"
# the index disagrees with a file whose stat has not moved (as a change the
# stat cannot see would leave it): a plain run keeps it, --verify finds it.
# (Only the hash is changed: the rows of the file's chunks are read back
# against its stored text, which must stay theirs.)
"$PYTHON3" -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("UPDATE files SET hash = ? WHERE path = ?", ("0000000000000000", "tinyweb/routing.py"))
db.commit()' "$X"
index "$E" "$X"
is "$(jget "$T/out.json" files.unchanged)" 15 "a plain run trusts the stat"
index "$E" "$X" --verify
ok $? "--verify: exit 0"
is "$(jget "$T/out.json" verify.hashed) $(jget "$T/out.json" verify.differed)" "15 1" \
   "--verify hashes every file and finds the one that differs"
is "$(qt "$X" "SELECT count(*) FROM files WHERE path = 'tinyweb/routing.py' AND hash <> '0000000000000000'")" 1 "and re-indexes it"
"$DRQA" --no-progress --index "$X" --index-only --verify "$E" >"$T/out.txt" 2>&1
like "$(cat "$T/out.txt")" "verify       15 files hashed: 0 differed" "the text output prints how many"
"$DRQA" --no-progress --index "$X" --verify --ask "x" "$E" >/dev/null 2>"$T/err.txt"
is "$?" 2 "--verify outside --index-only is a usage error"

# ---- 12. a failed first build leaves no side file --------------------------------------
NOBODY=65534
U="$T/closed"
cp -R "$FIX" "$U"
chmod 000 "$U"
if [ "$(id -u)" != 0 ]; then
    "$DRQA" --no-progress --index "$T/idx/u.sqlite" --index-only "$U" >/dev/null 2>"$T/err.txt"
    st=$?; d="$T/idx"
elif command -v setpriv >/dev/null 2>&1 &&
     setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$DRQA" --version >/dev/null 2>&1; then
    chmod 755 "$T"
    mkdir "$T/nb" && chown $NOBODY:$NOBODY "$T/nb"
    setpriv --reuid=$NOBODY --regid=$NOBODY --clear-groups "$DRQA" --no-progress --index "$T/nb/u.sqlite" \
        --index-only "$U" >/dev/null 2>"$T/err.txt"
    st=$?; d="$T/nb"
else
    st=skip
fi
if [ "$st" != skip ]; then
    is "$st" 1 "a repository that cannot be read: exit 1"
    like "$(cat "$T/err.txt")" "Permission denied" "the message says why"
    is "$(ls -A "$d" | grep -c '^u\.sqlite')" 0 "no index and no empty .sqlite.tmp left behind"
else
    for k in 1 2 3; do skip "root without setpriv: cannot make an unreadable repository"; done
fi
chmod 755 "$U"
# a kill in the middle of a first build or an update still leaves the previous index usable
K="$T/idx/k.sqlite"
index "$R" "$K"
printf '\nKILLED_MARKER = 1\n' >>"$R/tinyweb/app.py"
printf '\nKILLED_MARKER = 2\n' >>"$R/tinyweb/auth.py"
DRQA_TEST_KILL_AFTER=1 "$DRQA_HOOKS" --no-progress --index "$K" --index-only "$R" >/dev/null 2>&1
is "$?" 137 "an update killed after one file"
"$DRQA" --no-progress --index "$K" --action ListFiles '{}' "$R" >/dev/null 2>&1
is "$?" 0 "the previous index still answers"
is "$(q "$K" "PRAGMA quick_check")" "ok" "and is sound"

# ---- a fresh build reaches the disk before it takes the index path -------------------
# (built with synchronous=OFF: without an fsync before the rename, a power
# loss could leave a half-written file where the previous index was)
if command -v strace >/dev/null 2>&1; then
    D="$T/idx/durable.sqlite"
    # LeakSanitizer cannot run under a tracer: the sanitizer build checks leaks elsewhere
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -y -e trace=fsync,fdatasync,rename,renameat,renameat2 -o "$T/durable.strace" \
            "$DRQA" --no-progress --index "$D" --index-only "$R" >/dev/null 2>&1
    is "$?" 0 "a fresh build under strace"
    $PYTHON3 - "$T/durable.strace" "$D" >"$T/durable.order" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().splitlines()
side = sys.argv[2] + ".tmp"
synced = renamed = dirsync = -1
for i, l in enumerate(lines):
    if re.search(r"f(data)?sync\(\d+<%s>\)" % re.escape(side), l) and synced < 0:
        synced = i
    if "rename" in l and '"%s"' % side in l:
        renamed = i
    if renamed >= 0 and i > renamed and re.search(r"fsync\(\d+<[^>]*/idx>\)", l):
        dirsync = i
print(synced >= 0, renamed > synced >= 0, dirsync > renamed)
EOF
    is "$(cat "$T/durable.order")" "True True True" \
        "the side file is synced before its rename into place, and the directory after it"
else
    ok 1 "strace is needed to see the fsync before the rename (scripts/deps-debian.sh installs it)"
fi

# ---- cached remote embeddings survive a rebuild -------------------------------------------
# The index is the only copy of the vectors a remote embeddings model gave (a
# call per chunk text): a rebuild for another schema, or of a damaged index,
# takes over those of chunk texts it still has, and drops the rest.
E="$T/idx/emb.sqlite"
index "$R" "$E"
seed_embeddings() {  # two vectors of chunks the tree has, one of a text it no longer has,
    # an earlier layout's local vector and a row whose blob is not dim floats
    q "$1" "INSERT INTO embeddings(hash, model, dim, vec)
              SELECT hash, 'text-embedding-3-small', 4, x'0000803f000000400000404000008040' FROM
                (SELECT DISTINCT c.hash FROM chunk_spans c JOIN symbols s ON s.id = c.symbol_id
                 WHERE s.qualname IN ('SessionBase.flush', 'logout'));
            INSERT INTO embeddings VALUES('ffffffffffffffff', 'text-embedding-3-small', 4, x'00000000000000000000000000000000');
            INSERT INTO embeddings SELECT hash, 'local:hash256', 4, x'00000000000000000000000000000000' FROM chunk_spans LIMIT 1;
            INSERT INTO embeddings SELECT hash, 'nomic-embed-text', 4, x'000000' FROM chunk_spans LIMIT 1;"
}
emb_rows() { q "$1" "SELECT count(*) || ' ' || sum(hash IN (SELECT hash FROM chunk_spans)) || ' ' || sum(vec = x'0000803f000000400000404000008040') FROM embeddings"; }
seed_embeddings "$E"
is "$(emb_rows "$E")" "5 4 2" "an index holding cached vectors (and rows not to keep)"
q "$E" "PRAGMA user_version = $((SCHEMA - 1))" >/dev/null
index "$R" "$E"
is "$(jget "$T/out.json" rebuilt) $(jget "$T/out.json" embeddings_kept)" "true 2" \
    "a rebuild for another schema takes over the two vectors of texts the tree still has"
is "$(emb_rows "$E")" "2 2 2" "they are in the new index, byte for byte; the stale, local and malformed rows are not"
like "$(cat "$T/err.txt")" "its 2 cached embeddings of chunk texts still present were kept" "stderr says so"
index "$R" "$E"
is "$(jget "$T/out.json" rebuilt) $(jget "$T/out.json" embeddings_kept) $(emb_rows "$E")" "false 0 2 2 2" \
    "the next update rebuilds nothing and keeps them"
# damaged where the embeddings are not: the rebuild of --check takes them over from the file set aside
E2="$T/idx/emb2.sqlite"
index "$R" "$E2"
seed_embeddings "$E2"
page=$(q "$E2" "SELECT min(pageno) FROM dbstat WHERE name = 'chunk_spans'")
psize=$(q "$E2" "PRAGMA page_size")
$PYTHON3 -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); f.write(b"\xa5" * int(sys.argv[3])); f.close()' \
    "$E2" $(( (page - 1) * psize )) "$psize"
index "$R" "$E2" --check
is "$(jget "$T/out.json" check.result) $(jget "$T/out.json" embeddings_kept)" "damaged 2" \
    "a damaged index rebuilt: the vectors are taken over from the damaged file"
is "$(emb_rows "$E2")" "2 2 2" "the rebuilt index holds them"
aside=$(jget "$T/out.json" check.kept_as)
test ! -e "$aside-shm"
ok $? "reading the file set aside leaves nothing beside it"

echo "1..$n"
exit $fail
