#!/bin/sh
# probe: --exploration nan, inf and an overflowing 1e999 are refused (exit 2).
. "$(dirname "$0")/leak_common.inc"
probe_init leak_exploration_nonfinite
for v in nan inf NaN Infinity 1e999; do
    "$DRQA" --index "$T/idx" --no-progress --exploration "$v" --ask "where is App" "$R" >/dev/null 2>&1
    rc=$?
    [ $rc -eq 2 ] || probe_done 1 "--exploration $v: exit $rc"
done
probe_done 0
