#!/bin/sh
# probe hostile_nesting: 50,000-deep nesting in source files is indexed without a crash
. "${top_srcdir:-.}/tests/probe_lib.sh"

"$PYTHON3" -c "import sys
d = 50000
open(sys.argv[1], \"w\").write(\"x = \" + \"[\" * d + \"]\" * d + \"\n\")
open(sys.argv[2], \"w\").write(\"var x = \" + \"(\" * d + \"1\" + \")\" * d + \";\n\")" "$R/deep.py" "$R/deep.js"
"$DRQA" --index "$IDX" --no-progress --json --max-file-size 1000000 --index-only "$R" >"$T/o.json" 2>"$T/err"
r=$?
[ "$r" = 0 ] || failed "status $r: $(tail -c 300 "$T/err")"
drqa --quiet --ask "$Q" >/dev/null
[ "$rc" = 0 ] || failed "--ask after: status $rc: $(tail -c 300 "$T/err")"
held
