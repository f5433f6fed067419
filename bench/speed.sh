#!/bin/sh
# speed: seconds per question of the offline search on a large repository
# (default Debian's python3-sympy), index already built (warm), offline
# policy, 15 iterations, against anchors measured in the same run:
#
#   mcts          --mode mcts, the measured row (goal: median <= 0.5 s)
#   rag-function  the flat retriever (one SemanticSearch per question): the
#                 anchor for the whole question
#   windows       the offline policy's window ranking from the index's line
#                 postings against the anchor computing it by tokenising every
#                 file, as every question did before (bench/bench_windows.c)
#
# Medians are of the per-question wall_ms of --batch (the first question of
# each job thread also reads the index's vectors); CPU is the whole batch
# process's user+system seconds divided by the questions: on a shared machine
# the wall time also measures the other processes. Not a test: it prints a
# table and whether the goal was met.
#
#   bench/speed.sh [BUILD_DIR]     (default: $top_builddir or .)
#
# Environment: REPO (default /usr/lib/python3/dist-packages/sympy), QUESTIONS
# (default bench/devq/sympy.jsonl), JOBS (default 2), WORKDIR (default a
# temporary directory; the index is kept there between runs when given).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-${top_builddir:-.}}
repo=${REPO:-/usr/lib/python3/dist-packages/sympy}
questions=${QUESTIONS:-$here/devq/sympy.jsonl}
jobs=${JOBS:-2}
[ -x "$build/drqa-tui" ] || { echo "speed.sh: no '$build/drqa-tui'; build first or give the build directory" >&2; exit 2; }
[ -d "$repo" ] || { echo "speed.sh: no repository '$repo' (apt-get install python3-sympy, or set REPO)" >&2; exit 2; }
[ -f "$questions" ] || { echo "speed.sh: no questions file '$questions' (set QUESTIONS)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "speed.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
make -s -C "$build" bench/bench_windows >&2
if [ -n "${WORKDIR:-}" ]; then w=$WORKDIR; mkdir -p "$w"; else w=$(mktemp -d "${TMPDIR:-/tmp}/drqa-speed.XXXXXX"); trap 'rm -rf "$w"' EXIT; fi
idx="$w/index.sqlite"
drqa="$build/drqa-tui"
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start; $("$drqa" --version); repository $repo"
"$drqa" --quiet --no-progress --index "$idx" --index-only "$repo" >/dev/null
# one question fits the local vectors and builds what questions keep in the
# index: every run after it is warm
"$drqa" --quiet --no-progress --policy offline --index "$idx" --json --ask "warm up" "$repo" >/dev/null 2>&1 || true
n=$(grep -c . "$questions")
run() {   # NAME ARGS...: one --batch run; prints NAME median_s cpu_s_per_question
    name=$1
    shift
    rm -f "$w/$name.jsonl"
    /usr/bin/time -f "%U %S" -o "$w/$name.time" "$drqa" --quiet --no-progress --policy offline --index "$idx" \
        --batch "$questions" --out "$w/$name.jsonl" --jobs "$jobs" "$@" "$repo" >/dev/null 2>&1 || true
    med=$("${PYTHON3:-python3}" -c '
import json, statistics, sys
v = [json.loads(l).get("wall_ms", 0) / 1000.0 for l in open(sys.argv[1]) if l.strip()]
print("%.3f" % statistics.median(v) if v else "nan")' "$w/$name.jsonl")
    cpu=$(awk -v n="$n" '{ printf "%.3f", ($1 + $2) / n }' "$w/$name.time")
    echo "$name $med $cpu"
}
m=$(run mcts --mode mcts --iterations 15)
a=$(run rag-function --mode rag-function)
echo "$m" "$a" | awk -v goal=0.5 -v n="$n" '{
    printf "%-13s median %6.3f s/question  CPU %6.3f s/question\n", $1, $2, $3
    printf "%-13s median %6.3f s/question  CPU %6.3f s/question  (anchor)\n", $4, $5, $6
    printf "mcts / rag-function: median x%.2f, CPU x%.2f over %d questions\n", ($5 > 0 ? $2 / $5 : 0), ($6 > 0 ? $3 / $6 : 0), n
    printf "goal: mcts median <= %.1f s: %s\n", goal, ($2 <= goal ? "met" : "NOT MET")
}'
"$build/bench/bench_windows" "$idx" "$questions" 200 20
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg) (wall times on a shared machine are noisy)"
