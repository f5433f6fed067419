#!/bin/sh
# probe flip_symlink: a file flipped between a file and a symlink to an outside secret while indexing never brings the secret into the index
. "${top_srcdir:-.}/tests/probe_lib.sh"

echo "SECRET_OUTSIDE_TEXT = 1" >"$T/secret.py"
cp "$R/tinyweb/auth.py" "$T/auth.py"
( while [ ! -e "$T/stop" ]; do
    ln -sf "$T/secret.py" "$R/tinyweb/flip.py"; rm -f "$R/tinyweb/flip.py"; cp "$T/auth.py" "$R/tinyweb/flip.py"; rm -f "$R/tinyweb/flip.py"
  done ) &
PROBE_PIDS=$!
k=0
while [ $k -lt $((5 * PROBE_SCALE)) ]; do
    rm -f "$IDX"*
    "$DRQA" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>&1
    if [ -e "$IDX" ] && "$PYTHON3" "$top_srcdir/tests/index_dump.py" "$IDX" | grep -q SECRET_OUTSIDE_TEXT; then
        : >"$T/stop"; failed "round $k: the secret is in the index"
    fi
    k=$((k + 1))
done
: >"$T/stop"
wait
held
