#!/bin/sh
# Runs every libFuzzer target for a set time and prints, per target, the
# inputs executed, the rate, the corpus size reached and the crashes found
# (crash, timeout, out-of-memory and leak artifacts, kept in the output dir
# with the input that caused them). After a crash the target restarts from
# the corpus grown so far, until its time is used up.
#
#   bench/fuzz.sh [-t SECONDS_PER_TARGET] [-o OUTDIR] [BUILDDIR [TARGET...]]
#
# BUILDDIR is a build configured with clang's libFuzzer found (the configure
# summary says "fuzz targets: yes"; `make fuzz` builds them); default: '.'.
# Exit status 1 when any target crashed.
set -u
secs=60
out=
while getopts t:o: opt; do
    case $opt in
    t) secs=$OPTARG ;;
    o) out=$OPTARG ;;
    *) echo "usage: $0 [-t SECONDS] [-o OUTDIR] [BUILDDIR [TARGET...]]" >&2; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
build=${1:-.}
[ $# -gt 0 ] && shift
src=$(cd "$(dirname "$0")/.." && pwd)
targets=${*:-jsonx roles fpattern parse transcript action}
[ -n "$out" ] || out=$(mktemp -d /tmp/drqa-fuzz-XXXXXX)
mkdir -p "$out"
echo "# $secs s per target; corpora, logs and artifacts in $out"
printf '%-12s %10s %8s %8s %8s\n' target execs exec/s corpus crashes
status=0
for t in $targets; do
    bin="$build/fuzz/fuzz_$t"
    if [ ! -x "$bin" ]; then
        echo "$bin not built: configure with clang's libFuzzer available, then make fuzz" >&2
        exit 2
    fi
    mkdir -p "$out/$t/corpus" "$out/$t/artifacts"
    cp -n "$src/fuzz/corpus/$t/"* "$out/$t/corpus/" 2>/dev/null
    start=$(date +%s)
    execs=0
    runs=0
    while :; do
        left=$((secs - ($(date +%s) - start)))
        [ $left -gt 0 ] || break
        runs=$((runs + 1))
        "$bin" -max_total_time=$left -timeout=30 -rss_limit_mb=2048 -max_len=4096 -print_final_stats=1 \
            -artifact_prefix="$out/$t/artifacts/" "$out/$t/corpus" >"$out/$t/run$runs.log" 2>&1
        e=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t/run$runs.log" | tail -1)
        execs=$((execs + ${e:-0}))
        grep -q '^Done [0-9]* runs' "$out/$t/run$runs.log" && break
    done
    took=$(($(date +%s) - start))
    [ $took -gt 0 ] || took=1
    crashes=$(ls "$out/$t/artifacts" | grep -c '^\(crash\|timeout\|oom\|leak\)-')
    [ "$crashes" = 0 ] || status=1
    printf '%-12s %10s %8s %8s %8s\n' "fuzz_$t" "$execs" $((execs / took)) "$(ls "$out/$t/corpus" | wc -l)" "$crashes"
done
exit $status
