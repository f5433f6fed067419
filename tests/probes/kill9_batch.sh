#!/bin/sh
# probe kill9_batch: kill -9 during --batch --jobs 2, then resuming, loses and duplicates no answer
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
n=$((12 + 4 * PROBE_SCALE))
questions "$T/q.jsonl" $n
k=0
while [ $k -lt $((2 * PROBE_SCALE)) ]; do
    "$DRQA" --index "$IDX" --no-progress --quiet --policy offline --jobs 2 --batch "$T/q.jsonl" --out "$T/o.jsonl" "$R" 2>/dev/null &
    p=$!
    want=$(( $(nlines "$T/o.jsonl") + 1 ))
    i=0
    while [ "$(nlines "$T/o.jsonl")" -lt $want ] && kill -0 $p 2>/dev/null && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
    kill -9 $p 2>/dev/null
    wait $p 2>/dev/null
    k=$((k + 1))
done
drqa --quiet --jobs 2 --batch "$T/q.jsonl" --out "$T/o.jsonl"
[ "$rc" = 0 ] || failed "the resumed run: status $rc: $(cat "$T/err")"
ids_once "$T/o.jsonl" $n || failed "an answer lost or written twice"
held
