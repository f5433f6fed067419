#!/bin/sh
# probe: a git submodule's files, left out of the index, are said to be:
# --index-only's summary counts the submodule, --explain of a file in it
# names it.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_submodule_said
command -v git >/dev/null 2>&1 || { echo "probe leak_submodule_said: held (git not installed: nothing to leave out)"; exit 0; }
G="git -c user.email=t@example.com -c user.name=t -c protocol.file.allow=always -c init.defaultBranch=main"
mkdir -p "$T/inner" "$T/outer"
printf 'def inner_fn():\n    return 1\n' >"$T/inner/in.py"
printf 'def outer_fn():\n    return 2\n' >"$T/outer/out.py"
(cd "$T/inner" && $G init -q && $G add . && $G commit -qm i) >/dev/null 2>&1
(cd "$T/outer" && $G init -q && $G submodule add -q "$T/inner" sub && $G add . && $G commit -qm o) >/dev/null 2>&1
[ -f "$T/outer/sub/in.py" ] || probe_done 1 "could not make the submodule"
"$DRQA" --index "$T/idx" --no-progress --index-only "$T/outer" >"$T/o" 2>&1 || probe_done 1 "--index-only failed"
grep -q 'git submodule' "$T/o" || probe_done 1 "the summary does not mention the submodule"
"$DRQA" --no-progress --index-only --explain sub/in.py "$T/outer" >"$T/x" 2>&1
grep -q "git submodule 'sub'" "$T/x" || probe_done 1 "--explain: $(tail -1 "$T/x")"
probe_done 0
