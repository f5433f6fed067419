#!/bin/sh
# bench/batch-ids.sh: how --batch's id checks (duplicates in the input,
# resume lookup in the output) scale with the number of lines. Lines with an
# id and no question cost no search, so a run is the id handling plus reading
# the lines and writing their error lines. Prints the seconds for N and 8*N
# lines in the same run and their ratio: about 8 for linear work, about 64
# for quadratic.
#
# usage: bench/batch-ids.sh [N]     (run from the build directory; default 5000)
set -e
N=${1:-5000}
B=$(cd "${top_builddir:-.}" && pwd)
S=$(cd "${top_srcdir:-.}" && pwd)
T=$(mktemp -d /tmp/drqa-bench-batch-XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$B/drqa-tui" ] || { echo "bench/batch-ids.sh: build first and run from the build directory" >&2; exit 2; }
"$B/drqa-tui" --index "$T/index.sqlite" --no-progress --quiet --index-only "$S/tests/fixtures/pyrepo" >/dev/null
run() {   # run LINES: prints the seconds a batch of LINES id'd lines without a question takes
    python3 -c "import json, sys
for i in range(int(sys.argv[1])): print(json.dumps({'id': i, 'note': 'no question'}))" "$1" >"$T/in.jsonl"
    rm -f "$T/out.jsonl"
    t0=$(date +%s%N)
    "$B/drqa-tui" --index "$T/index.sqlite" --no-progress --quiet --policy offline --batch "$T/in.jsonl" \
        --out "$T/out.jsonl" "$S/tests/fixtures/pyrepo" 2>/dev/null || true
    t1=$(date +%s%N)
    [ "$(wc -l <"$T/out.jsonl")" -eq "$1" ] || { echo "bench/batch-ids.sh: $1 lines in, not $1 out" >&2; exit 1; }
    echo "$t0 $t1" | awk '{ printf "%.3f\n", ($2 - $1) / 1e9 }'
}
small=$(run "$N")
big=$(run $((8 * N)))
echo "lines $N: $small s"
echo "lines $((8 * N)): $big s"
echo "$small $big" | awk '{ printf "ratio %.1f (8 = linear, 64 = quadratic)\n", $2 / $1 }'
