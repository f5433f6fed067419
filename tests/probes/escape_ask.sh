#!/bin/sh
# probe escape_ask: escape sequences and C1 controls in files never reach the terminal raw from --ask (Markdown and --json)
. "${top_srcdir:-.}/tests/probe_lib.sh"

printf "def flush_session():\n    \"\"\"Flush the session \033]0;pwned\007 \033[2J and \302\233 31m now.\"\"\"\n    return 1\n" >"$R/tinyweb/esc.py"
probe_index
drqa --quiet --ask "Where is the session flushed? flush_session" >"$T/a.md"
[ "$rc" = 0 ] || failed "status $rc"
no_raw_escapes "$T/a.md" || failed "a raw escape in the Markdown answer"
drqa --quiet --json --ask "Where is the session flushed? flush_session" >"$T/a.json"
no_raw_escapes "$T/a.json" || failed "a raw escape in the JSON answer"
held
