#!/bin/sh
# probe out_foreign: --out naming a file that is not an answers file is refused, named, and left as it was
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
questions "$T/q.jsonl" 1
printf "my notes\nmore notes" >"$T/notes.txt"; cp "$T/notes.txt" "$T/notes.orig"
drqa --quiet --batch "$T/q.jsonl" --out "$T/notes.txt"
[ "$rc" = 2 ] || failed "status $rc"
grep -q "notes.txt:1:" "$T/err" || failed "the line is not named"
cmp -s "$T/notes.txt" "$T/notes.orig" || failed "the file changed"
held
