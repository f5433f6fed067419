#!/bin/sh
# probe: ESC sequences (clear screen, OSC 52 clipboard write), BEL, DEL and
# the C1 CSI in file text and a file name never reach the terminal raw from
# --index-only, --ask, --ask --json, --action or an error message.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_term_escapes
printf 'def escapist():\n    """Clears \033[2J the \033]52;c;cHduZWQ=\007 screen \177 and \302\2331m more."""\n    return "\033[31mred\033[0m"\n' \
    >"$R/escapes.py"
printf '\000bin' >"$R/esc$(printf '\033')[2Jname.py"
"$DRQA" --index "$T/idx" --no-progress --index-only "$R" >"$T/1" 2>&1
"$DRQA" --index "$T/idx" --no-progress --iterations 3 --ask "What does escapist return?" "$R" >"$T/2" 2>&1
"$DRQA" --index "$T/idx" --no-progress --iterations 3 --json --ask "What does escapist return?" "$R" >"$T/3" 2>&1
"$DRQA" --index "$T/idx" --no-progress --action ViewCode '{"code_span_list":["escapes.py"]}' "$R" >"$T/4" 2>&1
"$DRQA" --index "$T/idx" --no-progress --action ViewCode "{\"code_span_list\":[\"x\u001b[2Jno.py\"]}" "$R" >"$T/5" 2>&1
grep -q 'escapist' "$T/2" || probe_done 1 "--ask did not answer"
bad=$(raw_controls "$T/1" "$T/2" "$T/3" "$T/4" "$T/5")
[ "$bad" -eq 0 ] || probe_done 1 "$bad raw controls on the terminal"
probe_done 0
