#!/bin/sh
# index-langs.sh: index time per language on real source trees, against
# universal-ctags on the same tree in the same run, printed as a ratio
# (drqa-tui / ctags; the median of RUNS runs each, whole process wall time).
# drqa-tui does much more than ctags (sqlite rows, FTS chunks, calls, imports,
# resolution), so the ratio is the anchor to watch across changes, not a race.
#
# Trees (installed or fetched here, none committed):
#   java  java.base/java/{util,io} from the JDK sources (Debian openjdk-17-source)
#   go    /usr/share/gocode/src (Debian golang-github-{spf13-cobra,sirupsen-logrus,
#         gorilla-mux,stretchr-testify}-dev and their dependencies)
#   js    express 4.22.3, lodash 4.17.21 and their own files (npm pack)
#   ts    rxjs 7.8.2 src/ (npm pack)
# Usage: bench/index-langs.sh [BUILDDIR]   (BUILDDIR holds drqa-tui; default .)
# Environment: RUNS (default 3), THREADS (drqa-tui parser threads, default 1 to
# match single-threaded ctags).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
DRQA=$(cd "$build" && pwd)/drqa-tui
RUNS=${RUNS:-3}
THREADS=${THREADS:-1}
[ -x "$DRQA" ] || { echo "index-langs: no drqa-tui in '$build'; build first or pass the build directory" >&2; exit 1; }
command -v ctags >/dev/null || { echo "index-langs: ctags not found: apt-get install universal-ctags" >&2; exit 1; }
ctags --version 2>/dev/null | grep -q 'Universal Ctags' || { echo "index-langs: ctags is not universal-ctags" >&2; exit 1; }

W=$(mktemp -d "${TMPDIR:-/tmp}/drqa-bench-langs.XXXXXX")
trap 'rm -rf "$W"' EXIT
export XDG_CACHE_HOME="$W/cache"

missing=""
need_deb() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed" || missing="$missing $1"; }
need_deb openjdk-17-source
for p in spf13-cobra sirupsen-logrus gorilla-mux stretchr-testify; do need_deb "golang-github-$p-dev"; done
if [ -n "$missing" ]; then
    echo "index-langs: missing Debian packages:$missing" >&2
    echo "index-langs: install them with: apt-get install$missing" >&2
    exit 1
fi

# ---- the trees ----------------------------------------------------------------------
src_zip=$(ls /usr/lib/jvm/*openjdk*/lib/src.zip 2>/dev/null | head -n 1)
mkdir -p "$W/java"
unzip -q "$src_zip" 'java.base/java/util/*' 'java.base/java/io/*' -d "$W/java"
GO_TREE=/usr/share/gocode/src
mkdir -p "$W/js" "$W/ts"
for p in express@4.22.3 lodash@4.17.21; do
    (cd "$W" && npm pack --silent "$p" >/dev/null)
done
for t in "$W"/express-*.tgz "$W"/lodash-*.tgz; do
    d="$W/js/$(basename "$t" .tgz)"
    mkdir -p "$d"
    tar -xzf "$t" -C "$d" --strip-components=1
done
(cd "$W" && npm pack --silent rxjs@7.8.2 >/dev/null)
mkdir -p "$W/rxjs"
tar -xzf "$W"/rxjs-*.tgz -C "$W/rxjs" --strip-components=1
mv "$W/rxjs/src" "$W/ts/src"

# ---- timing -------------------------------------------------------------------------
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
time_drqa() { # tree -> ms
    i=0
    while [ $i -lt "$RUNS" ]; do
        rm -f "$W/idx.sqlite"*
        t0=$(now_ms)
        "$DRQA" --index-only --json --no-progress --threads "$THREADS" --index "$W/idx.sqlite" "$1" >"$W/out.json"
        echo $(( $(now_ms) - t0 ))
        i=$((i + 1))
    done | median
}
time_ctags() { # tree languages -> ms
    i=0
    while [ $i -lt "$RUNS" ]; do
        t0=$(now_ms)
        ctags -R --languages="$2" -f "$W/tags" "$1"
        echo $(( $(now_ms) - t0 ))
        i=$((i + 1))
    done | median
}
count() { # tree ext... -> number of files
    tree=$1
    shift
    for e in "$@"; do find "$tree" -type f -name "*.$e"; done | wc -l
}

printf '%-5s %6s %9s %9s %9s %8s %8s\n' lang files drqa_ms ctags_ms ratio symbols tags
bench() { # name tree ctags-languages ext...
    name=$1 tree=$2 langs=$3
    shift 3
    files=$(count "$tree" "$@")
    d=$(time_drqa "$tree")
    syms=$(python3 -c 'import json, sys
s = json.load(open(sys.argv[1]))["symbols"]
print(s["classes"] + s["functions"] + s["methods"] + s["variables"])' "$W/out.json")
    c=$(time_ctags "$tree" "$langs")
    tags=$(grep -vc '^!_TAG_' "$W/tags" || true)
    ratio=$(awk -v a="$d" -v b="$c" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
    printf '%-5s %6d %9d %9d %9s %8d %8d\n' "$name" "$files" "$d" "$c" "$ratio" "$syms" "$tags"
}
bench java "$W/java" Java java
bench go "$GO_TREE" Go go
bench js "$W/js" JavaScript js
bench ts "$W/ts" TypeScript ts
echo "(runs=$RUNS, drqa-tui threads=$THREADS, ratio = drqa-tui / ctags, median wall time)"
