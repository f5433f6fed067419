#!/bin/sh
# End-to-end tests of --batch on the pyrepo fixture with the offline policy:
# the exact line format, ids from the input or the line number, error lines
# for unusable input lines while the batch goes on, resuming (ids already in
# the output are skipped, a last line cut short is dropped), --jobs 2 giving the answers of --jobs 1, one
# transcript per question, and usage errors.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
R="$top_srcdir/tests/fixtures/pyrepo"
. "$top_srcdir/tests/lib.sh"

batch() { "$DRQA" --index "$T/index.sqlite" --no-progress --policy offline --quiet "$@" "$R" 2>"$T/err"; rc=$?; }
# lines FILE EXPR: a Python expression over the output lines L (a list of dicts)
lines() { "$PYTHON3" -c "import json; L=[json.loads(l) for l in open('$1') if l.strip()]; r=($2); print(r if isinstance(r, str) else repr(r))"; }

cat >"$T/in.jsonl" <<'EOF'
{"id": "logout", "question": "What happens to the session when a user logs out?", "gold": "ignored"}
{"question": "How does App.dispatch_request find the view function?"}
this is not json

{"id": 7, "note": "no question here"}
{"id": "regex", "question": "Where is the URL pattern compiled into a regular expression?"}
EOF

batch --batch "$T/in.jsonl" --out "$T/out1.jsonl"
is "$rc" 1 "a batch with failed lines exits 1"
is "$(lines "$T/out1.jsonl" "len(L)")" 5 "one output line per input line (blank lines aside)"
is "$(lines "$T/out1.jsonl" "sorted(str(d['id']) for d in L)")" "['2', '3', '7', 'logout', 'regex']" \
   "ids as given, or the line number"
is "$(lines "$T/out1.jsonl" "set(tuple(d.keys()) for d in L)")" \
   "{('id', 'question', 'answer', 'citations', 'evidence', 'mode', 'policy', 'repo_name', 'iterations', 'tokens', 'wall_ms', 'stop_reason', 'fallback_steps', 'failed_steps', 'commit', 'dirty', 'error', 'answered_by', 'model_calls', 'failed_calls', 'verified_citations', 'uncited')}" \
   "every line has exactly the documented keys, in order"
is "$(lines "$T/out1.jsonl" "sorted((str(d['id']), d['error'] is None, d['answer'] is None) for d in L)")" \
   "[('2', True, False), ('3', False, True), ('7', False, True), ('logout', True, False), ('regex', True, False)]" \
   "three answers, two error lines"
is "$(lines "$T/out1.jsonl" "[d['error'] for d in L if d['id'] == 3][0]")" \
   "line 3 is not a JSON object (this is not json); write one {\"id\": ..., \"question\": ...} per line" \
   "a line that is not JSON: a clear error"
is "$(lines "$T/out1.jsonl" "[d['error'] for d in L if d['id'] == 7][0]")" \
   "line 5 has no \"question\" string; add \"question\": \"...\"" "a line without a question: a clear error"
is "$(lines "$T/out1.jsonl" "[(d['citations'][0]['path'], d['mode'], d['policy']) for d in L if d['id'] == 'regex'][0]")" \
   "('tinyweb/routing.py', 'mcts', 'offline')" "the regex question cites routing.py first"
is "$(lines "$T/out1.jsonl" "all(isinstance(c['start_line'], int) and not c['path'].startswith('/') for d in L for c in d['citations'])")" \
   "True" "citation paths are relative to the repository"

# resume: nothing is answered twice
batch --batch "$T/in.jsonl" --out "$T/out1.jsonl"
is "$(lines "$T/out1.jsonl" "len(L)")" 5 "a second run adds nothing"
grep -v '"id":"regex"' "$T/out1.jsonl" >"$T/out2.jsonl"
printf '{"id":"cut short' >>"$T/out2.jsonl"
batch --batch "$T/in.jsonl" --out "$T/out2.jsonl"
is "$rc" 1 "resuming: the two error lines already in the output keep the exit status at 1"
grep -q "out2.jsonl: dropped a partial last line (16 bytes, left by an interrupted run)" "$T/err"
ok $? "resuming: the line cut short is dropped, and stderr says so"
is "$(lines "$T/out2.jsonl" "[str(d['id']) for d in L]")" "['logout', '2', '3', '7', 'regex']" \
   "only the missing id is answered, after a line cut short"
is "$(grep -c 'cut short' "$T/out2.jsonl")" 0 "the cut-short line is gone, so every line is JSON"

# resuming never keeps an answer for a question it does not answer: another
# question under the same id, another mode or another repository is refused
# before anything is answered, and the file is left as it was
cp "$T/out1.jsonl" "$T/out4.jsonl"
sed 's/when a user logs out?/when a user logs in?/' "$T/in.jsonl" >"$T/in4.jsonl"
batch --batch "$T/in4.jsonl" --out "$T/out4.jsonl"
is "$rc" 2 "resuming over the answer to another question under the same id: status 2"
grep -qF "out4.jsonl:1: the answer kept for id \"logout\" is to another question (\"What happens to the session when a user logs out?\"; the input now asks \"What happens to the session when a user logs in?\"); nothing was answered: give another --out, or remove the lines of the earlier run to answer those questions again" "$T/err"
ok $? "the message names the line, both questions and what to do: $(cat "$T/err")"
cmp -s "$T/out1.jsonl" "$T/out4.jsonl"
ok $? "the answers file is left as it was"
batch --mode rag-window --batch "$T/in.jsonl" --out "$T/out4.jsonl"
is "$rc" 2 "resuming over answers of another mode: status 2"
grep -qF "out4.jsonl:1: the answer kept for id \"logout\" was written by mcts/offline; this run is rag-window/offline" "$T/err"
ok $? "the message names both systems: $(cat "$T/err")"
cp -R "$R" "$T/otherrepo"
"$DRQA" --index "$T/other.sqlite" --no-progress --policy offline --quiet --batch "$T/in.jsonl" --out "$T/out4.jsonl" \
    "$T/otherrepo" 2>"$T/err"
is "$?" 2 "resuming over answers about another repository: status 2"
grep -qF "is about repository 'pyrepo'; this run asks 'otherrepo'" "$T/err"
ok $? "the message names both repositories: $(cat "$T/err")"
cmp -s "$T/out1.jsonl" "$T/out4.jsonl"
ok $? "the answers file is still as it was"

# --jobs 2 gives the answers of --jobs 1
batch --batch "$T/in.jsonl" --out "$T/out3.jsonl" --jobs 2 --transcript-dir "$T/tr"
strip="sorted((str(d['id']), json.dumps({k: v for k, v in d.items() if k != 'wall_ms'}, sort_keys=True)) for d in L)"
is "$(lines "$T/out3.jsonl" "$strip")" "$(lines "$T/out1.jsonl" "$strip")" "--jobs 2: the same lines as --jobs 1"
is "$(ls "$T/tr" | sort | tr '\n' ' ')" "2.json 2.md logout.json logout.md regex.json regex.md " \
   "one transcript per answered question, named by id"

# usage errors
"$DRQA" --policy offline --quiet --batch "$T/in.jsonl" "$R" 2>"$T/err"
is "$?" 2 "--batch without --out: status 2"
grep -q -- "--out" "$T/err"
ok $? "the message says what is missing"
batch --batch "$T/missing.jsonl" --out "$T/o.jsonl"
is "$rc" 2 "an unreadable questions file: status 2"
grep -q "missing.jsonl" "$T/err"
ok $? "the message names the file"
batch --batch "$T/in.jsonl" --out "$T/o.jsonl" --mode rag-window
is "$(lines "$T/o.jsonl" "sorted((str(d['id']), d['mode'], d['iterations']) for d in L if d['error'] is None)")" \
   "[('2', 'rag-window', 0), ('logout', 'rag-window', 0), ('regex', 'rag-window', 0)]" "a batch in another mode"

echo "1..$n"
exit $fail
