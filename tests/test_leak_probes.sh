#!/bin/sh
# test_leak_probes.sh: runs every tests/probes/leak_*.sh probe (what
# bench/probe.sh also runs) as one TAP test each: a probe prints
# "probe NAME: held" and exits 0 when its property held. Each is bounded
# (120 s); together they take seconds.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/tap.sh"
export top_srcdir DRQA PYTHON3
for p in "$top_srcdir"/tests/probes/leak_*.sh; do
    line=$(timeout 120 sh "$p" 2>&1 | tail -1)
    case "$line" in
    "probe "*": held"*) ok 0 "$(basename "$p"): $line" ;;
    *) ok 1 "$(basename "$p"): ${line:-no verdict (killed after 120 s?)}" ;;
    esac
done
echo "1..$n"
exit $fail
