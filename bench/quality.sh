#!/bin/sh
# quality: answer quality of the offline policy without a judge model, on the
# SWE-QA dev questions over Debian's python3-flask and python3-requests:
# file-hit@5 (a citation among the first five names a gold file, compared on
# the last two path components) and identifier recall (gold identifiers found
# in the answer plus its cited evidence) for --mode mcts, rag-function,
# rag-window and --no-mcts, next to an anchor measured in the same run (flat
# BM25 over function chunks, top 5). Not a test: it prints a table.
#
#   bench/quality.sh [BUILD_DIR]      (default: $top_builddir or .)
#
# Environment: QUESTIONS (default ../shared/benchmarks/sweqa-dev.jsonl next to
# the source tree), PYLIB (default /usr/lib/python3/dist-packages), MODES
# (default mcts,rag-function,rag-window,no-mcts), JOBS (default 2), WORKDIR.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
build=${1:-${top_builddir:-.}}
questions=${QUESTIONS:-$top_srcdir/../shared/benchmarks/sweqa-dev.jsonl}
pylib=${PYLIB:-/usr/lib/python3/dist-packages}

if [ ! -f "$questions" ]; then
    echo "quality.sh: no questions file '$questions' (set QUESTIONS)" >&2
    exit 2
fi
for d in flask requests; do
    if [ ! -d "$pylib/$d" ]; then
        echo "quality.sh: '$pylib/$d' is missing (apt-get install python3-$d, or set PYLIB)" >&2
        exit 2
    fi
done
if [ ! -x "$build/drqa-tui" ]; then
    echo "quality.sh: no '$build/drqa-tui'; build first or give the build directory" >&2
    exit 2
fi
exec "${PYTHON3:-python3}" "$here/quality.py" --drqa "$build/drqa-tui" --questions "$questions" \
    --repo "flask=$pylib/flask" --repo "requests=$pylib/requests" \
    --modes "${MODES:-mcts,rag-function,rag-window,no-mcts}" --jobs "${JOBS:-2}" \
    ${WORKDIR:+--workdir "$WORKDIR"}
