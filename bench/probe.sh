#!/bin/sh
# bench/probe.sh: the probe suite at length. Runs every tests/probes/*.sh
# (also those other parts of the tree add) with PROBE_SCALE rounds in their
# loops (default 15: kill -9 during indexing and during --batch --jobs 2,
# file/symlink flips during indexing, two --batch runs on one file), the
# disk-full probes on a tmpfs when run as root, and then its own long runs:
# valgrind on a few runs (when valgrind is installed). Prints one line per
# probe and "probes tried N / held M" (a skipped probe is not tried).
#
# usage: bench/probe.sh [BUILDDIR]   (from the source tree; BUILDDIR defaults to .)
top_srcdir=$(cd "$(dirname "$0")/.." && pwd)
top_builddir=$(cd "${1:-.}" && pwd)
DRQA=${DRQA:-$top_builddir/drqa-tui}
DRQA_HOOKS=${DRQA_HOOKS:-$top_builddir/tests/drqa-tui-hooks}
PROBE_SCALE=${PROBE_SCALE:-15}
PYTHON3=${PYTHON3:-python3}
export top_srcdir top_builddir DRQA DRQA_HOOKS PROBE_SCALE PYTHON3
[ -x "$DRQA" ] || { echo "bench/probe.sh: no program at $DRQA; build it first (make)" >&2; exit 2; }
[ -x "$DRQA_HOOKS" ] || echo "bench/probe.sh: no $DRQA_HOOKS (make check builds it): the probes that need it are skipped" >&2
tried=0 held=0 skipped=0
verdict() {   # verdict LINE: counts and prints one probe's line
    case $1 in
    *": held") tried=$((tried + 1)); held=$((held + 1)) ;;
    *": skipped"*) skipped=$((skipped + 1)) ;;
    *) tried=$((tried + 1)) ;;
    esac
    echo "$1"
}
for p in "$top_srcdir"/tests/probes/*.sh; do
    name=$(basename "$p" .sh)
    line=$(timeout 3600 sh "$p" 2>&1 | tail -n 1)
    case $line in "probe $name: "*) ;; *) line="probe $name: FAILED (no verdict: ${line:-nothing printed})" ;; esac
    verdict "$line"
done

# ---- valgrind on a few runs: no error in an index build, --ask and --batch --jobs 2
if command -v valgrind >/dev/null 2>&1; then
    T=$(mktemp -d "${TMPDIR:-/tmp}/drqa-probe-vg.XXXXXX")
    cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
    printf '{"id": %d, "question": "Where is the session flushed? (%d)"}\n' 1 1 2 2 3 3 >"$T/q.jsonl"
    vg() { HOME="$T" XDG_CACHE_HOME="$T/cache" valgrind -q --error-exitcode=99 --leak-check=no "$DRQA" \
        --index "$T/index.sqlite" --no-progress --quiet --policy offline "$@" "$T/repo" >/dev/null 2>"$T/vg.err"; }
    i=0 bad=
    for run in index ask batch; do
        case $run in
        index) vg --index-only ;;
        ask) vg --ask "Where is the session flushed?" ;;
        batch) vg --jobs 2 --batch "$T/q.jsonl" --out "$T/o.jsonl" ;;
        esac
        [ $? = 99 ] && bad="$bad $run"
    done
    if [ -z "$bad" ]; then verdict "probe long_valgrind: held"; else verdict "probe long_valgrind: FAILED (valgrind errors in:$bad)"; fi
    rm -rf "$T"
else
    verdict "probe long_valgrind: skipped (no valgrind)"
fi

echo "probes tried $tried / held $held (skipped $skipped; PROBE_SCALE=$PROBE_SCALE)"
[ "$tried" = "$held" ]
