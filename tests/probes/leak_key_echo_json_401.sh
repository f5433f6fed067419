#!/bin/sh
# probe: a 401 whose JSON error message repeats the credential (as OpenAI's
# "Incorrect API key provided: ..." does): the key is in no output, log or
# transcript, nor in the index or any file under HOME.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_key_echo_json_401
mkdir -p "$T/state"
KEY=sk-proj-ECHOq7Zt4LmKp2VwX9rBn3YdE6fGhJ0aS5uT
export DRQA_API_KEY="$KEY"
printf '{"default": {"fault": "echo_key"}}\n' >"$T/script.json"
fake_model "$T/script.json"
[ -n "$port" ] || probe_done 1 "the fake model did not start"
"$DRQA" --index "$T/state/idx.sqlite" --no-progress --log "$T/state/run.log" --ask "Where is App defined?" \
    --policy llm --api-base "http://127.0.0.1:$port/v1" --model fake-model --iterations 2 \
    --transcript-dir "$T/state/tr" "$R" >"$T/state/out" 2>"$T/state/err"
grep -q "$KEY" "$T/fake.jsonl" || probe_done 1 "the key was never sent, so nothing was tried"
found=$(cd "$T" && grep -rl -- "$(printf %.8s "$KEY")" state home cache 2>/dev/null | tr '\n' ' ')
[ -z "$found" ] || probe_done 1 "a key prefix in: $found"
probe_done 0
