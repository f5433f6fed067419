#!/bin/sh
# probe diskfull_update: a disk that fills during an update keeps the previous index whole and usable
. "${top_srcdir:-.}/tests/probe_lib.sh"

tmpfs_mount "$T/mnt" 4m
I="$T/mnt/index.sqlite"
"$DRQA" --index "$I" --no-progress --quiet --index-only "$R" >/dev/null 2>&1 || failed "the first build"
for f in $(seq 1 40); do sed "s/def /def f${f}_/" "$R/tinyweb/routing.py" >"$R/tinyweb/gen_$f.py"; done
dd if=/dev/zero of="$T/mnt/filler" bs=4k 2>/dev/null
"$DRQA" --index "$I" --no-progress --quiet --index-only "$R" >/dev/null 2>"$T/err"
r=$?
rm -f "$T/mnt/filler"
[ "$r" != 0 ] || failed "status 0 on a full disk"
[ -s "$T/err" ] || failed "no message"
sqlite3 "$I" "PRAGMA quick_check" | grep -qx ok || failed "the previous index is damaged"
"$DRQA" --index "$I" --no-progress --quiet --policy offline --ask "$Q" "$R" >/dev/null 2>&1 || failed "the index cannot answer after"
held
