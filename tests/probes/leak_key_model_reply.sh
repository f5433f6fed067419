#!/bin/sh
# probe: a model whose replies (answer, reasoning, feedback, a thought) repeat
# the key, whole and cut short: the key reaches no answer, stderr, log or
# transcript, and the question is still answered.
. "$(dirname "$0")/leak_common.inc"
probe_init leak_key_model_reply
KEY=sk-proj-REPLYq7Zt4LmKp2VwX9rBn3YdE6fGhJ0aS5uT
export DRQA_API_KEY="$KEY"
cat >"$T/script.json" <<JSON
{"rules": [
 {"match": "You are the Perception Agent", "reasoning": "the key is $KEY",
  "content": "{\"summary\": \"key $KEY\", \"candidates\": [\"App.dispatch_request\"]}"},
 {"match": "You are the Planning Agent", "times": 1,
  "content": "{\"action\": \"FindFunction\", \"args\": {\"function_name\": \"dispatch_request\"}}"},
 {"match": "You are the Planning Agent",
  "content": "{\"action\": \"Finish\", \"args\": {\"answer\": \"see app.py $KEY\", \"finish_reason\": \"found\"}}"},
 {"match": "You are the Evidence Filter",
  "content": "{\"spans\": [{\"path\": \"tinyweb/app.py\", \"start_line\": 46, \"end_line\": 51}]}"},
 {"match": "You are the Evaluation Agent", "content": "{\"value\": 80, \"feedback\": \"key $KEY\"}"},
 {"match": "You are the Answer Agent",
  "content": "{\"answer\": \"The key is $KEY; \`App.dispatch_request\` (\`tinyweb/app.py:46-51\`); cut: ${KEY%????????????????????}\"}"}
]}
JSON
fake_model "$T/script.json"
[ -n "$port" ] || probe_done 1 "the fake model did not start"
"$DRQA" --no-progress --log "$T/run.log" --ask "Where does App.dispatch_request call the view?" --policy llm \
    --api-base "http://127.0.0.1:$port/v1" --model fake-model --iterations 4 --transcript-dir "$T/tr" "$R" \
    >"$T/out" 2>"$T/err" || probe_done 1 "the question was not answered (exit $?)"
grep -q dispatch_request "$T/out" || probe_done 1 "no answer on stdout"
found=$(key_in "$T/out" "$T/err" "$T/run.log" "$T/tr"/*)
[ -z "$found" ] || probe_done 1 "a key prefix in: $found"
probe_done 0
