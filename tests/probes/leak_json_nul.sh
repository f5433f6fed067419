#!/bin/sh
# probe: a NUL (\u0000) inside a JSON string argument of --action is refused
# (exit 2), never cut at the NUL and run on what precedes it.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_json_nul
"$DRQA" --index "$T/idx" --no-progress --action ViewCode '{"code_span_list": ["tinyweb/app.py\u0000../../etc/passwd"]}' \
    "$R" >"$T/o" 2>"$T/e"
rc=$?
[ $rc -eq 2 ] || probe_done 1 "exit $rc, not 2"
grep -q NUL "$T/e" || probe_done 1 "the message does not say NUL"
probe_done 0
