#!/bin/sh
# test_probes.sh: every probe under tests/probes/ once (PROBE_SCALE=1), one
# TAP line each; a probe that cannot run here (no root for a tmpfs) is a
# skip. bench/probe.sh runs the same probes with longer loops, and more.
: "${top_srcdir:=.}" "${top_builddir:=.}" "${DRQA:=$top_builddir/drqa-tui}" "${PYTHON3:=python3}"
export top_srcdir top_builddir DRQA PYTHON3
PROBE_SCALE=1
export PROBE_SCALE
# lib.sh: the private HOME, and PYTHON3 the interpreter itself, which the
# probes inherit (each would otherwise run a version manager's shim to find it)
. "$top_srcdir/tests/lib.sh"
for p in "$top_srcdir"/tests/probes/*.sh; do
    name=$(basename "$p" .sh)
    line=$(timeout 600 sh "$p" 2>&1 | tail -n 1)
    rc=$?
    case $line in
    "probe $name: held") ok 0 "$line" ;;
    "probe $name: skipped"*) skip "$line" ;;
    *) ok 1 "probe $name: ${line:-no verdict}" ;;
    esac
done
echo "1..$n"
exit $fail
