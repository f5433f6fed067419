#!/bin/sh
# probe kill9_index: kill -9 during a fresh index, then a run, gives an index identical to a clean build
. "${top_srcdir:-.}/tests/probe_lib.sh"

need_hooks
"$DRQA" --index "$T/clean.sqlite" --no-progress --quiet --index-only "$R" >/dev/null 2>&1 || failed "clean build"
"$PYTHON3" "$top_srcdir/tests/index_dump.py" "$T/clean.sqlite" >"$T/clean.dump"
k=1
while [ $k -le $((3 * PROBE_SCALE)) ]; do
    rm -f "$IDX" "$IDX.tmp"
    DRQA_TEST_KILL_AFTER=$(( (k % 10) + 1 )) "$DRQA_HOOKS" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>&1
    "$DRQA" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>&1 || failed "round $k: the run after the kill failed"
    "$PYTHON3" "$top_srcdir/tests/index_dump.py" "$IDX" >"$T/idx.dump"
    cmp -s "$T/clean.dump" "$T/idx.dump" || failed "round $k: the index differs from a clean build"
    k=$((k + 1))
done
held
