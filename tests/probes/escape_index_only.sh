#!/bin/sh
# probe escape_index_only: a skipped file whose name holds escape sequences is listed by --index-only without them raw
. "${top_srcdir:-.}/tests/probe_lib.sh"

head -c 2000 /dev/urandom >"$R/$(printf "\033[31mred\033]0;x\007.py")"
"$DRQA" --index "$IDX" --no-progress --index-only "$R" >"$T/o.txt" 2>"$T/err" || failed "status: $(cat "$T/err")"
grep -q "red" "$T/o.txt" || failed "the skipped file is not listed"
no_raw_escapes "$T/o.txt" || failed "a raw escape in the report"
no_raw_escapes "$T/err" || failed "a raw escape on stderr"
held
