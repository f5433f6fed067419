#!/bin/sh
# bench/index.sh: indexing speed and memory, against universal-ctags measured in
# the same run on the same tree (so the ratio, not the absolute time, is the
# result). Not a test: it prints numbers and whether each goal was met.
#
#   cold   fresh index of django        goal: <= 2.5 x ctags -R --languages=Python
#   warm   no-change update of django   goal: <= 50 ms
#   RSS    peak of a cold sympy index   goal: <= 150 MB
#
# usage: bench/index.sh [path/to/drqa-tui]   (default: ./drqa-tui in the build dir)
# env:   RUNS (default 5), DJANGO, SYMPY (source trees)
set -eu
DRQA=${1:-./drqa-tui}
RUNS=${RUNS:-5}
DJANGO=${DJANGO:-/usr/lib/python3/dist-packages/django}
SYMPY=${SYMPY:-/usr/lib/python3/dist-packages/sympy}
[ -x "$DRQA" ] || { echo "bench/index.sh: no drqa-tui at '$DRQA'; pass its path" >&2; exit 2; }
command -v ctags >/dev/null || { echo "bench/index.sh: universal-ctags is missing (scripts/deps-debian.sh)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/index.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
[ -d "$DJANGO" ] || { echo "bench/index.sh: no django sources at '$DJANGO' (apt-get install python3-django)" >&2; exit 2; }
if [ ! -d "$SYMPY" ] && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-sympy >/dev/null
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/drqa-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT

ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); drqa-tui $("$DRQA" --version | cut -d' ' -f2)"
echo "tree: $DJANGO ($(find "$DJANGO" -name '*.py' | wc -l) .py files)"
# warm the page cache for both tools
ctags -R --languages=Python -f "$T/tags" "$DJANGO"
"$DRQA" --no-progress --index "$T/warmup.sqlite" --index-only "$DJANGO" >/dev/null

# cold: runs alternate so both tools see the same machine load
: >"$T/cold"; : >"$T/ctags"
i=0
while [ $i -lt "$RUNS" ]; do
    rm -f "$T"/cold.sqlite*
    a=$(ms); "$DRQA" --no-progress --index "$T/cold.sqlite" --index-only "$DJANGO" >/dev/null; b=$(ms)
    echo $((b - a)) >>"$T/cold"
    a=$(ms); ctags -R --languages=Python -f "$T/tags" "$DJANGO"; b=$(ms)
    echo $((b - a)) >>"$T/ctags"
    i=$((i + 1))
done
cold=$(median <"$T/cold"); ctg=$(median <"$T/ctags")
[ "$ctg" -gt 0 ] || ctg=1

: >"$T/warm"
i=0
while [ $i -lt "$RUNS" ]; do
    a=$(ms); "$DRQA" --no-progress --index "$T/cold.sqlite" --index-only "$DJANGO" >/dev/null; b=$(ms)
    echo $((b - a)) >>"$T/warm"
    i=$((i + 1))
done
warm=$(median <"$T/warm")

rm -f "$T"/cold.sqlite*
/usr/bin/time -v "$DRQA" --no-progress --index "$T/cold.sqlite" --index-only "$DJANGO" >/dev/null 2>"$T/time-django"
rss_dj=$(awk -F': ' '/Maximum resident/ { print int($2 / 1024) }' "$T/time-django")
cpu_dj=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$T/time-django")
size_dj=$(( $(stat -c %s "$T/cold.sqlite") / 1048576 ))

verdict() { if [ "$1" = 1 ]; then echo "goal met"; else echo "GOAL MISSED"; fi; }
printf 'cold index (median of %d): %d ms; ctags %d ms; ratio %s  (goal <= 2.5: %s)\n' "$RUNS" "$cold" "$ctg" \
    "$(awk -v a="$cold" -v b="$ctg" 'BEGIN { printf "%.2f", a / b }')" \
    "$(verdict "$(awk -v a="$cold" -v b="$ctg" 'BEGIN { print (a / b <= 2.5) }')")"
printf 'cold index CPU (user+sys): %s s; peak RSS %d MB; index size %d MB\n' "$cpu_dj" "$rss_dj" "$size_dj"
printf 'warm no-change update (median of %d): %d ms; ratio to ctags %s  (goal <= 50 ms: %s)\n' "$RUNS" "$warm" \
    "$(awk -v a="$warm" -v b="$ctg" 'BEGIN { printf "%.2f", a / b }')" "$(verdict "$( [ "$warm" -le 50 ] && echo 1 || echo 0)")"

if [ -d "$SYMPY" ]; then
    /usr/bin/time -v "$DRQA" --no-progress --index "$T/sympy.sqlite" --index-only "$SYMPY" >/dev/null 2>"$T/time-sympy"
    rss=$(awk -F': ' '/Maximum resident/ { print int($2 / 1024) }' "$T/time-sympy")
    wall=$(awk -F': ' '/Elapsed/ { print $2 }' "$T/time-sympy")
    a=$(ms); ctags -R --languages=Python -f "$T/tags" "$SYMPY"; b=$(ms)
    printf 'sympy (%d .py files): cold index %s (ctags %d ms), peak RSS %d MB  (goal <= 150 MB: %s)\n' \
        "$(find "$SYMPY" -name '*.py' | wc -l)" "$wall" $((b - a)) "$rss" "$(verdict "$( [ "$rss" -le 150 ] && echo 1 || echo 0)")"
else
    echo "sympy: no sources at '$SYMPY' (apt-get install python3-sympy); RSS goal not measured"
fi
