#!/bin/sh
# probe out_dup_refused: an --out file holding an id twice is refused and left as it was
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
questions "$T/q.jsonl" 3
drqa --quiet --batch "$T/q.jsonl" --out "$T/a.jsonl"
cat "$T/a.jsonl" "$T/a.jsonl" >"$T/d.jsonl"; cp "$T/d.jsonl" "$T/d.orig"
drqa --quiet --batch "$T/q.jsonl" --out "$T/d.jsonl"
[ "$rc" = 2 ] || failed "status $rc"
grep -q "d.jsonl:4: the id of this answer is also the id of line 1" "$T/err" || failed "the lines are not named"
cmp -s "$T/d.jsonl" "$T/d.orig" || failed "the file changed"
held
