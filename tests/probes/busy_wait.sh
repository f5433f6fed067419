#!/bin/sh
# probe busy_wait: --index-only waits for another drqa-tui update of the index, says so, and then updates
. "${top_srcdir:-.}/tests/probe_lib.sh"

need_hooks
probe_index
echo "def probe_added(): return 1" >>"$R/tinyweb/utils.py"
DRQA_TEST_HOLD="$T/hold" "$DRQA_HOOKS" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>&1 &
holder=$!
PROBE_PIDS=$holder
wait_for "$T/hold" || failed "the holder did not start"
"$DRQA" --index "$IDX" --no-progress --index-only "$R" >/dev/null 2>"$T/w.err" &
waiter=$!
PROBE_PIDS="$holder $waiter"
i=0
while ! grep -q "waiting for it to finish" "$T/w.err" && [ $i -lt 1200 ]; do sleep 0.1; i=$((i + 1)); done
rm -f "$T/hold"
grep -q "waiting for it to finish" "$T/w.err" || failed "the wait is not said"
wait $holder || failed "the holder failed"
wait $waiter || failed "the waiting run failed: $(cat "$T/w.err")"
held
