#!/bin/sh
# probe index_foreign: --index naming a file that is not an index (a text file, another program's database) is refused and left as it was
. "${top_srcdir:-.}/tests/probe_lib.sh"

echo "my notes" >"$T/notes.txt"; cp "$T/notes.txt" "$T/notes.orig"
"$DRQA" --index "$T/notes.txt" --no-progress --quiet --index-only "$R" >/dev/null 2>"$T/err"
[ "$?" = 2 ] || failed "a text file as --index was not refused"
cmp -s "$T/notes.txt" "$T/notes.orig" || failed "the text file changed"
sqlite3 "$T/other.db" "CREATE TABLE t(x); INSERT INTO t VALUES(1)"
cp "$T/other.db" "$T/other.orig"
"$DRQA" --index "$T/other.db" --no-progress --quiet --index-only "$R" >/dev/null 2>"$T/err"
[ "$?" = 2 ] || failed "a foreign database as --index was not refused"
cmp -s "$T/other.db" "$T/other.orig" || failed "the foreign database changed"
held
