#!/bin/sh
# probe hostile_nul: files holding NUL bytes are indexed or skipped with a reason, never a crash
. "${top_srcdir:-.}/tests/probe_lib.sh"

printf "def a():\n    return 1\n\0\0\0def b(): pass\n" >"$R/nul.py"
head -c 3000 /dev/urandom >"$R/blob.py"
"$DRQA" --index "$IDX" --no-progress --json --index-only "$R" >"$T/o.json" 2>"$T/err"
r=$?
[ "$r" = 0 ] || failed "status $r: $(cat "$T/err")"
"$PYTHON3" -c "import json, sys; json.load(open(sys.argv[1]))" "$T/o.json" || failed "the report is not JSON"
held
