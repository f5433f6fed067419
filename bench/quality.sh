#!/bin/sh
# quality: answer quality of the offline policy without a judge model, on
# every question set the project has: file-hit@1, file-hit@5 (the first five
# distinct cited files, and the first five citations as they come) and
# identifier recall as src/metrics.h defines them, computed by
# `drqa-tui --report --reference`, and the median seconds per question, for
# --mode mcts, rag-function, rag-window and --no-mcts, next to an anchor
# measured in the same run (flat BM25 over function chunks, top 5) and the
# ceiling (how many questions have a gold file that exists in the trees).
# One table per set, with a row block per repository and its verdict (mcts
# not below the BM25 anchor in either count of file-hit@5) and, per set, how
# many answers number their spans or cite [n] out of step with their citation
# list; dev and dev2 are then also scored together, with the goals (mcts
# against the anchor and rag-window) each met or MISSED with its margin. Not a
# test: it prints tables.
#
#   bench/quality.sh [BUILD_DIR]      (default: $top_builddir or .)
#
# The sets (SETS, default "dev dev2 devq devq2 devq3 devq4 devq5"):
#   dev    ../shared/benchmarks/sweqa-dev.jsonl   flask requests
#   dev2   ../shared/benchmarks/sweqa-dev2.jsonl  sphinx pylint xarray astropy sqlfluff
#          (installed by bench/deps-dev2.sh)
#   devq   bench/devq/devq.jsonl                  django jinja2 werkzeug click urllib3
#   devq2  bench/devq/devq2.jsonl                 the same
#   devq3  bench/devq/devq3.jsonl                 the same and itsdangerous markupsafe idna
#                                                 charset_normalizer asgiref
#   devq4  bench/devq/devq4.jsonl                 sympy matplotlib sklearn _pytest: large
#                                                 trees none of the other sets has
#                                                 (installed by bench/deps-devq4.sh)
#   devq5  bench/devq/devq5.jsonl                 django sympy matplotlib sklearn, in
#                                                 SWE-QA's wording: subjects sampled
#                                                 across each tree, named by paraphrase
# A set whose questions file or repositories are missing is skipped with a
# note. QUESTIONS and REPOS instead run one set of your own. Environment also:
# PYLIB (default /usr/lib/python3/dist-packages: where the repositories are),
# BENCHMARKS (default ../shared/benchmarks next to the source tree), MODES
# (default mcts,rag-function,rag-window,no-mcts), JOBS (default 2), WORKDIR,
# DETAIL (non-empty: list the misses).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
build=${1:-${top_builddir:-.}}
pylib=${PYLIB:-/usr/lib/python3/dist-packages}
benchmarks=${BENCHMARKS:-$top_srcdir/../shared/benchmarks}

if [ ! -x "$build/drqa-tui" ]; then
    echo "quality.sh: no '$build/drqa-tui'; build first or give the build directory" >&2
    exit 2
fi

devq_repos="django jinja2 werkzeug click urllib3"
set_args=
add_set() {   # NAME QUESTIONS REPOS...
    name=$1 file=$2
    shift 2
    if [ ! -f "$file" ]; then
        echo "quality.sh: set $name skipped: no questions file '$file'" >&2
        return 0
    fi
    spec=
    for d in "$@"; do
        if [ ! -d "$pylib/$d" ]; then
            echo "quality.sh: set $name skipped: '$pylib/$d' is missing (bench/deps-dev2.sh, bench/deps-devq4.sh, or set PYLIB)" >&2
            return 0
        fi
        spec="$spec${spec:+,}$d=$pylib/$d"
    done
    set_args="$set_args --set $name:$file:$spec"
}

if [ -n "${QUESTIONS:-}" ]; then
    if [ ! -f "$QUESTIONS" ]; then
        echo "quality.sh: no questions file '$QUESTIONS' (set QUESTIONS)" >&2
        exit 2
    fi
    # shellcheck disable=SC2086
    add_set "$(basename "$QUESTIONS" .jsonl)" "$QUESTIONS" ${REPOS:-flask requests}
    [ -n "$set_args" ] || exit 2
else
    for s in ${SETS:-dev dev2 devq devq2 devq3 devq4 devq5}; do
        case $s in
        dev) add_set dev "$benchmarks/sweqa-dev.jsonl" flask requests ;;
        dev2) add_set dev2 "$benchmarks/sweqa-dev2.jsonl" sphinx pylint xarray astropy sqlfluff ;;
        devq) add_set devq "$here/devq/devq.jsonl" $devq_repos ;;
        devq2) add_set devq2 "$here/devq/devq2.jsonl" $devq_repos ;;
        devq3) add_set devq3 "$here/devq/devq3.jsonl" $devq_repos itsdangerous markupsafe idna charset_normalizer asgiref ;;
        devq4) add_set devq4 "$here/devq/devq4.jsonl" sympy matplotlib sklearn _pytest ;;
        devq5) add_set devq5 "$here/devq/devq5.jsonl" django sympy matplotlib sklearn ;;
        *) echo "quality.sh: unknown set '$s' (known: dev dev2 devq devq2 devq3 devq4 devq5)" >&2; exit 2 ;;
        esac
    done
    if [ -z "$set_args" ]; then
        echo "quality.sh: no question set can run (see the notes above)" >&2
        exit 2
    fi
fi
if [ -n "${LOO:-}" ]; then   # bench/loo.sh: the same sets, judged leave-one-repository-out
    # shellcheck disable=SC2086
    exec "${PYTHON3:-python3}" "$here/loo.py" --drqa "$build/drqa-tui" $set_args --jobs "${JOBS:-2}" \
        ${GRID:+--grid "$GRID"} ${WORKDIR:+--workdir "$WORKDIR"} ${DETAIL:+--detail}
fi
# shellcheck disable=SC2086
exec "${PYTHON3:-python3}" "$here/quality.py" --drqa "$build/drqa-tui" $set_args \
    --modes "${MODES:-mcts,rag-function,rag-window,no-mcts}" --jobs "${JOBS:-2}" \
    ${WORKDIR:+--workdir "$WORKDIR"} ${DETAIL:+--detail}
