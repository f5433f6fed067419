#!/bin/sh
# quality: answer quality of the offline policy without a judge model, on the
# SWE-QA dev questions over Debian's python3-flask and python3-requests (or
# any question set and repositories): file-hit@5 and identifier recall as
# src/metrics.h defines them, computed by `drqa-tui --report --reference`, for
# --mode mcts, rag-function, rag-window and --no-mcts, next to an anchor
# measured in the same run (flat BM25 over function chunks, top 5) and the
# ceiling (how many questions have a gold file that exists in the trees).
# Not a test: it prints a table.
#
#   bench/quality.sh [BUILD_DIR]      (default: $top_builddir or .)
#
# Environment: QUESTIONS (default ../shared/benchmarks/sweqa-dev.jsonl next to
# the source tree), PYLIB (default /usr/lib/python3/dist-packages), REPOS
# (default "flask requests": names of directories under PYLIB, one per repo
# of the questions), MODES (default mcts,rag-function,rag-window,no-mcts),
# JOBS (default 2), WORKDIR, DETAIL (non-empty: list the misses). The
# development questions are bench/devq/devq.jsonl and devq2.jsonl with
# REPOS="django jinja2 werkzeug click urllib3", and devq3.jsonl, which also
# needs itsdangerous markupsafe idna charset_normalizer asgiref in REPOS
# (all installed with python3-flask, python3-requests and python3-django).
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
repos=${REPOS:-flask requests}
repo_args=
for d in $repos; do
    if [ ! -d "$pylib/$d" ]; then
        echo "quality.sh: '$pylib/$d' is missing (apt-get install python3-$d, or set PYLIB)" >&2
        exit 2
    fi
    repo_args="$repo_args --repo $d=$pylib/$d"
done
if [ ! -x "$build/drqa-tui" ]; then
    echo "quality.sh: no '$build/drqa-tui'; build first or give the build directory" >&2
    exit 2
fi
# shellcheck disable=SC2086
exec "${PYTHON3:-python3}" "$here/quality.py" --drqa "$build/drqa-tui" --questions "$questions" \
    $repo_args --modes "${MODES:-mcts,rag-function,rag-window,no-mcts}" --jobs "${JOBS:-2}" \
    ${WORKDIR:+--workdir "$WORKDIR"} ${DETAIL:+--detail}
