#!/bin/sh
# test_llm_ledger.sh: what a user with a model configured sees of its cost
# and of its models. drqa-tui --ask on a copy of the pyrepo fixture against
# the scripted fake model server: per-role models (model.ROLE in the config
# file, --role-model on the command line) reach the requests' "model" field;
# the per-role ledger comes in one line on stderr and under "usage" in
# --json; --budget-usd stops the search with a message (and warns when a
# model has no price); --show-profile prints the resolved profile with the
# config file's overrides.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"

cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
cat >"$T/script.json" <<'EOF'
{"rules": [
 {"match": "You are the Perception Agent", "content": "{\"summary\": \"start\", \"candidates\": [\"App.dispatch_request\"]}",
  "usage": {"input": 1000, "output": 20, "cached": 600}},
 {"match": "You are the Planning Agent", "times": 1,
  "content": "{\"action\": \"FindFunction\", \"args\": {\"function_name\": \"dispatch_request\"}}",
  "usage": {"input": 1000, "output": 20, "cached": 600}},
 {"match": "You are the Planning Agent",
  "content": "{\"action\": \"Finish\", \"args\": {\"answer\": \"see app.py\", \"finish_reason\": \"found\"}}",
  "usage": {"input": 1000, "output": 20}},
 {"match": "You are the Evidence Filter",
  "content": "{\"spans\": [{\"path\": \"tinyweb/app.py\", \"start_line\": 46, \"end_line\": 51}]}",
  "usage": {"input": 1000, "output": 20}},
 {"match": "You are the Evaluation Agent", "content": "{\"value\": 80, \"feedback\": \"read it\"}",
  "usage": {"input": 1000, "output": 20}},
 {"match": "You are the Answer Agent",
  "content": "{\"answer\": \"`App.dispatch_request` (`tinyweb/app.py:46-51`) calls the view function at `tinyweb/app.py:51`.\"}",
  "usage": {"input": 1000, "output": 20}}
]}
EOF
start_fake() { fake_start "$T/script.json" "$T/$1.jsonl"; }   # start_fake LOGNAME
stop_fake() { fake_stop; }
q="Where does App.dispatch_request call the view function?"

# the model each role's requests named, from the fake's log: "role=model ..." sorted
models_by_role() {
    $PYTHON3 -c 'import json, sys
roles = {"Perception Agent": "perception", "Planning Agent": "planning", "Evidence Filter": "filter",
         "Evaluation Agent": "evaluation", "Answer Agent": "answer"}
seen = set()
for line in open(sys.argv[1]):
    r = json.loads(line)
    for k, v in roles.items():
        if "You are the " + k in r["prompt"]:
            seen.add(v + "=" + json.loads(r["body"])["model"])
print(" ".join(sorted(seen)))' "$1"
}

cat >"$T/prices.conf" <<'EOF'
price.fake-model.input = 2
price.fake-model.output = 8
price.cheap-answer.input = 1
price.cheap-answer.output = 1
price.cheap-eval.input = 1
price.cheap-eval.output = 1
model.evaluation = cheap-eval
EOF

# 1. per-role models and the ledger
start_fake roles
"$DRQA" --ask "$q" --policy llm --config "$T/prices.conf" --api-base "http://127.0.0.1:$port/v1" --model fake-model \
    --role-model answer=cheap-answer --iterations 4 --json --transcript-dir "$T/tr" "$T/repo" >"$T/roles.json" \
    2>"$T/roles.err"
rc=$?
stop_fake
is "$rc" 0 "role models: --ask succeeds"
is "$(models_by_role "$T/roles.jsonl")" \
    "answer=cheap-answer evaluation=cheap-eval filter=fake-model perception=fake-model planning=fake-model" \
    "role models: --role-model and model.ROLE reach each role's requests, the others use --model (the filter's: a Finish refused for nothing read took the offline plan, whose result was filtered)"
is "$(grep -c '^drqa-tui: tokens ' "$T/roles.err")" 1 "ledger: one line on stderr"
line=$(grep '^drqa-tui: tokens ' "$T/roles.err")
planning_calls=$(jget "$T/roles.json" usage.by_tag.planning.calls)
echo "$line" | grep -Eq "planning $planning_calls calls [0-9.]+k in \(600 cached\) [0-9]+ out \\\$0\.[0-9]{4}; "
ok $? "ledger: the planning role's calls (as in --json), tokens, the cached tokens the server reported, cost: $line"
echo "$line" | grep -Eq '; total [0-9]+ calls .* \$0\.[0-9]+$'
ok $? "ledger: ends with the total and its cost"
is "$(jget "$T/roles.json" usage.by_tag.planning.cached_input_tokens)" 600 "ledger: --json carries the per-role usage"
is "$(jget "$T/roles.json" usage.by_tag.answer.calls)" 1 "ledger: --json: one answer call"

tj=$(ls "$T"/tr/*.json 2>/dev/null | head -1)
is "$(jget "$tj" config.usage.by_tag.planning.calls)" "$planning_calls" \
    "ledger: the JSON transcript carries it with the run's settings"
grep -q "^Model calls: perception .*planning $planning_calls calls .*total .*\\\$0\.[0-9]*\.\$" "${tj%.json}.md"
ok $? "ledger: the Markdown transcript ends with it"

# 2. --quiet: no ledger line
start_fake quiet
"$DRQA" --ask "$q" --policy llm --quiet --config "$T/prices.conf" --api-base "http://127.0.0.1:$port/v1" \
    --model fake-model --iterations 4 "$T/repo" >/dev/null 2>"$T/quiet.err"
stop_fake
is "$(grep -c 'tokens ' "$T/quiet.err")" 0 "ledger: --quiet prints no ledger"

# 3. --budget-usd stops the search: every call costs about $2 at these prices
cat >"$T/dear.conf" <<'EOF'
price.fake-model.input = 2000
price.fake-model.output = 8000
EOF
start_fake budget
"$DRQA" --ask "$q" --policy llm --config "$T/dear.conf" --api-base "http://127.0.0.1:$port/v1" --model fake-model \
    --iterations 4 --budget-usd 1 --json "$T/repo" >"$T/budget.json" 2>"$T/budget.err"
rc=$?
stop_fake
is "$rc" 0 "--budget-usd: the question is still answered"
is "$(jget "$T/budget.json" iterations)" 1 "--budget-usd: the search stopped after the first iteration"
grep -q 'stopped at the cost budget of \$1 (--budget-usd)' "$T/budget.err"
ok $? "--budget-usd: a message says why it stopped"
start_fake nobudget
"$DRQA" --ask "$q" --policy llm --config "$T/dear.conf" --api-base "http://127.0.0.1:$port/v1" --model fake-model \
    --iterations 4 --json "$T/repo" >"$T/nobudget.json" 2>/dev/null
stop_fake
nob=$(jget "$T/nobudget.json" iterations)
ok "$([ "$nob" -gt 1 ] && echo 0 || echo 1)" "--budget-usd: without it the same search runs on ($nob iterations)"

# 4. an unpriced model: the budget cannot be enforced, said once
start_fake unpriced
"$DRQA" --ask "$q" --policy llm --api-base "http://127.0.0.1:$port/v1" --model fake-model \
    --iterations 2 --budget-usd 1 "$T/repo" >/dev/null 2>"$T/unpriced.err"
stop_fake
grep -q "budget-usd 1 cannot be enforced for model 'fake-model': it has no price" "$T/unpriced.err"
ok $? "--budget-usd with an unpriced model: a warning says it cannot be enforced"

# 5. --show-profile: the table's row with the config file's overrides
cat >"$T/prof.conf" <<'EOF'
model = o4-mini
profile.o4-*.max_output = 20000
profile.o4-*.reasoning_effort = low
model.filter = gpt-4.1-mini
EOF
"$DRQA" --show-profile --config "$T/prof.conf" >"$T/prof.out" 2>"$T/prof.err"
is "$?" 0 "--show-profile: exit 0"
for want in "model = o4-mini" "token_param = max_completion_tokens" "temperature = default" "max_output = 20000" \
    "reasoning_effort = low" "schema = json_schema" "price_input = 1.1" "# role filter" "model = gpt-4.1-mini"; do
    grep -qx "$want" "$T/prof.out"
    ok $? "--show-profile: '$want'"
done
"$DRQA" --show-profile --model claude-sonnet-4-5 --provider anthropic >"$T/prof2.out" 2>&1
grep -qx "schema = tool" "$T/prof2.out"
ok $? "--show-profile: Anthropic models use tool use for structured output"
# families whose thinking counts against the reply limit get room for it
for m in "gemini-2.5-pro 16384" "google/gemini-2.5-flash 16384" "magistral-medium-latest 16384" "gpt-oss:20b 16384" \
    "openai/gpt-oss-120b 16384"; do
    set -- $m
    "$DRQA" --show-profile --model "$1" --api-base http://127.0.0.1:9/v1 >"$T/prof3.out" 2>&1
    grep -qx "max_output = $2" "$T/prof3.out"
    ok $? "--show-profile: $1 sends a reply limit of $2 by default ($(grep max_output "$T/prof3.out"))"
done
# gpt-oss: JSON asked for in the text (servers' structured output broke on its harmony format)
"$DRQA" --show-profile --model gpt-oss:20b --api-base http://127.0.0.1:9/v1 >"$T/prof4.out" 2>&1
grep -qx "schema = none" "$T/prof4.out" && grep -qx "thinking = field" "$T/prof4.out" &&
    grep -q "^reasoning_effort = default\$" "$T/prof4.out"
ok $? "--show-profile: gpt-oss sends no response_format, reads its reasoning from a field, may take reasoning_effort"
printf 'profile.o4-*.max_output = lots\n' >"$T/bad.conf"
"$DRQA" --show-profile --model o4-mini --config "$T/bad.conf" >/dev/null 2>"$T/bad.err"
is "$?" 2 "--show-profile: a bad profile value is a usage error"
grep -q "bad.conf:1: profile field max_output takes a whole number" "$T/bad.err"
ok $? "--show-profile: the error names the file, line, field and what it takes"

echo "1..$n"
exit $fail
