#!/bin/sh
# test_answer_cut.sh: a model's answer that stopped at its output limit
# (finish_reason "length"; Anthropic's stop_reason "max_tokens") is not
# presented as complete: the answer says it is cut short, streamed or not.
# drqa-tui --ask on a copy of the pyrepo fixture against the scripted fake
# model server, whose Answer Agent reply ends mid-sentence at the limit.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"

cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
# script FINISH: the roles' replies, the answer's with finish reason FINISH
script() {
    cat <<EOS
{"rules": [
 {"match": "You are the Perception Agent", "content": "{\"summary\": \"start\", \"candidates\": [\"App.dispatch_request\"]}"},
 {"match": "You are the Planning Agent", "times": 1,
  "content": "{\"action\": \"FindFunction\", \"args\": {\"function_name\": \"dispatch_request\"}}"},
 {"match": "You are the Planning Agent",
  "content": "{\"action\": \"Finish\", \"args\": {\"answer\": \"see app.py\", \"finish_reason\": \"found\"}}"},
 {"match": "You are the Evidence Filter",
  "content": "{\"spans\": [{\"path\": \"tinyweb/app.py\", \"start_line\": 46, \"end_line\": 51}]}"},
 {"match": "You are the Evaluation Agent", "content": "{\"value\": 80, \"feedback\": \"read it\"}"},
 {"match": "You are the Answer Agent", "finish": "$1",
  "content": "\`App.dispatch_request\` (\`tinyweb/app.py:46-51\`) looks the rule up and then calls the vi"}
]}
EOS
}
q="Where does App.dispatch_request call the view function?"
for finish in length stop; do
    script "$finish" >"$T/$finish.json"
    fake_start "$T/$finish.json" "$T/$finish.jsonl" || exit 1
    for stream in "" --no-stream; do
        "$DRQA" --ask "$q" --policy llm --api-base "http://127.0.0.1:$port/v1" --model fake-model $stream \
            --index "$T/index.sqlite" --no-progress "$T/repo" >"$T/out" 2>"$T/err"
        rc=$?
        sed -n '1,3p' "$T/out" | sed 's/^/# /'
        if [ "$finish" = length ]; then
            [ $rc -eq 0 ] && grep -q 'The model stopped at its output limit: this answer is cut short' "$T/out"
            ok $? "finish_reason length${stream:+ ($stream)}: the answer says it is cut short"
        else
            [ $rc -eq 0 ] && ! grep -q 'cut short' "$T/out" && grep -q 'looks the rule up' "$T/out"
            ok $? "finish_reason stop${stream:+ ($stream)}: the same text is the whole answer, said as such"
        fi
    done
    fake_stop
done
echo "1..$n"
exit $fail
