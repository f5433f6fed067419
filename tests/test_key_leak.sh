#!/bin/sh
# test_key_leak.sh: the API key never leaves the process, whole or in part,
# whatever the server or the model sends back. A loopback server plays three
# hostile servers (chosen by the first part of the API base's path):
#   /html401  a 401 HTML page that echoes the Authorization header with the
#             key starting near byte 180 (across the 200-byte excerpt an
#             error message keeps) and a copy cut short earlier in the page;
#   /garbage  a 200 whose body is not JSON and holds the key from byte 22
#             (across the 40-byte excerpt of a reply that is not JSON);
#   /gateway  a 200 {"error": ...} whose message ends with the key, which
#             falls across the 512-byte error message it is shown in;
# and tests/fake_llm.py plays a model whose replies (answer, reasoning,
# evaluation feedback) repeat the key. For each, neither the key nor any
# 8-byte or longer prefix of it is in stdout, stderr, the --log file or the
# transcripts.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
KEY=sk-proj-HTMLSECq7Zt4LmKp2VwX9rBn3YdE6fGhJ0aS5uT
export DRQA_API_KEY="$KEY"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
"$DRQA" --index "$T/idx.sqlite" --no-progress --index-only "$T/repo" >/dev/null 2>&1

bg_start "$T/srv.port" "$PYTHON3" "$top_srcdir/tests/hostile_server.py" "$T/srv.port"
sport=$port

# leaked FILE...: how many of the files hold the key or its first 8 bytes
leaked() {
    "$PYTHON3" - "$KEY" "$@" <<'PY'
import sys
key = sys.argv[1].encode()
bad = []
for f in sys.argv[2:]:
    try:
        t = open(f, "rb").read()
    except OSError:
        continue
    if key[:8] in t:
        bad.append(f.rsplit("/", 1)[-1])
print(" ".join(bad) if bad else "none")
PY
}

for mode in html401 garbage gateway; do
    "$DRQA" --index "$T/idx.sqlite" --no-progress --log "$T/$mode.log" --ask "Where is App defined?" --policy llm \
        --api-base "http://127.0.0.1:$sport/$mode/v1" --model fake-model --iterations 2 \
        --transcript-dir "$T/tr-$mode" "$T/repo" >"$T/$mode.out" 2>"$T/$mode.err"
    rc=$?
    # every reply bad: no model call succeeded, which ends the run with status 3
    # (a crash or a signal would be another)
    is "$rc" 3 "$mode: the run ends with status 3, no model call having succeeded"
    ok "$([ -s "$T/$mode.err" ] && [ -s "$T/$mode.log" ]; echo $?)" "$mode: stderr and the log were written"
    is "$(leaked "$T/$mode.out" "$T/$mode.err" "$T/$mode.log" "$T/tr-$mode"/*)" none \
        "$mode: no key prefix of 8 bytes or more in stdout, stderr, the log or the transcripts"
    "$DRQA" --index "$T/idx.sqlite" --no-progress --json --ask "Where is App defined?" --policy llm \
        --api-base "http://127.0.0.1:$sport/$mode/v1" --model fake-model --iterations 2 "$T/repo" \
        >"$T/$mode.json" 2>"$T/$mode.jerr"
    is "$(leaked "$T/$mode.json" "$T/$mode.jerr")" none "$mode: --json: no key prefix in the JSON or on stderr"
done
grep -q '\[redact' "$T/html401.err"
ok $? "html401: stderr shows where the key was, redacted"

# a model whose replies repeat the key: answer, reasoning, feedback
cat >"$T/script.json" <<EOF
{"rules": [
 {"match": "You are the Perception Agent", "reasoning": "the key is $KEY",
  "content": "{\"summary\": \"key $KEY\", \"candidates\": [\"App.dispatch_request\"]}"},
 {"match": "You are the Planning Agent", "times": 1,
  "content": "{\"action\": \"FindFunction\", \"args\": {\"function_name\": \"dispatch_request\"}, \"thought\": \"$KEY\"}"},
 {"match": "You are the Planning Agent",
  "content": "{\"action\": \"Finish\", \"args\": {\"answer\": \"see app.py $KEY\", \"finish_reason\": \"found\"}}"},
 {"match": "You are the Evidence Filter",
  "content": "{\"spans\": [{\"path\": \"tinyweb/app.py\", \"start_line\": 46, \"end_line\": 51}]}"},
 {"match": "You are the Evaluation Agent", "content": "{\"value\": 80, \"feedback\": \"read it, key $KEY\"}"},
 {"match": "You are the Answer Agent",
  "content": "{\"answer\": \"The key is $KEY and \`App.dispatch_request\` (\`tinyweb/app.py:46-51\`) calls the view; cut: ${KEY%????????????????????}\"}"}
]}
EOF
fake_start "$T/script.json" "$T/fake.jsonl"
for fmt in md json; do
    flag=; [ $fmt = json ] && flag=--json
    "$DRQA" --index "$T/idx.sqlite" --no-progress --log "$T/reply-$fmt.log" $flag --ask "Where does App.dispatch_request call the view?" \
        --policy llm --api-base "http://127.0.0.1:$port/v1" --model fake-model --iterations 4 \
        --transcript-dir "$T/tr-reply-$fmt" "$T/repo" >"$T/reply.$fmt" 2>"$T/reply-$fmt.err"
    is "$?" 0 "a model repeating the key ($fmt): the question is answered"
    grep -q 'dispatch_request' "$T/reply.$fmt"
    ok $? "($fmt) the answer is there"
    is "$(leaked "$T/reply.$fmt" "$T/reply-$fmt.err" "$T/reply-$fmt.log" "$T/tr-reply-$fmt"/*)" none \
        "($fmt) no key prefix of 8 bytes or more in the answer, stderr, the log or the transcripts"
done
ls "$T/tr-reply-md"/*.json >/dev/null 2>&1
ok $? "transcripts were written (and searched)"
grep -c "$KEY" "$T/fake.jsonl" >"$T/sent"
ok "$([ "$(cat "$T/sent")" -gt 0 ] && echo 0 || echo 1)" "the key was sent to the model (so the checks mean something)"
fake_stop

echo "1..$n"
exit $fail
