#!/bin/sh
# bench/index.sh: indexing speed and memory, against universal-ctags measured in
# the same run on the same tree (so the ratio, not the absolute time, is the
# result). Not a test: it prints numbers and whether each goal was met.
#
#   cold   fresh index of django        goal: <= 2.5 x ctags -R --languages=Python
#   warm   no-change update of django   goal: <= 50 ms
#   RSS    peak of a cold sympy index   goal: <= 150 MB
#
# It also measures tree-sitter parsing alone on the files the index parsed,
# as its files table lists them (bench/tsparse.c, compiled here against the
# build directory's grammars: no extraction, no sqlite; django ships
# JavaScript next to its Python, which drqa-tui indexes too), on 1
# thread and on one thread per core, alternating with ctags: the cold index
# cannot be faster than that, so it is the floor for the cold goal. Besides
# the goal's anchor (ctags -R --languages=Python), ctags is timed on exactly
# those files (ctags -L), the like-for-like anchor.
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
BUILD=$(dirname "$DRQA")
BENCH=$(dirname "$0")
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "bench/index.sh: no C compiler '$CC' to build bench/tsparse.c (set CC)" >&2; exit 2; }
[ -f "$BENCH/tsparse.c" ] || { echo "bench/index.sh: no $BENCH/tsparse.c next to this script" >&2; exit 2; }
if [ -f "$BUILD/libgrammars.a" ]; then
    GRAMMAR="$BUILD/libgrammars.a"
elif pkg-config --exists tree-sitter-python 2>/dev/null; then
    GRAMMAR=$(pkg-config --libs tree-sitter-python)
else
    echo "bench/index.sh: no Python grammar to build bench/tsparse.c: neither $BUILD/libgrammars.a (build drqa-tui first; the bench takes the build dir from the drqa-tui path) nor pkg-config tree-sitter-python" >&2
    exit 2
fi
if [ ! -d "$SYMPY" ] && [ "$(id -u)" = 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-sympy >/dev/null
fi
command -v sqlite3 >/dev/null || { echo "bench/index.sh: the sqlite3 shell is missing (apt-get install sqlite3)" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/drqa-bench.XXXXXX")
trap 'rm -rf "$T"' EXIT
NCPU=$(nproc)

ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); drqa-tui $("$DRQA" --version | cut -d' ' -f2)"
echo "tree: $DJANGO ($(find "$DJANGO" -name '*.py' | wc -l) .py files)"
# warm the page cache for both tools
ctags -R --languages=Python -f "$T/tags" "$DJANGO"
"$DRQA" --no-progress --index "$T/warmup.sqlite" --index-only "$DJANGO" >/dev/null

# the files the index parsed, as the index lists them: 'LANGUAGE PATH' lines
# for tsparse, paths alone for ctags -L
files_of() { sqlite3 -separator ' ' "$1" "SELECT lang, '$2/' || path FROM files ORDER BY path"; }
files_of "$T/warmup.sqlite" "$DJANGO" >"$T/django.list"
cut -d' ' -f2- "$T/django.list" >"$T/django.paths"
nlist=$(wc -l <"$T/django.list")
# the grammars of other languages are in libgrammars_lang.a when the build has them
[ -f "$BUILD/libgrammars_lang.a" ] && GRAMMAR="$GRAMMAR $BUILD/libgrammars_lang.a"
JSFLAG=
grep -q '^javascript ' "$T/django.list" && JSFLAG=-DTSPARSE_JS
# shellcheck disable=SC2086 # GRAMMAR may be several words, JSFLAG empty
"$CC" -O2 -std=c11 $JSFLAG -o "$T/tsparse" "$BENCH/tsparse.c" $GRAMMAR -ltree-sitter -pthread ||
    { echo "bench/index.sh: could not build bench/tsparse.c against $GRAMMAR and -ltree-sitter (libtree-sitter-dev)" >&2; exit 2; }

# cold: runs alternate so both tools see the same machine load
: >"$T/cold"; : >"$T/ctags"; : >"$T/ctags-same"; : >"$T/parse-alone"
i=0
while [ $i -lt "$RUNS" ]; do
    rm -f "$T"/cold.sqlite*
    a=$(ms); "$DRQA" --no-progress --index "$T/cold.sqlite" --index-only "$DJANGO" >/dev/null; b=$(ms)
    echo $((b - a)) >>"$T/cold"
    a=$(ms); ctags -R --languages=Python -f "$T/tags" "$DJANGO"; b=$(ms)
    echo $((b - a)) >>"$T/ctags"
    a=$(ms); ctags -L "$T/django.paths" -f "$T/tags-same" 2>/dev/null; b=$(ms)
    echo $((b - a)) >>"$T/ctags-same"
    "$T/tsparse" "$T/django.list" "$NCPU" >>"$T/parse-alone"
    i=$((i + 1))
done
cold=$(median <"$T/cold"); ctg=$(median <"$T/ctags"); ctgs=$(median <"$T/ctags-same")
[ "$ctg" -gt 0 ] || ctg=1
[ "$ctgs" -gt 0 ] || ctgs=1

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
printf 'like for like: ctags on the %d files the index parses (ctags -L): %d ms; cold index / that = %s\n' \
    "$nlist" "$ctgs" "$(awk -v a="$cold" -v b="$ctgs" 'BEGIN { printf "%.2f", a / b }')"
printf 'cold index CPU (user+sys): %s s; peak RSS %d MB; index size %d MB\n' "$cpu_dj" "$rss_dj" "$size_dj"
printf 'warm no-change update (median of %d): %d ms; ratio to ctags %s  (goal <= 50 ms: %s)\n' "$RUNS" "$warm" \
    "$(awk -v a="$warm" -v b="$ctg" 'BEGIN { printf "%.2f", a / b }')" "$(verdict "$( [ "$warm" -le 50 ] && echo 1 || echo 0)")"

if [ -d "$SYMPY" ]; then
    /usr/bin/time -v "$DRQA" --no-progress --index "$T/sympy.sqlite" --index-only "$SYMPY" >/dev/null 2>"$T/time-sympy"
    rss=$(awk -F': ' '/Maximum resident/ { print int($2 / 1024) }' "$T/time-sympy")
    wall=$(awk -F': ' '/Elapsed/ { print $2 }' "$T/time-sympy")
    a=$(ms); ctags -R --languages=Python -f "$T/tags" "$SYMPY"; b=$(ms)
    sympy_ctags=$((b - a)); [ "$sympy_ctags" -gt 0 ] || sympy_ctags=1
    printf 'sympy (%d .py files): cold index %s (ctags %d ms), peak RSS %d MB  (goal <= 150 MB: %s)\n' \
        "$(find "$SYMPY" -name '*.py' | wc -l)" "$wall" $((b - a)) "$rss" "$(verdict "$( [ "$rss" -le 150 ] && echo 1 || echo 0)")"
else
    echo "sympy: no sources at '$SYMPY' (apt-get install python3-sympy); RSS goal not measured"
fi

# the floor: tree-sitter parsing alone (medians of the runs above, per thread count)
tsp() { awk -v t="$1" -v k="$2" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
    f["threads"] == t { print f[k] }' "${3:-$T/parse-alone}" | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
p1c=$(tsp 1 cpu_ms); p1w=$(tsp 1 wall_ms)
if [ "$NCPU" -gt 1 ]; then pnc=$(tsp "$NCPU" cpu_ms); pnw=$(tsp "$NCPU" wall_ms); else pnc=$p1c; pnw=$p1w; fi
printf 'tree-sitter parse alone of those %d files (median of %d, no extraction, no sqlite): %d ms CPU, %d ms wall on 1 thread = %s x ctags; %d ms CPU, %d ms wall on %d threads = %s x ctags (%s x ctags on the same files)\n' \
    "$nlist" "$RUNS" "$p1c" "$p1w" "$(ratio "$p1w" "$ctg")" "$pnc" "$pnw" "$NCPU" "$(ratio "$pnw" "$ctg")" "$(ratio "$pnw" "$ctgs")"
budget=$(awk -v c="$ctg" 'BEGIN { printf "%d", 2.5 * c }')
rest=$(awk -v a="$cpu_dj" -v p="$p1c" 'BEGIN { r = a * 1000 - p; printf "%d", (r > 0 ? r : 0) }')
if [ "$pnw" -le "$budget" ]; then
    printf 'floor for the goal: parse alone on %d threads is %s x ctags, so <= 2.5 x (%d ms) is reachable with tree-sitter only if extraction, chunks, sqlite, resolve and commit fit in the %d ms of wall left (at most %d ms CPU on %d cores); today they take about %d ms CPU (cold index CPU minus parse-alone CPU)\n' \
        "$NCPU" "$(ratio "$pnw" "$ctg")" "$budget" $((budget - pnw)) $(((budget - pnw) * NCPU)) "$NCPU" "$rest"
else
    printf 'floor for the goal: parse alone on %d threads is %s x ctags, above 2.5 x (%d ms): the goal is UNREACHABLE with tree-sitter parsing on this machine, whatever the rest costs (today about %d ms CPU beyond parsing)\n' \
        "$NCPU" "$(ratio "$pnw" "$ctg")" "$budget" "$rest"
fi
printf 'floor with today'"'"'s CPU: %s s user+sys spread perfectly over %d cores would be %d ms wall = %s x ctags\n' \
    "$cpu_dj" "$NCPU" "$(awk -v a="$cpu_dj" -v n="$NCPU" 'BEGIN { printf "%d", a * 1000 / n }')" \
    "$(awk -v a="$cpu_dj" -v n="$NCPU" -v c="$ctg" 'BEGIN { printf "%.2f", a * 1000 / n / c }')"

if [ -d "$SYMPY" ] && [ -n "${sympy_ctags:-}" ]; then
    files_of "$T/sympy.sqlite" "$SYMPY" >"$T/sympy.list"
    "$T/tsparse" "$T/sympy.list" "$NCPU" >"$T/tsparse-sympy"
    snw=$(tsp "$NCPU" wall_ms "$T/tsparse-sympy"); snc=$(tsp "$NCPU" cpu_ms "$T/tsparse-sympy")
    printf 'sympy tree-sitter parse alone: %d ms CPU, %d ms wall on %d threads = %s x ctags (one run)\n' \
        "$snc" "$snw" "$NCPU" "$(ratio "$snw" "$sympy_ctags")"
fi
