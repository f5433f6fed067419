#!/bin/sh
# probe diskfull_build: a disk that fills during a fresh index: a non-zero exit with a message, no side file and no index left
. "${top_srcdir:-.}/tests/probe_lib.sh"

tmpfs_mount "$T/mnt" 96k
"$DRQA" --index "$T/mnt/index.sqlite" --no-progress --quiet --index-only "$R" >/dev/null 2>"$T/err"
r=$?
[ "$r" != 0 ] || failed "status 0 on a full disk"
[ -s "$T/err" ] || failed "no message"
[ -e "$T/mnt/index.sqlite.tmp" ] && failed "the side file is left"
[ -e "$T/mnt/index.sqlite" ] && failed "an index was installed"
held
