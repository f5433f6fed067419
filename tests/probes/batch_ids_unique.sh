#!/bin/sh
# probe batch_ids_unique: a questions file with one id twice is refused before any work, naming both lines
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
printf "%s\n" "{\"id\": \"a\", \"question\": \"$Q\"}" "{\"id\": \"a\", \"question\": \"What does routing do?\"}" >"$T/q.jsonl"
drqa --quiet --batch "$T/q.jsonl" --out "$T/o.jsonl"
[ "$rc" = 2 ] || failed "status $rc"
grep -q "q.jsonl:2: id \"a\" is also the id of line 1" "$T/err" || failed "$(cat "$T/err")"
[ -s "$T/o.jsonl" ] && failed "something was answered"
held
