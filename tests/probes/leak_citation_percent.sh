#!/bin/sh
# probe: a model's answer citing a percent-encoded path outside the
# repository (%2e%2e/etc/passwd:1-3) has the citation removed whole: no
# '%2e%' fragment is left in the answer.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_citation_percent
dispatch_script "$T/script.json" \
    '`App.dispatch_request` (`tinyweb/app.py:46-51`) calls the view; compare `%2e%2e/etc/passwd:1-3` and %2e%2e/%2e%2e/etc/shadow:2.'
fake_model "$T/script.json"
[ -n "$port" ] || probe_done 1 "the fake model did not start"
"$DRQA" --no-progress --ask "Where does App.dispatch_request call the view?" --policy llm \
    --api-base "http://127.0.0.1:$port/v1" --model fake-model --iterations 4 "$R" >"$T/out" 2>"$T/err" ||
    probe_done 1 "the question was not answered"
grep -q 'dispatch_request' "$T/out" || probe_done 1 "no answer"
if grep -q '%2e\|etc/passwd\|etc/shadow' "$T/out"; then probe_done 1 "$(grep -o '.\{0,20\}%2e.\{0,20\}' "$T/out" | head -1)"; fi
probe_done 0
