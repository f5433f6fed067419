#!/bin/sh
# loo: answer quality judged leave-one-repository-out (bench/loo.py): every
# set bench/quality.sh runs (SETS, default "dev dev2 devq devq2 devq3 devq4 devq5";
# PYLIB, BENCHMARKS, QUESTIONS and REPOS as there), grouped by repository;
# the offline answer's rank fusion constant (DRQA_FUSE_K) is chosen from
# GRID (default "off,10,60") on the other repositories and scored
# on the one left out. Prints per repository the ceiling, mcts, rag-window
# and the BM25 anchor (file-hit@5 both counts, identifier recall), the
# pooled figure, the worst repository and the goals with their margins.
# GRID=default runs a build that has no such constant once. DETAIL
# (non-empty) lists the misses: whether rag-window or the anchor hit them,
# and whether mcts cited the gold file after its fifth file or never. Not a
# test.
#
#   bench/loo.sh [BUILD_DIR]      (JOBS, default 2; WORKDIR)
LOO=1 exec sh "$(cd "$(dirname "$0")" && pwd)/quality.sh" "$@"
