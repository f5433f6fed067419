# tap.sh: TAP helpers for the shell tests, sourced after top_srcdir is set.
#   ok STATUS NAME      a test line: passes when STATUS is 0
#   is GOT WANT NAME    passes when GOT = WANT (both shown when not)
#   like GOT PART NAME  passes when GOT holds PART
#   check NAME CMD...   runs CMD; passes when it exits 0
#   skip REASON         a skipped test line
#   jget FILE a.b.c     one value of a JSON document (lists indexed by number)
# A failed test sets fail=1 and calls tap_fail_hook when the script defines
# one (to show what it saw). The script ends with
#   echo "1..$n"; exit $fail
n=0
fail=0
tap_failed() {
    fail=1
    if command -v tap_fail_hook >/dev/null 2>&1; then tap_fail_hook; fi
    return 0
}
ok() {
    n=$((n + 1))
    if [ "$1" -eq 0 ] 2>/dev/null; then echo "ok $n - $2"; else echo "not ok $n - $2"; tap_failed; fi
}
is() {
    n=$((n + 1))
    if [ "$1" = "$2" ]; then echo "ok $n - $3"; else
        echo "not ok $n - $3"; printf '#   got: %s\n#  want: %s\n' "$1" "$2"; tap_failed
    fi
}
like() {
    n=$((n + 1))
    case "$1" in
    *"$2"*) echo "ok $n - $3" ;;
    *) echo "not ok $n - $3"; printf '#   got: %s\n#  want: a text holding %s\n' "$1" "$2"; tap_failed ;;
    esac
}
check() {
    desc=$1
    shift
    if "$@"; then ok 0 "$desc"; else ok 1 "$desc"; fi
}
skip() { n=$((n + 1)); echo "ok $n # SKIP $1"; }
jget() {
    ${PYTHON3:-python3} -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[int(k)] if isinstance(d, list) else d[k]
print(json.dumps(d) if isinstance(d, (bool, list, dict)) else d)' "$1" "$2"
}
