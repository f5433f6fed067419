#!/bin/sh
# probe out_malformed_middle: an answers file with a malformed line in the middle is refused and left as it was
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
questions "$T/q.jsonl" 4
drqa --quiet --batch "$T/q.jsonl" --out "$T/a.jsonl"
{ head -n 1 "$T/a.jsonl"; echo "{\"id\": 2, \"quest"; sed -n "3,\$p" "$T/a.jsonl"; } >"$T/m.jsonl"
cp "$T/m.jsonl" "$T/m.orig"
drqa --quiet --batch "$T/q.jsonl" --out "$T/m.jsonl"
[ "$rc" = 2 ] || failed "status $rc"
grep -q "m.jsonl:2:" "$T/err" || failed "the line is not named"
cmp -s "$T/m.jsonl" "$T/m.orig" || failed "the file changed"
held
