#!/bin/sh
# probe busy_answer: while another drqa-tui holds the index for an update, --ask, --action and --batch answer from the index as it was, saying so
. "${top_srcdir:-.}/tests/probe_lib.sh"

need_hooks
probe_index
echo "def probe_added(): return 1" >>"$R/tinyweb/utils.py"
DRQA_TEST_HOLD="$T/hold" "$DRQA_HOOKS" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>&1 &
PROBE_PIDS=$!
wait_for "$T/hold" || failed "the holder did not start"
drqa --ask "$Q" >/dev/null
[ "$rc" = 0 ] || { rm -f "$T/hold"; failed "--ask: status $rc: $(cat "$T/err")"; }
grep -q "is updating the index" "$T/err" || { rm -f "$T/hold"; failed "--ask does not say the index is being updated"; }
drqa --quiet --action Outline "{\"path\": \"tinyweb/utils.py\"}" >/dev/null
[ "$rc" = 0 ] || { rm -f "$T/hold"; failed "--action: status $rc"; }
questions "$T/q.jsonl" 1
drqa --quiet --batch "$T/q.jsonl" --out "$T/o.jsonl"
[ "$rc" = 0 ] || { rm -f "$T/hold"; failed "--batch: status $rc"; }
rm -f "$T/hold"
wait
held
