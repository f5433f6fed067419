#!/bin/sh
# probe: building an index on a full file system names the index in its
# error (exit 1). Run as root, a small tmpfs is the full disk; otherwise a
# file size limit cuts the writes short the same way.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_index_full_named
mkdir "$T/full"
many_modules "$T/many"
if [ "$(id -u)" -eq 0 ] && mount -t tmpfs -o size=300k tmpfs "$T/full" 2>/dev/null; then
    probe_umount="$T/full"
    "$DRQA" --index "$T/full/idx.sqlite" --no-progress --index-only "$T/many" >/dev/null 2>"$T/err"
    rc=$?
else
    "$PYTHON3" -c 'import os, resource, signal, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (150000, 150000))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
os.execvp(sys.argv[1], sys.argv[1:])' "$DRQA" --index "$T/full/idx.sqlite" --no-progress --index-only "$T/many" \
        >/dev/null 2>"$T/err"
    rc=$?
fi
[ $rc -eq 1 ] || probe_done 1 "exit $rc, not 1"
grep -q "index '$T/full/idx.sqlite" "$T/err" || probe_done 1 "the index is not named: $(head -c 160 "$T/err")"
probe_done 0
