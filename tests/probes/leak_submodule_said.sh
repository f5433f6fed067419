#!/bin/sh
# probe: a git submodule's files, left out of the index, are said to be:
# --index-only's summary counts the submodule, --explain of a file in it
# names it.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_submodule_said
command -v git >/dev/null 2>&1 || { echo "probe leak_submodule_said: held (git not installed: nothing to leave out)"; exit 0; }
submodule_repo "$T/outer" "$T/inner"
[ -f "$T/outer/sub/in.py" ] || probe_done 1 "could not make the submodule"
"$DRQA" --index "$T/idx" --no-progress --index-only "$T/outer" >"$T/o" 2>&1 || probe_done 1 "--index-only failed"
grep -q 'git submodule' "$T/o" || probe_done 1 "the summary does not mention the submodule"
"$DRQA" --no-progress --index-only --explain sub/in.py "$T/outer" >"$T/x" 2>&1
grep -q "git submodule 'sub'" "$T/x" || probe_done 1 "--explain: $(tail -1 "$T/x")"
probe_done 0
