#!/bin/sh
# probe out_is_input: --out naming the questions file (also through a hard link) is refused
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
questions "$T/q.jsonl" 1
ln "$T/q.jsonl" "$T/link.jsonl"
cp "$T/q.jsonl" "$T/q.orig"
drqa --quiet --batch "$T/q.jsonl" --out "$T/link.jsonl"
[ "$rc" = 2 ] || failed "status $rc"
cmp -s "$T/q.jsonl" "$T/q.orig" || failed "the questions file changed"
held
