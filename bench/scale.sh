#!/bin/sh
# bench/scale.sh: indexing at monorepo scale. Not a test: it prints a table and
# whether each goal was met. Two trees:
#
#   pylib   Debian's whole /usr/lib/python3/dist-packages as one tree (a walk:
#           it is no git work tree), about 11,000 .py files once the bench
#           packages are installed
#   gen     a generated tree of 100,000 small Python files (500 packages of 200)
#
# For each: the cold index time and its ratio to the tree-sitter parse floor
# (bench/tsparse.c on the Python and JavaScript files the index lists, on one
# thread per core, as bench/index.sh measures it: text files and other
# languages have no floor and count against the ratio), peak RSS of the cold
# index, the warm no-change update (median of RUNS), the index size, and the
# median wall time of an offline question (--ask --policy offline, the whole
# process: opening the index and preparing SemanticSearch included), with
# each question's wall and CPU milliseconds (on a shared machine the wall time
# also measures the other processes).
#
#   goals: cold <= 1.5 x floor; peak RSS <= 300 MB; warm no-change <= 300 ms
#          (pylib) and <= 1 s (gen); a question <= 1 s; index <= 2 x the
#          indexed source bytes
#
# usage: bench/scale.sh [path/to/drqa-tui]   (default: ./drqa-tui in the build dir)
# env:   RUNS (default 3), PYLIB (default /usr/lib/python3/dist-packages),
#        NGEN (default 100000 files), KEEP (non-empty: keep the work directory)
set -eu
DRQA=${1:-./drqa-tui}
RUNS=${RUNS:-3}
PYLIB=${PYLIB:-/usr/lib/python3/dist-packages}
NGEN=${NGEN:-100000}
[ -x "$DRQA" ] || { echo "bench/scale.sh: no drqa-tui at '$DRQA'; pass its path" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/scale.sh: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
[ -d "$PYLIB" ] || { echo "bench/scale.sh: no '$PYLIB' (set PYLIB)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "bench/scale.sh: the sqlite3 shell is missing (apt-get install sqlite3)" >&2; exit 2; }
BUILD=$(dirname "$DRQA")
BENCH=$(dirname "$0")
CC=${CC:-cc}
[ -f "$BUILD/libgrammars.a" ] || { echo "bench/scale.sh: no $BUILD/libgrammars.a to build bench/tsparse.c (build drqa-tui first)" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/drqa-scale.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$T"' EXIT
NCPU=$(nproc)
GRAMMAR="$BUILD/libgrammars.a"
JSFLAG=
# every grammar compiled in is in libgrammars.a (src/languages.def)
if nm "$BUILD/libgrammars.a" 2>/dev/null | grep -q " T tree_sitter_javascript$"; then JSFLAG=-DTSPARSE_JS; fi
# shellcheck disable=SC2086 # GRAMMAR may be several words, JSFLAG empty
"$CC" -O2 -std=c11 $JSFLAG -o "$T/tsparse" "$BENCH/tsparse.c" $GRAMMAR -ltree-sitter -pthread ||
    { echo "bench/scale.sh: could not build bench/tsparse.c (libtree-sitter-dev)" >&2; exit 2; }

ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
verdict() { if [ "$1" = 1 ]; then echo "met"; else echo "NOT MET"; fi; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? 1 : 0 }'; }

echo "machine: $NCPU cores, load $(cut -d' ' -f1-3 /proc/loadavg) at the start; drqa-tui $("$DRQA" --version | cut -d' ' -f2)"

# the generated tree: NGEN small modules, 200 to a package
"${PYTHON3:-python3}" "$BENCH/gentree.py" "$T/gen" "$NGEN"

# bench TREE NAME WARM_GOAL_MS QUESTION...: one row
row() {
    tree=$1 name=$2 warm_goal=$3
    shift 3
    idx="$T/$name.sqlite"
    find "$tree" -type f >/dev/null 2>&1 || true   # the page cache, for every run alike
    rm -f "$idx"*
    /usr/bin/time -v "$DRQA" --no-progress --index "$idx" --index-only --json "$tree" >"$T/$name.json" 2>"$T/$name.time"
    cold=$(awk -F': ' '/Elapsed/ { n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; printf "%d", s * 1000 }' "$T/$name.time")
    rss=$(awk -F': ' '/Maximum resident/ { print int($2 / 1024) }' "$T/$name.time")
    files=$(sqlite3 "$idx" "SELECT count(*) FROM files")
    text=$(sqlite3 "$idx" "SELECT count(*) FROM files WHERE lang IN ('markdown','rst','toml','yaml','ini','text')")
    size=$(( $(stat -c %s "$idx") / 1048576 ))
    srcb=$(sqlite3 "$idx" "SELECT total(size) FROM files" | cut -d. -f1)
    sratio=$(ratio "$(stat -c %s "$idx")" "$srcb")
    langs="'python'"
    [ -n "$JSFLAG" ] && langs="'python','javascript'"
    sqlite3 -separator ' ' "$idx" "SELECT lang, '$tree/' || path FROM files WHERE lang IN ($langs) ORDER BY path" >"$T/$name.list"
    floor=$("$T/tsparse" "$T/$name.list" "$NCPU" | awk -v t="$NCPU" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } } f["threads"] == t { print f["wall_ms"] }')
    : >"$T/$name.warm"
    i=0
    while [ $i -lt "$RUNS" ]; do
        a=$(ms); "$DRQA" --no-progress --index "$idx" --index-only "$tree" >/dev/null; b=$(ms)
        echo $((b - a)) >>"$T/$name.warm"
        i=$((i + 1))
    done
    warm=$(median <"$T/$name.warm")
    : >"$T/$name.ask"
    : >"$T/$name.askcpu"
    for q in "$@"; do
        a=$(ms); /usr/bin/time -f "%U %S" -o "$T/$name.qtime" "$DRQA" --quiet --no-progress --index "$idx" --policy offline --json --ask "$q" "$tree" >/dev/null 2>&1; b=$(ms)
        echo $((b - a)) >>"$T/$name.ask"
        awk '{ printf "%d\n", ($1 + $2) * 1000 }' "$T/$name.qtime" >>"$T/$name.askcpu"
    done
    ask=$(median <"$T/$name.ask")
    askcpu=$(median <"$T/$name.askcpu")
    printf '%-6s %7d files (%d text)  cold %6d ms  floor %6d ms  x%-5s  RSS %4d MB  warm %5d ms  index %4d MB (x%s the %d MB of source)  question %5d ms\n' \
        "$name" "$files" "$text" "$cold" "$floor" "$(ratio "$cold" "$floor")" "$rss" "$warm" "$size" "$sratio" $((srcb / 1048576)) "$ask"
    printf '       questions (ms, wall/CPU, the first also fits the local vectors and keeps what questions read in the index): %s\n' \
        "$(paste -d/ "$T/$name.ask" "$T/$name.askcpu" | tr '\n' ' ')median CPU $askcpu"
    printf '       goals: cold <= 1.5 x floor %s; RSS <= 300 MB %s; warm <= %d ms %s; question <= 1 s %s; index <= 2 x source %s\n' \
        "$(verdict "$(le "$(ratio "$cold" "$floor")" 1.5)")" "$(verdict "$(le "$rss" 300)")" "$warm_goal" \
        "$(verdict "$(le "$warm" "$warm_goal")")" "$(verdict "$(le "$ask" 1000)")" "$(verdict "$(le "$sratio" 2)")"
}

echo "pylib: $PYLIB ($(find "$PYLIB" -name '*.py' | wc -l) .py files); gen: $NGEN generated .py files"
row "$PYLIB" pylib 300 "How does requests follow redirects?" "Where is the URL rule of a Flask route registered?" \
    "What does Session.mount do?"
row "$T/gen" gen 1000 "What does helper_4242 return?" "Which class has the value method of module 777?" \
    "Where is LIMIT_123 defined?"
echo "load at the end: $(cut -d' ' -f1-3 /proc/loadavg) (timings on a shared machine are noisy; RUNS=$RUNS)"
