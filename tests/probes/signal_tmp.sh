#!/bin/sh
# probe signal_tmp: SIGTERM, SIGINT and SIGHUP during a fresh index leave no INDEX.tmp and end with 128+N
. "${top_srcdir:-.}/tests/probe_lib.sh"

need_hooks
for s in TERM:15 INT:2 HUP:1; do
    sig=${s%:*} num=${s#*:}
    rm -f "$T/hold" "$IDX" "$IDX.tmp"
    DRQA_TEST_HOLD="$T/hold" "$PYTHON3" -c "import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])" "$DRQA_HOOKS" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>&1 &
    p=$!
    PROBE_PIDS=$p
    wait_for "$T/hold" || failed "SIG$sig: the build was not held"
    kill -s "$sig" $p
    wait $p
    r=$?
    [ "$r" = $((128 + num)) ] || failed "SIG$sig: status $r"
    [ -e "$IDX.tmp" ] && failed "SIG$sig: INDEX.tmp left behind"
done
held
