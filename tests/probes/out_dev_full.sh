#!/bin/sh
# probe out_dev_full: --out /dev/full exits 1 saying the disk is full
. "${top_srcdir:-.}/tests/probe_lib.sh"

probe_index
questions "$T/q.jsonl" 1
drqa --quiet --batch "$T/q.jsonl" --out /dev/full
[ "$rc" = 1 ] || failed "status $rc"
grep -q "No space left on device" "$T/err" || failed "$(cat "$T/err")"
held
