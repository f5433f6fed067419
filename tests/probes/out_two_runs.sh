#!/bin/sh
# probe out_two_runs: two --batch runs at once on one --out never write an id twice
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
n=$((8 + 2 * PROBE_SCALE))
questions "$T/q.jsonl" $n
round=0
while [ $round -lt "$PROBE_SCALE" ]; do
    rm -f "$T/o.jsonl"
    "$DRQA" --index "$IDX" --no-progress --quiet --policy offline --batch "$T/q.jsonl" --out "$T/o.jsonl" "$R" 2>/dev/null &
    p1=$!
    "$DRQA" --index "$IDX" --no-progress --quiet --policy offline --batch "$T/q.jsonl" --out "$T/o.jsonl" "$R" 2>/dev/null &
    p2=$!
    wait $p1; r1=$?; wait $p2; r2=$?
    case "$r1$r2" in 00|05|50) ;; *) failed "statuses $r1 and $r2" ;; esac
    ids_once "$T/o.jsonl" $n || failed "round $round: an id missing or written twice"
    round=$((round + 1))
done
held
