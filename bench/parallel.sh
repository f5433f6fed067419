#!/bin/sh
# parallel: what --parallel K buys when policy calls dominate the wall time.
# One 15-iteration search with the scripted policy of the tests, every
# perceive/plan/evaluate call made to cost a fixed latency (as an LLM call
# does) and the executor a small one, run sequentially and with K expansions
# in flight in the same run; prints both wall times and their ratio (goal:
# at least 2x for K = 3). Not a test.
#
#   bench/parallel.sh [BUILD_DIR] [K]      (defaults: $top_builddir or ., 3)
#
# Environment (read by the bench driver only): DRQA_BENCH_ROLE_MS (default
# 40) per policy call, DRQA_BENCH_EXEC_MS (default 2) per executor call,
# REPEATS (default 3; the median is reported).
set -eu
build=${1:-${top_builddir:-.}}
k=${2:-3}
make -s -C "$build" bench/bench_parallel >&2
"$build/bench/bench_parallel" -k "$k" -n 15 -r "${REPEATS:-3}"
