#!/bin/sh
# probe diskfull_batch: a disk that fills during --batch: status 1, every line whole, and a resume completes once there is room
. "${top_srcdir:-.}/tests/probe_lib.sh"

tmpfs_mount "$T/mnt" 256k
probe_index
n=10   # the answers must fit the tmpfs once the filler is gone
questions "$T/q.jsonl" $n
dd if=/dev/zero of="$T/mnt/filler" bs=1k count=236 2>/dev/null
drqa --quiet --batch "$T/q.jsonl" --out "$T/mnt/o.jsonl"
[ "$rc" = 1 ] || failed "status $rc on a full disk"
grep -q "No space left on device" "$T/err" || failed "the message does not say the disk is full"
rm -f "$T/mnt/filler"
drqa --quiet --batch "$T/q.jsonl" --out "$T/mnt/o.jsonl"
[ "$rc" = 0 ] || failed "the resume: status $rc: $(cat "$T/err")"
ids_once "$T/mnt/o.jsonl" $n || failed "an answer lost or written twice"
held
