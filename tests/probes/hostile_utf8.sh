#!/bin/sh
# probe hostile_utf8: invalid UTF-8 in a file and in its name: indexed, and every output stays valid JSON
. "${top_srcdir:-.}/tests/probe_lib.sh"

printf "def caf\351():\n    return \"\377\376\"\n" >"$R/bad_utf8.py"
printf "x = 1\n" >"$R/$(printf "name\377.py")"
"$DRQA" --index "$IDX" --no-progress --json --index-only "$R" >"$T/o.json" 2>"$T/err" || failed "index: $(cat "$T/err")"
"$PYTHON3" -c "import json, sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))" "$T/o.json" || failed "--index-only --json is not valid UTF-8 JSON"
drqa --quiet --json --ask "What does caf do?" >"$T/a.json"
[ "$rc" = 0 ] || failed "--ask: status $rc"
"$PYTHON3" -c "import json, sys; json.load(open(sys.argv[1], encoding=\"utf-8\"))" "$T/a.json" || failed "--ask --json is not valid UTF-8 JSON"
held
