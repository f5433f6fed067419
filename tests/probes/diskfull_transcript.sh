#!/bin/sh
# probe diskfull_transcript: a disk that fills while writing transcripts: --ask exits non-zero and says so
. "${top_srcdir:-.}/tests/probe_lib.sh"

tmpfs_mount "$T/mnt" 64k
probe_index
dd if=/dev/zero of="$T/mnt/filler" bs=1k count=60 2>/dev/null
drqa --quiet --transcript-dir "$T/mnt/tr" --ask "$Q" >/dev/null
[ "$rc" != 0 ] || failed "status 0 with the transcript not written"
[ -s "$T/err" ] || failed "no message"
held
