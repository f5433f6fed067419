#!/bin/sh
# stream: whole replies against event streams over the whole SWE-QA dev set
# (../shared/benchmarks/sweqa-dev.jsonl, 96 questions) on copies of Debian's
# python3-flask and python3-requests, with tests/model_emu.py as the model
# in every profile: per profile, the questions whose streamed run gave the
# same answer (text and citations) and the same ledger (calls, failures,
# input, cached, cache-write, output and reasoning tokens, estimated calls)
# as the run with stream = false, the streamed requests served, and each
# run's input and output tokens, estimated calls and wall time. Not a test
# (tests/test_stream_emu.sh asserts on one question per profile).
#
#   bench/stream.sh [BUILD_DIR]      (default: $top_builddir or .)
#
# Environment: QUESTIONS, PYLIB (default /usr/lib/python3/dist-packages),
# PROFILES (default all), ITERATIONS (default 15), TOKEN_DELAY_MS (the
# emulator's wait before each streamed piece, default 0), EVERY (every K-th
# question, default 1), WORKDIR (kept when given). One question at a time:
# the emulator's prompt-cache counts follow the order of requests.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
build=${1:-${top_builddir:-.}}
questions=${QUESTIONS:-$top_srcdir/../shared/benchmarks/sweqa-dev.jsonl}
pylib=${PYLIB:-/usr/lib/python3/dist-packages}
if [ ! -f "$questions" ]; then
    echo "stream.sh: no questions file '$questions' (set QUESTIONS)" >&2
    exit 2
fi
for d in flask requests; do
    if [ ! -d "$pylib/$d" ]; then
        echo "stream.sh: '$pylib/$d' is missing (apt-get install python3-$d, or set PYLIB)" >&2
        exit 2
    fi
done
if [ ! -x "$build/drqa-tui" ]; then
    echo "stream.sh: no '$build/drqa-tui'; build first or give the build directory" >&2
    exit 2
fi
exec "${PYTHON3:-python3}" "$top_srcdir/tests/model_emu_run.py" --drqa "$build/drqa-tui" --questions "$questions" \
    --repo "flask=$pylib/flask" --repo "requests=$pylib/requests" ${PROFILES:+--profiles "$PROFILES"} \
    --iterations "${ITERATIONS:-15}" --jobs 1 --every "${EVERY:-1}" --compare-stream \
    --token-delay-ms "${TOKEN_DELAY_MS:-0}" ${WORKDIR:+--workdir "$WORKDIR"}
