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
# Environment: as bench/model-emu.sh (QUESTIONS, PYLIB, PROFILES,
# ITERATIONS, WORKDIR), and TOKEN_DELAY_MS (the emulator's wait before each
# streamed piece, default 0) and EVERY (every K-th question, default 1). One
# question at a time: the emulator's prompt-cache counts follow the order of
# its requests, which must be the same in both runs. Profiles whose faults
# hang on timing (flaky's hangs against the limits, and http200-error, whose
# run of flask-3 was seen to differ between two whole-reply runs too) can
# differ between any two runs, whatever the transport.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
JOBS=1 EMU_RUN_ARGS="--compare-stream --token-delay-ms ${TOKEN_DELAY_MS:-0} --every ${EVERY:-1}" \
    exec sh "$here/model-emu.sh" "$@"
