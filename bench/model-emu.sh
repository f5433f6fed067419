#!/bin/sh
# model-emu: the model path per emulator profile on the whole SWE-QA dev set
# (../shared/benchmarks/sweqa-dev.jsonl, 96 questions) over copies of Debian's
# python3-flask and python3-requests, with tests/model_emu.py as the model.
# Prints per profile: questions, failed, answers with >= 1 verified citation,
# answers written by the model, mean input, cached-input and output tokens per
# question (as the emulator billed them, and input as drqa-tui counted it),
# the exit statuses drqa-tui gave (3: no model call succeeded), the error
# replies served (statuses, and 200 replies carrying no completion); for guided, evidence survival: the share of answers
# citing the gold file the model viewed. Not a test: it prints a table
# (tests/test_model_emu.sh asserts on every third question).
#
#   bench/model-emu.sh [BUILD_DIR]      (default: $top_builddir or .)
#
# Environment: QUESTIONS, PYLIB (default /usr/lib/python3/dist-packages),
# PROFILES (default all: clean,reasoning,think,magistral,small,anthropic,ctx-limit,ollama-cut,
# ctx-vllm,out-cap,lmstudio,flaky,guided, the current generation's
# temp-deprecated,claude5,system-role,strict-params, and the reply shapes
# http200-error,choice-error,unasked-sse,refusal,length-empty,finish-now,
# and the transports azure,responses,anthropic-cache), ITERATIONS (default 15), JOBS (default 2), WORKDIR (kept when
# given), EMU_RUN_ARGS (more tests/model_emu_run.py options: bench/stream.sh's).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
build=${1:-${top_builddir:-.}}
questions=${QUESTIONS:-$top_srcdir/../shared/benchmarks/sweqa-dev.jsonl}
pylib=${PYLIB:-/usr/lib/python3/dist-packages}
if [ ! -f "$questions" ]; then
    echo "model-emu.sh: no questions file '$questions' (set QUESTIONS)" >&2
    exit 2
fi
for d in flask requests; do
    if [ ! -d "$pylib/$d" ]; then
        echo "model-emu.sh: '$pylib/$d' is missing (apt-get install python3-$d, or set PYLIB)" >&2
        exit 2
    fi
done
if [ ! -x "$build/drqa-tui" ]; then
    echo "model-emu.sh: no '$build/drqa-tui'; build first or give the build directory" >&2
    exit 2
fi
exec "${PYTHON3:-python3}" "$top_srcdir/tests/model_emu_run.py" --drqa "$build/drqa-tui" --questions "$questions" \
    --repo "flask=$pylib/flask" --repo "requests=$pylib/requests" \
    --profiles "${PROFILES:-clean,reasoning,think,magistral,small,anthropic,ctx-limit,ctx-vllm,ollama-cut,out-cap,lmstudio,flaky,guided,temp-deprecated,claude5,system-role,strict-params,http200-error,choice-error,unasked-sse,refusal,length-empty,finish-now,azure,responses,anthropic-cache}" \
    --iterations "${ITERATIONS:-15}" --jobs "${JOBS:-2}" ${WORKDIR:+--workdir "$WORKDIR"} ${EMU_RUN_ARGS:-}
