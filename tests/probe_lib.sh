# probe_lib.sh: sourced by each tests/probes/*.sh. A probe checks one
# property and ends with one line, "probe NAME: held" (exit 0), "probe NAME:
# FAILED (why)" (exit 1) or "probe NAME: skipped (why)" (exit 77: what it
# needs is missing, e.g. root for a tmpfs). PROBE_SCALE (default 1) is how
# many rounds a loop runs: tests/test_probes.sh runs every probe once,
# bench/probe.sh with a larger scale. Each probe works in its own temporary
# directory $T, with a copy of the pyrepo fixture in $R indexed at $IDX
# (probe_index). The directory, HOME and the rest come from tests/lib.sh.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${PYTHON3:=python3}" "${PROBE_SCALE:=1}"
: "${DRQA:=$top_builddir/drqa-tui}"
PROBE=$(basename "$0" .sh)
. "$top_srcdir/tests/lib.sh"
PROBE_PIDS=
at_exit 'for p in $PROBE_PIDS; do kill -9 "$p" 2>/dev/null; done; wait 2>/dev/null
[ -n "${PROBE_MNT:-}" ] && umount "$PROBE_MNT" 2>/dev/null'
R="$T/repo"
IDX="$T/index.sqlite"
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$R"
chmod -R u+w "$R"   # a copy from a read-only source tree (distcheck)
Q="Where is the session flushed?"

held() { echo "probe $PROBE: held"; exit 0; }
failed() { echo "probe $PROBE: FAILED ($*)"; exit 1; }
skipped() { echo "probe $PROBE: skipped ($*)"; exit 77; }
# verdict STATUS WHY: held when STATUS is 0
verdict() { if [ "$1" -eq 0 ]; then held; else shift; failed "$@"; fi; }
probe_index() { "$DRQA" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>"$T/index.err"; }
# drqa ARGS...: the program on $R with $IDX, offline; status in $rc, stderr in $T/err
drqa() { "$DRQA" --index "$IDX" --no-progress --policy offline "$@" "$R" 2>"$T/err"; rc=$?; }
need_hooks() { [ -x "$DRQA_HOOKS" ] || skipped "no $DRQA_HOOKS (make check builds it)"; }
# wait_for FILE: a bounded poll (at most 120 s)
wait_for() { wait_file "$1"; }
nlines() { if [ -e "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }
# questions FILE N: N distinct questions with ids 1..N
questions() {
    : >"$1"
    _k=1
    while [ $_k -le "$2" ]; do
        printf '{"id": %d, "question": "Where is the session flushed? (%d)"}\n' "$_k" "$_k" >>"$1"
        _k=$((_k + 1))
    done
}
# ids_once FILE N: every id 1..N on exactly one line
ids_once() { "$PYTHON3" -c 'import json, sys, collections
c = collections.Counter(json.loads(l)["id"] for l in open(sys.argv[1]) if l.strip())
sys.exit(0 if sorted(c) == list(range(1, int(sys.argv[2]) + 1)) and set(c.values()) == {1} else 1)' "$1" "$2"; }
# no_raw_escapes FILE: no ESC, C1 control or bidirectional control in the file
no_raw_escapes() { "$PYTHON3" -c 'import sys
t = open(sys.argv[1], "rb").read().decode("utf-8", "replace")
bad = [c for c in t if c == "\x1b" or 0x80 <= ord(c) < 0xa0]
sys.exit(1 if bad else 0)' "$1"; }
# tmpfs_mount DIR SIZE: a small tmpfs (root only), unmounted at exit
tmpfs_mount() {
    [ "$(id -u)" = 0 ] || skipped "a full disk needs root to mount a tmpfs"
    mkdir -p "$1"
    mount -t tmpfs -o size="$2" tmpfs "$1" 2>/dev/null || skipped "cannot mount a tmpfs here"
    PROBE_MNT=$1
}
