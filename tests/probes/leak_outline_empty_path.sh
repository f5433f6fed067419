#!/bin/sh
# probe: Outline's path '' is the whole repository, as the action's
# description (and its refusal of '{}') says.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_outline_empty_path
"$DRQA" --index "$T/idx" --no-progress --action Outline '{}' "$R" >/dev/null 2>"$T/e1"
grep -q "'' for the whole repository" "$T/e1" || probe_done 1 "the refusal of {} does not mention ''"
"$DRQA" --index "$T/idx" --no-progress --action Outline '{"path": ""}' "$R" >"$T/o" 2>"$T/e2" ||
    probe_done 1 "{\"path\": \"\"} refused: $(head -c 120 "$T/e2")"
n=$("$PYTHON3" -c "import json,sys; print(len({i['path'] for i in json.load(open(sys.argv[1]))['items']}))" "$T/o")
[ "${n:-0}" -gt 3 ] || probe_done 1 "only $n files outlined"
probe_done 0
