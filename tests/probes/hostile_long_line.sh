#!/bin/sh
# probe hostile_long_line: a 20 MB single-line file is skipped as too large, named with its size; the rest is indexed
. "${top_srcdir:-.}/tests/probe_lib.sh"

"$PYTHON3" -c "import sys; open(sys.argv[1], \"w\").write(\"x = \\\"\" + \"a\" * (20 << 20) + \"\\\"\n\")" "$R/long.py"
"$DRQA" --index "$IDX" --no-progress --json --index-only "$R" >"$T/o.json" 2>"$T/err" || failed "status: $(cat "$T/err")"
"$PYTHON3" -c "import json, sys
d = json.load(open(sys.argv[1]))
s = [x for x in d[\"skipped\"] if x[\"path\"] == \"long.py\"]
sys.exit(0 if s and \"too large\" in s[0][\"reason\"] and d[\"files\"][\"indexed\"] > 5 else 1)" "$T/o.json" || failed "long.py not skipped as too large"
if [ "$PROBE_SCALE" -gt 1 ]; then
    rm -f "$IDX"*
    "$DRQA" --index "$IDX" --no-progress --quiet --max-file-size 30000000 --index-only "$R" >/dev/null 2>"$T/err" || failed "with --max-file-size 30000000: $(cat "$T/err")"
fi
held
