#!/bin/sh
# probe escape_action: --action output quotes file text with escape sequences neutralised
. "${top_srcdir:-.}/tests/probe_lib.sh"

printf "def evil():\n    return \"\033[2J\033]52;c;Zm9v\007\302\233\"\n" >"$R/tinyweb/evil.py"
probe_index
drqa --action ViewCode "{\"code_span_list\": [\"tinyweb/evil.py:1-3\"]}" >"$T/o.json"
[ "$rc" = 0 ] || failed "status $rc: $(cat "$T/err")"
no_raw_escapes "$T/o.json" || failed "a raw escape in the action output"
held
