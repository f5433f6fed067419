# tap.sh: TAP helpers for the shell tests, sourced after top_srcdir is set.
# ok STATUS NAME (0 passes), is GOT WANT NAME, like GOT PART NAME (GOT holds
# PART), jget FILE a.b.c (one value of
# a JSON document; lists indexed by number). The script ends with
#   echo "1..$n"; exit $fail
n=0
fail=0
ok() { n=$((n + 1)); if [ "$1" -eq 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fail=1; fi; }
is() {
    n=$((n + 1))
    if [ "$1" = "$2" ]; then echo "ok $n - $3"; else
        echo "not ok $n - $3"; printf '#   got: %s\n#  want: %s\n' "$1" "$2"; fail=1
    fi
}
like() {
    n=$((n + 1))
    case "$1" in
    *"$2"*) echo "ok $n - $3" ;;
    *) echo "not ok $n - $3"; printf '#   got: %s\n#  want: a text holding %s\n' "$1" "$2"; fail=1 ;;
    esac
}
jget() {
    ${PYTHON3:-python3} -c 'import json, sys
d = json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."):
    d = d[int(k)] if isinstance(d, list) else d[k]
print(json.dumps(d) if isinstance(d, (bool, list, dict)) else d)' "$1" "$2"
}
