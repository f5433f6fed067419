#!/bin/sh
# bench/index.sh: indexing speed, memory and size, against tree-sitter parsing
# alone measured in the same run on the same files (so the ratio, not the
# absolute time, is the result). Not a test: it prints numbers and whether each
# goal was met.
#
#   cold   fresh index of django and of sympy   goal: <= 1.5 x the parse floor
#          (with the CPU it spent beyond parsing, what the goal leaves for that,
#          and how much of it the parser threads spent before anything reached
#          sqlite: the whole CPU less the writer thread's, from its --log line)
#   warm   no-change update of django           goal: <= 50 ms
#   RSS    peak of a cold sympy index           goal: <= 150 MB
#   size   index file / indexed source bytes    goal: <= 2 (django)
#   used   the same after a first question (no goal: printed), and that
#          first question's time beside a second one's (a fresh index holds
#          the local vectors, line postings and name lists: src/derive.h)
#   first  time to the first answer: a fresh index plus one question
#          (--ask on a new index path), beside the cold index and the parse
#          floor, and beside an older drqa-tui's first answer (OLD) measured
#          alternately in the same run   goal: <= 0.7 x OLD's (django, sympy)
#          and its peak RSS on sympy      goal: <= 150 MB
#   later  a later question on the generated tree of NGEN files
#          (bench/gentree.py, as bench/scale.sh makes it)   goal: <= 1 s
#
# The floor is tree-sitter parsing alone of the Python and JavaScript files the
# index parsed, as its files table lists them (bench/tsparse.c, compiled here
# against the build directory's grammars: no extraction, no sqlite; django
# ships JavaScript next to its Python), on one thread per core: the cold index
# cannot be faster than that. Text files (Markdown, YAML, ...) have no parser,
# so they count against the ratio. Runs alternate between drqa-tui and the
# floor so that both see the same machine load. universal-ctags is timed too
# (ctags -R --languages=Python, and ctags -L on exactly those files), as
# another anchor.
#
# usage: bench/index.sh [path/to/drqa-tui]   (default: ./drqa-tui in the build dir)
# env:   RUNS (default 5), DJANGO, SYMPY (source trees), OLD (the drqa-tui to
#        compare first answers with; default /tmp/drqa-old when present, none:
#        no ratio), FIRST_RUNS (default 3), NGEN (default 100000; 0: no
#        generated tree)
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
# the machine's load now: the rows measured late in a long run say theirs
load() { echo "load $(cut -d' ' -f1-3 /proc/loadavg)"; }
median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : int((v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg); drqa-tui $("$DRQA" --version | cut -d' ' -f2)"
echo "tree: $DJANGO ($(find "$DJANGO" -name '*.py' | wc -l) .py files)"
# warm the page cache for every tool
ctags -R --languages=Python -f "$T/tags" "$DJANGO"
"$DRQA" --no-progress --index "$T/warmup.sqlite" --index-only "$DJANGO" >/dev/null
HAVE_SYMPY=
if [ -d "$SYMPY" ]; then
    HAVE_SYMPY=1
    "$DRQA" --no-progress --index "$T/warmup-sympy.sqlite" --index-only "$SYMPY" >/dev/null
fi

# the parsed files, as the index lists them: 'LANGUAGE PATH' lines for tsparse,
# paths alone for ctags -L
files_of() { sqlite3 -separator ' ' "$1" "SELECT lang, '$2/' || path FROM files WHERE lang IN ('python', 'javascript') ORDER BY path"; }
# bytes of source the index holds (every file it indexed, text files too)
src_bytes() { sqlite3 "$1" "SELECT total(size) FROM files" | cut -d. -f1; }
files_of "$T/warmup.sqlite" "$DJANGO" >"$T/django.list"
cut -d' ' -f2- "$T/django.list" >"$T/django.paths"
nlist=$(wc -l <"$T/django.list")
nall=$(sqlite3 "$T/warmup.sqlite" "SELECT count(*) FROM files")
[ -n "$HAVE_SYMPY" ] && files_of "$T/warmup-sympy.sqlite" "$SYMPY" >"$T/sympy.list"
# the grammars of other languages are in libgrammars_lang.a when the build has them
[ -f "$BUILD/libgrammars_lang.a" ] && GRAMMAR="$GRAMMAR $BUILD/libgrammars_lang.a"
JSFLAG=
grep -q '^javascript ' "$T/django.list" && JSFLAG=-DTSPARSE_JS
# shellcheck disable=SC2086 # GRAMMAR may be several words, JSFLAG empty
"$CC" -O2 -std=c11 $JSFLAG -o "$T/tsparse" "$BENCH/tsparse.c" $GRAMMAR -ltree-sitter -pthread ||
    { echo "bench/index.sh: could not build bench/tsparse.c against $GRAMMAR and -ltree-sitter (libtree-sitter-dev)" >&2; exit 2; }

# cold: runs alternate so that every tool sees the same machine load
: >"$T/cold"; : >"$T/ctags"; : >"$T/ctags-same"; : >"$T/parse-alone"; : >"$T/cold-sympy"; : >"$T/parse-sympy"
i=0
while [ $i -lt "$RUNS" ]; do
    rm -f "$T"/cold.sqlite*
    a=$(ms); "$DRQA" --no-progress --index "$T/cold.sqlite" --index-only "$DJANGO" >/dev/null; b=$(ms)
    echo $((b - a)) >>"$T/cold"
    "$T/tsparse" "$T/django.list" "$NCPU" >>"$T/parse-alone"
    a=$(ms); ctags -R --languages=Python -f "$T/tags" "$DJANGO"; b=$(ms)
    echo $((b - a)) >>"$T/ctags"
    a=$(ms); ctags -L "$T/django.paths" -f "$T/tags-same" 2>/dev/null; b=$(ms)
    echo $((b - a)) >>"$T/ctags-same"
    if [ -n "$HAVE_SYMPY" ]; then
        rm -f "$T"/cold-sympy.sqlite*
        a=$(ms); "$DRQA" --no-progress --index "$T/cold-sympy.sqlite" --index-only "$SYMPY" >/dev/null; b=$(ms)
        echo $((b - a)) >>"$T/cold-sympy"
        "$T/tsparse" "$T/sympy.list" "$NCPU" >>"$T/parse-sympy"
    fi
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
/usr/bin/time -v "$DRQA" --no-progress --log "$T/log-django" --index "$T/cold.sqlite" --index-only "$DJANGO" >/dev/null 2>"$T/time-django"
rss_dj=$(awk -F': ' '/Maximum resident/ { print int($2 / 1024) }' "$T/time-django")
cpu_dj=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$T/time-django")
size_dj=$(stat -c %s "$T/cold.sqlite")
src_dj=$(src_bytes "$T/cold.sqlite")

verdict() { if [ "$1" = 1 ]; then echo "goal met"; else echo "GOAL MISSED"; fi; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
le() { awk -v a="$1" -v b="$2" 'BEGIN { print (a <= b) ? 1 : 0 }'; }
mb() { awk -v a="$1" 'BEGIN { printf "%.1f", a / 1048576 }'; }
# the floor: tree-sitter parsing alone (medians of the runs above, per thread count)
tsp() { awk -v t="$1" -v k="$2" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } }
    f["threads"] == t { print f[k] }' "${3:-$T/parse-alone}" | median; }
p1c=$(tsp 1 cpu_ms); p1w=$(tsp 1 wall_ms)
if [ "$NCPU" -gt 1 ]; then pnc=$(tsp "$NCPU" cpu_ms); pnw=$(tsp "$NCPU" wall_ms); else pnc=$p1c; pnw=$p1w; fi
[ "$pnw" -gt 0 ] || pnw=1

printf 'django: %d files indexed, %d parsed by tree-sitter (%s MB of source)\n' "$nall" "$nlist" "$(mb "$src_dj")"
printf 'parse floor (tree-sitter alone, median of %d, no extraction, no sqlite): %d ms CPU, %d ms wall on 1 thread; %d ms CPU, %d ms wall on %d threads\n' \
    "$RUNS" "$p1c" "$p1w" "$pnc" "$pnw" "$NCPU"
printf 'cold index django (median of %d): %d ms = %s x the %d-thread parse floor  (goal <= 1.5: %s)\n' "$RUNS" "$cold" \
    "$(ratio "$cold" "$pnw")" "$NCPU" "$(verdict "$(le "$(ratio "$cold" "$pnw")" 1.5)")"
printf '  ctags -R --languages=Python %d ms (cold index = %s x); ctags -L on the %d parsed files %d ms (%s x); parse floor = %s x ctags\n' \
    "$ctg" "$(ratio "$cold" "$ctg")" "$nlist" "$ctgs" "$(ratio "$cold" "$ctgs")" "$(ratio "$pnw" "$ctg")"
rest=$(awk -v a="$cpu_dj" -v p="$p1c" 'BEGIN { r = a * 1000 - p; printf "%d", (r > 0 ? r : 0) }')
printf '  cold index CPU (user+sys): %s s, of which about %d ms beyond parsing; peak RSS %d MB\n' "$cpu_dj" "$rest" "$rss_dj"
# what the time goal leaves for everything but parsing, even with every core
# busy from the first millisecond to the last: 1.5 x the floor's wall time on
# NCPU cores, less the parsing itself
allow=$(awk -v w="$pnw" -v n="$NCPU" -v p="$p1c" 'BEGIN { r = 1.5 * w * n - p; printf "%d", (r > 0 ? r : 0) }')
printf '  the 1.5 x goal leaves at most %d ms of CPU beyond parsing on %d cores (all busy throughout); this index spent %s x that\n' \
    "$allow" "$NCPU" "$(ratio "$rest" "$allow")"
# of that, what the parser threads spend before anything reaches sqlite: the
# whole CPU less the writer thread's (its --log line) and the parsing itself
parser_extra() { awk -v a="$1" -v p="$2" -v lf="$3" 'BEGIN {
    w = -1; while ((getline l < lf) > 0) if (match(l, /writer thread CPU [0-9]+ ms/)) { split(substr(l, RSTART, RLENGTH), f, " "); w = f[4] }
    if (w < 0) { print -1; exit } r = a * 1000 - w - p; printf "%d", (r > 0 ? r : 0) }'; }
px=$(parser_extra "$cpu_dj" "$p1c" "$T/log-django")
[ "$px" -ge 0 ] && printf '  the parser threads alone (extraction, chunks, terms, compression; no sqlite) spent about %d ms beyond parsing: %s x what the goal leaves\n' \
    "$px" "$(ratio "$px" "$allow")"
printf 'index size django: %s MB = %s x the %s MB of source indexed  (goal <= 2: %s)\n' "$(mb "$size_dj")" \
    "$(ratio "$size_dj" "$src_dj")" "$(mb "$src_dj")" "$(verdict "$(le "$(ratio "$size_dj" "$src_dj")" 2)")"
# the rows a fresh index holds for questions (src/derive.h), which an index
# of an older build gained with its first question
derived_bytes() { sqlite3 "$1" "SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name IN ('vec_term_blocks', 'vec_models',
    'vec_matrix', 'vec_matrix_quick', 'lp_terms', 'lp_meta', 'act_names') OR name LIKE 'sqlite_autoindex_vec%'
    OR name LIKE 'sqlite_autoindex_lp%'" 2>/dev/null || echo 0; }
der_dj=$(derived_bytes "$T/cold.sqlite")
printf '  of which the derived rows (vectors, line postings, names) %s MB; without them %s MB = %s x the source\n' \
    "$(mb "$der_dj")" "$(mb $((size_dj - der_dj)))" "$(ratio $((size_dj - der_dj)) "$src_dj")"
printf 'warm no-change update django (median of %d): %d ms  (goal <= 50 ms: %s)\n' "$RUNS" "$warm" \
    "$(verdict "$(le "$warm" 50)")"

# what the first question adds to the index (a fresh index holds the local
# vectors, the line postings and the name lists already; an older one's first
# question stores them), and the time it takes beside a second one
Q1="How does the URL resolver match a path to a view?"
a=$(ms); "$DRQA" --no-progress --quiet --policy offline --index "$T/cold.sqlite" --ask "$Q1" "$DJANGO" >/dev/null 2>&1; b=$(ms)
first_q=$((b - a))
a=$(ms); "$DRQA" --no-progress --quiet --policy offline --index "$T/cold.sqlite" --ask "$Q1" "$DJANGO" >/dev/null 2>&1; b=$(ms)
second_q=$((b - a))
size_used=$(( $(stat -c %s "$T/cold.sqlite") + $(stat -c %s "$T/cold.sqlite-wal" 2>/dev/null || echo 0) ))
printf 'index size django after a first question: %s MB = %s x the source\n' "$(mb "$size_used")" \
    "$(ratio "$size_used" "$src_dj")"
printf 'first question after a cold index django: %d ms; the same question again: %d ms\n' \
    "$first_q" "$second_q"

if [ -n "$HAVE_SYMPY" ]; then
    cs=$(median <"$T/cold-sympy")
    snw=$(tsp "$NCPU" wall_ms "$T/parse-sympy"); snc=$(tsp "$NCPU" cpu_ms "$T/parse-sympy")
    [ "$snw" -gt 0 ] || snw=1
    rm -f "$T"/cold-sympy.sqlite*
    /usr/bin/time -v "$DRQA" --no-progress --log "$T/log-sympy" --index "$T/cold-sympy.sqlite" --index-only "$SYMPY" >/dev/null 2>"$T/time-sympy"
    rss=$(awk -F': ' '/Maximum resident/ { print int($2 / 1024) }' "$T/time-sympy")
    size_s=$(stat -c %s "$T/cold-sympy.sqlite"); src_s=$(src_bytes "$T/cold-sympy.sqlite")
    printf 'sympy: %d files parsed; parse floor %d ms CPU, %d ms wall on %d threads (median of %d)\n' \
        "$(wc -l <"$T/sympy.list")" "$snc" "$snw" "$NCPU" "$RUNS"
    printf 'cold index sympy (median of %d): %d ms = %s x the parse floor  (goal <= 1.5: %s)\n' "$RUNS" "$cs" \
        "$(ratio "$cs" "$snw")" "$(verdict "$(le "$(ratio "$cs" "$snw")" 1.5)")"
    cpu_s=$(awk -F': ' '/User time/ { u = $2 } /System time/ { s = $2 } END { printf "%.2f", u + s }' "$T/time-sympy")
    s1c=$(tsp 1 cpu_ms "$T/parse-sympy")
    rest_s=$(awk -v a="$cpu_s" -v p="$s1c" 'BEGIN { r = a * 1000 - p; printf "%d", (r > 0 ? r : 0) }')
    allow_s=$(awk -v w="$snw" -v n="$NCPU" -v p="$s1c" 'BEGIN { r = 1.5 * w * n - p; printf "%d", (r > 0 ? r : 0) }')
    printf '  cold index CPU (user+sys): %s s, of which about %d ms beyond parsing; the 1.5 x goal leaves at most %d ms (%s x spent)\n' \
        "$cpu_s" "$rest_s" "$allow_s" "$(ratio "$rest_s" "$allow_s")"
    pxs=$(parser_extra "$cpu_s" "$s1c" "$T/log-sympy")
    [ "$pxs" -ge 0 ] && printf '  the parser threads alone spent about %d ms beyond parsing: %s x what the goal leaves\n' \
        "$pxs" "$(ratio "$pxs" "$allow_s")"
    printf 'peak RSS sympy: %d MB  (goal <= 150 MB: %s)\n' "$rss" "$(verdict "$(le "$rss" 150)")"
    printf 'index size sympy: %s MB = %s x the %s MB of source indexed\n' "$(mb "$size_s")" "$(ratio "$size_s" "$src_s")" \
        "$(mb "$src_s")"
else
    echo "sympy: no sources at '$SYMPY' (apt-get install python3-sympy); its cold and RSS goals not measured"
fi

# first answer: a fresh index plus one question, this build and OLD in turn
OLD=${OLD:-}
[ -z "$OLD" ] && [ -x /tmp/drqa-old ] && OLD=/tmp/drqa-old
[ -n "$OLD" ] && [ ! -x "$OLD" ] && { echo "bench/index.sh: OLD='$OLD' is not an executable; first answers not compared" >&2; OLD=; }
FIRST_RUNS=${FIRST_RUNS:-3}
# first_answer BIN TREE: one fresh --ask; prints 'wall_ms peak_kb'
first_answer() {
    rm -f "$T"/first.sqlite*
    a=$(ms)
    /usr/bin/time -f '%M' -o "$T/first.time" "$1" --no-progress --quiet --policy offline --index "$T/first.sqlite" \
        --ask "$Q1" "$2" >/dev/null 2>&1
    b=$(ms)
    echo "$((b - a)) $(tail -1 "$T/first.time")"
}
# first_row NAME TREE COLD_MS FLOOR_MS [RSS_GOAL_MB]
first_row() {
    : >"$T/fa-new"; : >"$T/fa-old"
    i=0
    while [ $i -lt "$FIRST_RUNS" ]; do
        first_answer "$DRQA" "$2" >>"$T/fa-new"
        [ -n "$OLD" ] && first_answer "$OLD" "$2" >>"$T/fa-old"
        i=$((i + 1))
    done
    fn=$(cut -d' ' -f1 "$T/fa-new" | median); frss=$(cut -d' ' -f2 "$T/fa-new" | sort -n | tail -1)
    printf 'first answer %s (fresh index + one question, median of %d): %d ms; cold index %d ms, parse floor %d ms (first answer = %s x the floor); peak RSS %d MB\n' \
        "$1" "$FIRST_RUNS" "$fn" "$3" "$4" "$(ratio "$fn" "$4")" $((frss / 1024))
    if [ -n "$OLD" ]; then
        fo=$(cut -d' ' -f1 "$T/fa-old" | median); orss=$(cut -d' ' -f2 "$T/fa-old" | sort -n | tail -1)
        printf '  %s (%s) alternately: %d ms, peak RSS %d MB; this build = %s x  (goal <= 0.7: %s; %s)\n' "$OLD" \
            "$("$OLD" --version | cut -d' ' -f2)" "$fo" $((orss / 1024)) "$(ratio "$fn" "$fo")" \
            "$(if [ "$(le "$(ratio "$fn" "$fo")" 0.7)" = 1 ]; then echo MET; else echo MISSED; fi)" "$(load)"
        # each run against the OLD run right after it: the machine's speed
        # drifts over a long run, and a pair shares its moment
        pairs=$(paste -d' ' "$T/fa-new" "$T/fa-old" | awk '{ printf "%.2f\n", ($3 > 0 ? $1 / $3 : 0) }')
        printf '  pair by pair (this run / the OLD run after it): %s; median %s\n' "$(echo "$pairs" | tr '\n' ' ' |
            sed 's/ $//')" "$(echo "$pairs" | awk '{ print $1 * 1000 }' | median | awk '{ printf "%.2f", $1 / 1000 }')"
    fi
    [ -n "${5:-}" ] && printf '  peak RSS of the first answer %s: %d MB  (goal <= %d MB: %s)\n' "$1" $((frss / 1024)) "$5" \
        "$(if [ "$(le $((frss / 1024)) "$5")" = 1 ]; then echo MET; else echo MISSED; fi)"
    return 0
}
first_row django "$DJANGO" "$cold" "$pnw"
[ -n "$HAVE_SYMPY" ] && first_row sympy "$SYMPY" "$cs" "$snw" 150

# a later question on the generated tree (its index built and asked once first)
NGEN=${NGEN:-100000}
if [ "$NGEN" -gt 0 ]; then
    "${PYTHON3:-python3}" "$BENCH/gentree.py" "$T/gen" "$NGEN"
    rm -f "$T"/gen.sqlite*
    a=$(ms); "$DRQA" --no-progress --quiet --policy offline --index "$T/gen.sqlite" --ask "What does helper_4242 return?" "$T/gen" >/dev/null 2>&1; b=$(ms)
    gfirst=$((b - a))
    : >"$T/gen-later"
    for q in "What does helper_4242 return?" "Which class has the value method of module 777?" "Where is LIMIT_123 defined?"; do
        a=$(ms); "$DRQA" --no-progress --quiet --policy offline --log "$T/gen-later.log" --index "$T/gen.sqlite" \
            --ask "$q" "$T/gen" >/dev/null 2>&1; b=$(ms)
        echo $((b - a)) >>"$T/gen-later"
    done
    glater=$(median <"$T/gen-later")
    # of which the no-change check (its --log line: open+scan, compare)
    gcheck=$(sed -n 's/.*nothing changed; open+scan \([0-9]*\) ms, compare \([0-9]*\) ms.*/\1 \2/p' "$T/gen-later.log" |
        awk '{ print $1 + $2 }' | median)
    printf 'generated tree (%d files): first answer (fresh index + one question) %d ms; a later question (median of 3: %s ms) %d ms  (goal <= 1000 ms: %s; %s)\n' \
        "$NGEN" "$gfirst" "$(tr '\n' ' ' <"$T/gen-later" | sed 's/ $//')" "$glater" \
        "$(if [ "$(le "$glater" 1000)" = 1 ]; then echo MET; else echo MISSED; fi)" "$(load)"
    printf '  of which the no-change check (open, scan and compare, from --log; median) %s ms\n' "${gcheck:-?}"
fi
