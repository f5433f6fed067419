# stream_fixture.sh: the scripted searches of the streamed-answer tests and
# bench (sourced after top_srcdir and PYTHON3 are set, with tests/fake_llm.sh).
# One fake_llm.py server answers every case; a case is told apart by a tag
# in its question.
#   stream_script FILE CASE DELAY_MS ANSWER [ANSWER...]
#       adds to the script FILE (made when missing) the search of case CASE:
#       it reads tinyweb/app.py:46-51 of the pyrepo fixture and finishes;
#       the answer role replies ANSWER (plain Markdown), each token DELAY_MS
#       after the one before when streamed; with several answers the first
#       ones are given once each, in order, and the last from then on (a
#       re-ask gets the next).
#   stream_question CASE   prints the question of case CASE
stream_question() {
    printf 'Where does App.dispatch_request call the view function? (%s)\n' "$1"
}
stream_script() {
    "${PYTHON3:-python3}" - "$@" <<'PY'
import json, os, sys
out, case, delay, answers = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
tag = "(%s)" % case
if os.path.exists(out):
    rules = json.load(open(out))["rules"]
else:
    rules = [
        {"match": "You are the Perception Agent",
         "content": json.dumps({"summary": "start", "candidates": ["App.dispatch_request"]})},
        {"match": "You are the Planning Agent",
         "content": json.dumps({"action": "Finish", "args": {"answer": "see app.py", "finish_reason": "found"}})},
        {"match": "You are the Evidence Filter",
         "content": json.dumps({"spans": [{"path": "tinyweb/app.py", "start_line": 46, "end_line": 51}]})},
        {"match": "You are the Evaluation Agent", "content": json.dumps({"value": 80, "feedback": "read it"})},
    ]
mine = [{"match": "You are the Planning Agent", "body_has": tag, "times": 1,
         "content": json.dumps({"action": "FindFunction", "args": {"function_name": "dispatch_request"}})}]
for i, a in enumerate(answers):
    r = {"match": "You are the Answer Agent", "body_has": tag, "token_delay_ms": delay, "content": a}
    if i + 1 < len(answers):
        r["times"] = 1
    mine.append(r)
json.dump({"rules": mine + rules}, open(out, "w"))
PY
}
