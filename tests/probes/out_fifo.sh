#!/bin/sh
# probe out_fifo: --out a FIFO is written, never read back (no hang)
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
questions "$T/q.jsonl" 2
mkfifo "$T/fifo"
cat "$T/fifo" >"$T/o" &
timeout 120 "$DRQA" --index "$IDX" --no-progress --quiet --policy offline --batch "$T/q.jsonl" --out "$T/fifo" "$R" 2>/dev/null
r=$?
wait
[ "$r" = 0 ] || failed "status $r"
[ "$(nlines "$T/o")" = 2 ] || failed "the reader got $(nlines "$T/o") lines"
held
