#!/bin/sh
# probe out_partial_last: a last line cut short by a kill is dropped and its question answered again
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
questions "$T/q.jsonl" 3
drqa --quiet --batch "$T/q.jsonl" --out "$T/a.jsonl"
head -c $(( $(head -n 2 "$T/a.jsonl" | wc -c) + 40 )) "$T/a.jsonl" >"$T/p.jsonl"
drqa --batch "$T/q.jsonl" --out "$T/p.jsonl"
[ "$rc" = 0 ] || failed "status $rc"
grep -q "dropped a partial last line" "$T/err" || failed "the drop is not said"
ids_once "$T/p.jsonl" 3 || failed "an id lost or doubled"
held
