#!/bin/sh
# probe kill9_update: kill -9 during an update keeps the previous index, and the next run matches a clean build
. "${top_srcdir:-.}/tests/probe_lib.sh"

need_hooks
probe_index
k=1
while [ $k -le $((3 * PROBE_SCALE)) ]; do
    echo "def changed_$k(): return $k" >>"$R/tinyweb/utils.py"
    echo "def changed_$k(): return $k" >>"$R/tinyweb/routing.py"
    DRQA_TEST_KILL_AFTER=1 "$DRQA_HOOKS" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>&1
    sqlite3 "$IDX" "PRAGMA quick_check" 2>/dev/null | grep -qx ok || failed "round $k: the index is damaged after the kill"
    "$DRQA" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>&1 || failed "round $k: the run after the kill failed"
    rm -f "$T/clean.sqlite"*
    "$DRQA" --index "$T/clean.sqlite" --no-progress --quiet --index-only "$R" >/dev/null 2>&1
    "$PYTHON3" "$top_srcdir/tests/index_dump.py" "$T/clean.sqlite" >"$T/clean.dump"
    "$PYTHON3" "$top_srcdir/tests/index_dump.py" "$IDX" >"$T/idx.dump"
    cmp -s "$T/clean.dump" "$T/idx.dump" || failed "round $k: the index differs from a clean build"
    k=$((k + 1))
done
held
