#!/bin/sh
# probe out_pipe: --out /dev/stdout into a pipe is written, never read back (no hang)
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
questions "$T/q.jsonl" 2
timeout 120 "$DRQA" --index "$IDX" --no-progress --quiet --policy offline --batch "$T/q.jsonl" --out /dev/stdout "$R" 2>/dev/null | cat >"$T/o"
[ "$(nlines "$T/o")" = 2 ] || failed "$(nlines "$T/o") lines came down the pipe"
held
