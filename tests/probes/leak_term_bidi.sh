#!/bin/sh
# probe: bidirectional controls (U+202E, U+202C, U+2066-U+2069, U+200F,
# U+061C) in file text and file names reach the terminal escaped from
# --index-only (skipped names), --ask (Markdown and --json) and --action,
# never raw.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_term_bidi
RLO=$(printf '\342\200\256')
printf 'def reorder_me():\n    """Says \342\200\256 evil \342\200\254 and \342\201\246 iso \342\201\251 \342\200\217 \330\234"""\n    return 1\n' \
    >"$R/bidi.py"
printf '\000\001binary' >"$R/gnp.${RLO}exe.py"
"$DRQA" --index "$T/idx" --no-progress --index-only "$R" >"$T/1" 2>&1
"$DRQA" --index "$T/idx" --no-progress --iterations 3 --ask "What does reorder_me say?" "$R" >"$T/2" 2>&1
"$DRQA" --index "$T/idx" --no-progress --iterations 3 --json --ask "What does reorder_me say?" "$R" >"$T/3" 2>&1
"$DRQA" --index "$T/idx" --no-progress --action ViewCode '{"code_span_list":["bidi.py"]}' "$R" >"$T/4" 2>&1
"$DRQA" --index "$T/idx" --no-progress --action ListFiles '{}' "$R" >"$T/5" 2>&1
grep -q 'reorder_me' "$T/2" || probe_done 1 "--ask did not answer"
bad=$(raw_controls "$T/1" "$T/2" "$T/3" "$T/4" "$T/5")
[ "$bad" -eq 0 ] || probe_done 1 "$bad raw controls on the terminal"
probe_done 0
