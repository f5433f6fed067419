#!/bin/sh
# test_data_safety_signals.sh: SIGTERM, SIGINT or SIGHUP during a fresh index
# leave no side file (INDEX.tmp) behind, and the process ends as the signal
# would have it (status 128+N); the next run builds the index whole. The
# build is held part way by the test hook DRQA_TEST_HOLD (mk/index.am), so
# that the signal always lands while the side file exists.
set -u
: "${top_srcdir:=.}" "${top_builddir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
pid=
at_exit 'rm -f "$T/hold"; [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null'
need_hooks
R="$T/repo"
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$R"
chmod -R u+w "$R"   # a copy from a read-only source tree (distcheck)
for sig in TERM INT HUP; do
    case $sig in TERM) num=15 ;; INT) num=2 ;; HUP) num=1 ;; esac
    IDX="$T/index-$sig.sqlite"
    rm -f "$T/hold"
    # a shell starts background commands with SIGINT ignored: the launcher
    # gives the program the default disposition, as an interactive shell does
    DRQA_TEST_HOLD="$T/hold" "$PYTHON3" -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP): signal.signal(s, signal.SIG_DFL)
os.execv(sys.argv[1], sys.argv[1:])' "$DRQA_HOOKS" --index "$IDX" --no-progress --quiet --index-only "$R" \
        >/dev/null 2>"$T/err" &
    pid=$!
    wait_file "$T/hold"
    ok $? "SIG$sig: the fresh build is held part way"
    [ -e "$IDX.tmp" ]
    ok $? "SIG$sig: ... with its side file"
    kill -s "$sig" "$pid"
    wait "$pid"
    rc=$?
    pid=
    want=$((128 + num))
    is "$rc" "$want" "SIG$sig: the process ends by the signal (status $want)"
    [ ! -e "$IDX.tmp" ] && [ ! -e "$IDX.tmp-journal" ] && [ ! -e "$IDX.tmp-wal" ]
    ok $? "SIG$sig: no side file is left: $(ls "$T" | tr '\n' ' ')"
    [ ! -e "$IDX" ]
    ok $? "SIG$sig: and no index is installed half built"
    "$DRQA" --index "$IDX" --no-progress --json --index-only "$R" >"$T/out.json" 2>"$T/err"
    is "$?" 0 "SIG$sig: the next run builds the index"
    is "$(jget "$T/out.json" files.indexed)" "$(find "$R" -name '*.py' -o -name '*.md' | wc -l | tr -d ' ')" \
        "SIG$sig: ... whole"
done

# a signal the program was started with ignored stays ignored (nohup)
IDX="$T/index-nohup.sqlite"
rm -f "$T/hold"
DRQA_TEST_HOLD="$T/hold" nohup "$DRQA_HOOKS" --index "$IDX" --no-progress --quiet --index-only "$R" \
    >/dev/null 2>"$T/err" &
pid=$!
wait_file "$T/hold"
kill -s HUP "$pid"
rm -f "$T/hold"
wait "$pid"
is "$?" 0 "under nohup, SIGHUP is still ignored and the build completes"
pid=

echo "1..$n"
exit $fail
