#!/bin/sh
# question-ab: the whole `drqa-tui --ask ... --policy offline` process of two
# builds on one warm index, run by run alternated (anchor, then candidate), so
# that both see the same load on a shared machine. Prints each run's wall and
# CPU (user+system) milliseconds, the medians, and the candidate's median CPU
# and wall as a ratio of the anchor's. Not a test: it prints a table.
#
#   bench/question-ab.sh ANCHOR_DRQA CANDIDATE_DRQA INDEX REPO QUESTION...
#
# INDEX is an index of REPO both builds read (schema versions must match; e.g.
# the indexes `KEEP=1 bench/scale.sh` leaves behind). When the candidate
# writes another schema, give it its own index of the same tree in
# CANDIDATE_INDEX (each build then reads the index it wrote). The first run of
# each build is not counted: it may still store what later questions read back.
# Environment: RUNS (default 5 per build and question), CANDIDATE_INDEX
# (default INDEX).
set -eu
[ $# -ge 5 ] || { echo "usage: bench/question-ab.sh ANCHOR_DRQA CANDIDATE_DRQA INDEX REPO QUESTION..." >&2; exit 2; }
A=$1 B=$2 IDX=$3 REPO=$4
shift 4
RUNS=${RUNS:-5}
IDX_B=${CANDIDATE_INDEX:-$IDX}
[ -x /usr/bin/time ] || { echo "bench/question-ab.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
for d in "$A" "$B"; do [ -x "$d" ] || { echo "bench/question-ab.sh: no drqa-tui at '$d'" >&2; exit 2; }; done
for i in "$IDX" "$IDX_B"; do [ -f "$i" ] || { echo "bench/question-ab.sh: no index '$i'" >&2; exit 2; }; done
T=$(mktemp -d "${TMPDIR:-/tmp}/drqa-ab.XXXXXX")
trap 'rm -rf "$T"' EXIT
ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# one NAME DRQA QUESTION INDEX: appends "wall cpu" to $T/NAME
one() {
    a=$(ms)
    /usr/bin/time -f "%U %S" -o "$T/t" "$2" --quiet --no-progress --index "$4" --policy offline --json --ask "$3" "$REPO" >/dev/null 2>&1
    b=$(ms)
    awk -v w=$((b - a)) '{ printf "%d %d\n", w, ($1 + $2) * 1000 }' "$T/t" >>"$T/$1"
}
echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start; $RUNS runs per build and question"
for q in "$@"; do
    : >"$T/a"
    : >"$T/b"
    one warm "$A" "$q" "$IDX"
    one warm "$B" "$q" "$IDX_B"
    i=0
    while [ $i -lt "$RUNS" ]; do
        one a "$A" "$q" "$IDX"
        one b "$B" "$q" "$IDX_B"
        i=$((i + 1))
    done
    aw=$(cut -d' ' -f1 "$T/a" | median) ac=$(cut -d' ' -f2 "$T/a" | median)
    bw=$(cut -d' ' -f1 "$T/b" | median) bc=$(cut -d' ' -f2 "$T/b" | median)
    printf '%s\n  anchor    wall/CPU ms: %s median %d/%d\n  candidate wall/CPU ms: %s median %d/%d\n' "$q" \
        "$(tr ' \n' '/ ' <"$T/a")" "$aw" "$ac" "$(tr ' \n' '/ ' <"$T/b")" "$bw" "$bc"
    awk -v aw="$aw" -v ac="$ac" -v bw="$bw" -v bc="$bc" \
        'BEGIN { printf "  candidate / anchor: CPU x%.2f, wall x%.2f\n", (ac > 0 ? bc / ac : 0), (aw > 0 ? bw / aw : 0) }'
done
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
