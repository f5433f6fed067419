#!/bin/sh
# probe out_ids_text: ids no double holds (1e400, 12345678901234567890) are written back as given and matched on resume
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
printf "%s\n" "{\"id\": 1e400, \"question\": \"$Q\"}" "{\"id\": 12345678901234567890, \"question\": \"$Q\"}" >"$T/q.jsonl"
drqa --quiet --batch "$T/q.jsonl" --out "$T/o.jsonl"
[ "$rc" = 0 ] || failed "status $rc"
[ "$(cut -d, -f1 "$T/o.jsonl" | tr "\n" " ")" = "{\"id\":1e400 {\"id\":12345678901234567890 " ] || failed "ids changed: $(cut -d, -f1 "$T/o.jsonl")"
drqa --quiet --batch "$T/q.jsonl" --out "$T/o.jsonl"
[ "$(nlines "$T/o.jsonl")" = 2 ] || failed "answered again on resume"
held
