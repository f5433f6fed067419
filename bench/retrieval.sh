#!/bin/sh
# retrieval: how often SemanticSearch's top 5 chunks include a gold file of a
# SWE-QA question, for the bm25, local dense and hybrid rankings, next to an
# anchor measured in the same run (plain bm25 over function/class chunks, the
# "function chunking" retriever), on Debian's python3-flask and
# python3-requests sources; then query latency over Django (python3-django)
# as p95 ratios against the anchor's. Not a test: it prints a table.
#
#   bench/retrieval.sh [BUILD_DIR]      (default: $top_builddir or .)
#
# Environment: QUESTIONS (default ../shared/benchmarks/sweqa-dev.jsonl next to
# the source tree), PYLIB (default /usr/lib/python3/dist-packages).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
build=${1:-${top_builddir:-.}}
questions=${QUESTIONS:-$top_srcdir/../shared/benchmarks/sweqa-dev.jsonl}
pylib=${PYLIB:-/usr/lib/python3/dist-packages}

if [ ! -f "$questions" ]; then
    echo "retrieval.sh: no questions file '$questions' (set QUESTIONS)" >&2
    exit 2
fi
for d in flask requests; do
    if [ ! -d "$pylib/$d" ]; then
        echo "retrieval.sh: '$pylib/$d' is missing (apt-get install python3-$d, or set PYLIB)" >&2
        exit 2
    fi
done
make -s -C "$build" bench/bench_retrieval >&2

latency=
if [ -d "$pylib/django" ]; then latency="--latency django=$pylib/django"; fi
# shellcheck disable=SC2086
"$build/bench/bench_retrieval" -k 5 $latency "$questions" \
    "flask=$pylib/flask" "requests=$pylib/requests"
echo
echo "Earlier flat BM25 measurement on these questions (not a figure of the DeepRepoQA paper): 72.6%;"
echo "the anchor row above is the flat ranker measured in this run."
