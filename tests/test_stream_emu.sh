#!/bin/sh
# test_stream_emu.sh: streamed and whole replies give the same run. For every
# emulator profile (tests/model_emu.py, which streams in each family's wire
# format when asked), drqa-tui --batch answers one dev question twice, once
# asking for whole replies (stream = false) and once for event streams
# (the default): the same answer and citations, and the same ledger (calls,
# failures, input, cached, cache-write, output and reasoning tokens,
# estimated calls), with every chat request of the second run streamed. The
# one profile whose server streams unasked (unasked-sse) sends no usage when
# the request did not ask for it (no stream_options): its whole-reply run is
# read all the same, the same answer, every call's tokens estimated and
# marked. bench/stream.sh compares the whole dev set. Skipped, saying why,
# without the questions or the trees.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
questions="$top_srcdir/../shared/benchmarks/sweqa-dev.jsonl"
pylib=${PYLIB:-/usr/lib/python3/dist-packages}
if [ ! -f "$questions" ]; then
    skip "no '$questions' (the dev questions live in ../shared/benchmarks)"
elif [ ! -d "$pylib/flask" ]; then
    skip "no $pylib/flask (scripts/deps-debian.sh installs python3-flask)"
else
    $PYTHON3 "$top_srcdir/tests/model_emu_run.py" --drqa "$DRQA" --questions "$questions" \
        --repo "flask=$pylib/flask" --ids flask-1 --iterations 15 --jobs 1 --compare-stream \
        --workdir "$T/runs" --json >"$T/cmp.json" 2>"$T/cmp.err"
    is "$?" 0 "the runs finished (drqa-tui never crashed)$(head -c 300 "$T/cmp.err")"
    rows() { $PYTHON3 -c 'import json, sys
for r in json.load(open(sys.argv[1]))["profiles"]:
    print(r["profile"], r["questions"], r["same_answer"], r["same_ledger"], r["streamed_requests"],
          r["estimated_calls"][0], r["estimated_calls"][1], r["requests"][0], "|".join(r["diffs"])[:300])' "$T/cmp.json"; }
    rows >"$T/rows"
    is "$(wc -l <"$T/rows" | tr -d ' ')" 26 "every profile was run both ways"
    while read -r p q ans led streamed est0 est1 req0 diffs; do
        is "$ans" "$q" "$p: the streamed run gives the whole-reply run's answer ${diffs:-}"
        ok "$([ "$streamed" -gt 0 ] && echo 0 || echo 1)" "$p: its requests were streamed ($streamed)"
        if [ "$p" = unasked-sse ]; then
            ok "$([ "$est0" -gt 0 ] && [ "$est1" = 0 ] && echo 0 || echo 1)" \
                "$p: streamed unasked without usage: estimated and marked ($est0 calls), none when asked with usage"
        else
            is "$led" "$q" "$p: the same ledger both ways ${diffs:-}"
            is "$est1" "$est0" "$p: the same calls estimated both ways"
        fi
    done <"$T/rows"
fi
echo "1..$n"
exit $fail
