#!/bin/sh
# drqa-tui --judge end to end against loopback fake servers: two judges with
# different scripted scores averaged per dimension with each judge's scores
# kept, a judge that never replies in the rubric's JSON recorded as missing
# (never zero) after two re-asks, an empty answer not sent, both reference
# formats, the metrics-only run with no judge, --report over two judged
# systems, keys kept out of outputs, the errors for bad inputs, and a
# stopped run resumed without overwriting other scores.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
tmp=$T
data=$top_srcdir/tests/data/eval
# the judges' models are in no profile row: a temperature goes out only
# because the config sets one (a judge then sends 0)
printf 'retries = 0\nbackoff_ms = 1\ntimeout_total_ms = 20000\ntemperature = 0.2\n' > "$tmp/conf"

# start_fake NAME CONTENT: a fake whose every reply is CONTENT; sets port_NAME.
start_fake() {
    mkdir -p "$tmp/$1"
    "$PYTHON3" -c 'import json,sys; json.dump({"default": {"content": sys.argv[1]}}, open(sys.argv[2], "w"))' \
        "$2" "$tmp/$1/script.json"
    fake_start "$tmp/$1/script.json" "$tmp/$1/log"
    eval "port_$1=\$port"
}
requests() { if [ -f "$tmp/$1/log" ]; then wc -l < "$tmp/$1/log" | tr -d ' '; else echo 0; fi; }

start_fake A '{"correctness": 10, "completeness": 10, "relevance": 10, "clarity": 10, "reasoning": 10, "rationale": "from A"}'
start_fake B 'Sure: {"correctness": 14, "completeness": 14, "relevance": 14, "clarity": 14, "reasoning": 16}'
start_fake C 'I would give it 15 out of 20.'
A="A@http://127.0.0.1:$port_A/v1"
B="B@http://127.0.0.1:$port_B/v1"
C="C@http://127.0.0.1:$port_C/v1"

# py FILE EXPR...: asserts over the JSON lines of FILE (list L), prints "ok" when all hold.
py() { f=$1; shift; "$PYTHON3" - "$f" "$@" <<'EOF'
import json, sys
L = [json.loads(x) for x in open(sys.argv[1]) if x.strip()]
bad = [e for e in sys.argv[2:] if not eval(e)]
print("ok" if not bad else "failed: " + "; ".join(bad))
EOF
}

# 1. two judges averaged, per-judge scores kept, the empty answer not sent
"$DRQA" --config "$tmp/conf" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" \
    --out "$tmp/mcts.jsonl" --judge-model "$A" --judge-model "$B" 2>"$tmp/err1"
ok $? "two judges: exit 0"
r=$(py "$tmp/mcts.jsonl" 'len(L) == 3' '[x["id"] for x in L] == ["q1", "q2", "q3"]' \
    'L[0]["judges"][0]["judge"] == "A" and L[0]["judges"][1]["judge"] == "B"' \
    'L[0]["judges"][0]["total"] == 50 and L[0]["judges"][1]["total"] == 72' \
    'L[0]["judges"][1]["scores"]["reasoning"] == 16 and L[0]["judges"][0]["rationale"] == "from A"' \
    'L[0]["scores"] == {"correctness": 12, "completeness": 12, "relevance": 12, "clarity": 12, "reasoning": 13}' \
    'L[0]["total"] == 61 and L[0]["judged"] == 2 and L[1]["total"] == 61' \
    'L[0]["category_type"] == "what" and L[0]["category"] == "concept-defi" and L[0]["system"] == "mcts/offline"' \
    'L[0]["tokens"] == {"input": 100, "output": 10} and L[0]["judge_tokens"]["input"] > 0' \
    'L[0]["metrics"]["file_hit@1"] == 1 and L[0]["metrics"]["identifier_recall"] == 1' \
    'L[1]["metrics"]["file_hit@1"] == 0 and L[1]["metrics"]["file_hit@5"] == 1 and L[1]["metrics"]["identifier_recall"] == 0.5' \
    'L[2]["scores"] is None and L[2]["total"] is None and L[2]["judged"] == 0' \
    'L[2]["judges"][0]["error"] == "the answer is empty (its error: the model server timed out); not sent to the judge"' \
    'L[2]["judges"][0]["attempts"] == 0 and L[2]["answer_error"] == "the model server timed out"' \
    'L[2]["metrics"]["gold_files_from"] == "reference_text" and L[2]["metrics"]["file_hit@5"] == 0')
check "two judges: $r" [ "$r" = ok ]
check "each judge asked once per non-empty answer" [ "$(requests A)/$(requests B)" = 2/2 ]
check "summary on stderr" grep -q "3 answers: 2 scored, 1 with no judge score; 4 judge scores, 2 missing" "$tmp/err1"
body=$(sed -n 1p "$tmp/A/log")
check "judge request at temperature 0" "$PYTHON3" -c 'import json,sys; b=json.loads(json.loads(sys.argv[1])["body"]); sys.exit(b["temperature"] != 0)' "$body"
check "judge prompt holds question, reference and answer" "$PYTHON3" -c '
import json,sys; p=json.loads(sys.argv[1])["prompt"]
sys.exit(not ("Question:\nWhat does the `ensure_ascii`" in p and "Reference answer:\nThe `ensure_ascii` attribute" in p
              and "Candidate answer:\n`ensure_ascii` on DefaultJSONProvider" in p))' "$body"

# 2. a judge that never answers in JSON: missing after two re-asks, never zero
"$DRQA" --config "$tmp/conf" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" \
    --out "$tmp/withc.jsonl" --judge-model "$A" --judge-model "$C" 2>"$tmp/err2"
ok $? "one judge malformed: exit 0"
r=$(py "$tmp/withc.jsonl" 'L[0]["judges"][1]["scores"] is None and L[0]["judges"][1]["total"] is None' \
    'L[0]["judges"][1]["attempts"] == 3' \
    'L[0]["judges"][1]["error"].startswith("no valid reply in 3 attempts; the last: no JSON object")' \
    'L[0]["scores"]["correctness"] == 10 and L[0]["total"] == 50 and L[0]["judged"] == 1')
check "malformed judge recorded as missing, mean over the judge that answered: $r" [ "$r" = ok ]
check "malformed judge asked three times per answer" [ "$(requests C)" = 6 ]
check "re-ask carries the validation error" grep -q "Your reply could not be used: no JSON object" "$tmp/C/log"

# 3. no judge answers at all: lines written, scores null, exit 1
"$DRQA" --config "$tmp/conf" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" \
    --out "$tmp/onlyc.jsonl" --judge-model "$C" 2>"$tmp/err3"
ok $(( $? != 1 )) "no usable judge score: exit 1"
r=$(py "$tmp/onlyc.jsonl" 'len(L) == 3 and all(x["scores"] is None and x["total"] is None for x in L)')
check "all scores missing, none zero: $r" [ "$r" = ok ]
check "says no judge gave a usable score" grep -q "no judge gave a usable score" "$tmp/err3"

# 4. no judge configured: metrics only, and stderr says so
"$DRQA" --config "$tmp/conf" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" \
    --out "$tmp/metrics.jsonl" 2>"$tmp/err4"
ok $? "no judge: exit 0"
check "no judge: stderr says so" grep -q "^drqa-tui: no judge model was configured (give --judge-model NAME, or judge.NAME.model in .*); writing the grounding metrics only$" "$tmp/err4"
r=$(py "$tmp/metrics.jsonl" 'len(L) == 3 and L[0]["judges"] == [] and L[0]["scores"] is None' \
    'L[1]["metrics"]["file_hit@5"] == 1 and L[1]["metrics"]["identifiers_found"] == 1')
check "no judge: metrics written: $r" [ "$r" = ok ]

# 5. the judges file names the judges when no --judge-model is given
mkdir -p "$XDG_CONFIG_HOME/drqa-tui"
printf 'judge.fileA.model = a-model\njudge.fileA.base = http://127.0.0.1:%s/v1\n' "$port_A" > "$XDG_CONFIG_HOME/drqa-tui/judges"
"$DRQA" --config "$tmp/conf" --judge "$data/answers-rag.jsonl" --reference "$data/ref-sweqa.jsonl" \
    --out "$tmp/rag-swe.jsonl" 2>"$tmp/err5"
ok $? "SWE-QA reference, judge from the judges file: exit 0"
r=$(py "$tmp/rag-swe.jsonl" 'len(L) == 3 and L[0]["id"] == "1" and L[0]["judges"][0]["judge"] == "fileA"' \
    'L[0]["judges"][0]["model"] == "a-model" and L[0]["total"] == 50' \
    '"category_type" not in L[0] and L[0]["metrics"]["gold_files_from"] == "reference_text"' \
    'L[0]["metrics"]["file_hit@1"] == 0 and L[2]["metrics"]["file_hit@1"] == 1')
check "SWE-QA format matched by question text: $r" [ "$r" = ok ]
grep -q '"model": "a-model"' "$tmp/A/log" || grep -q 'a-model' "$tmp/A/log"
ok $? "the file's model id sent"
rm -f "$XDG_CONFIG_HOME/drqa-tui/judges"

# 6. --report over two judged systems
"$DRQA" --config "$tmp/conf" --judge "$data/answers-rag.jsonl" --reference "$data/ref-dev.jsonl" \
    --out "$tmp/rag.jsonl" --judge-model "$A" --judge-model "$B" 2>/dev/null
ok $? "second system judged"
"$DRQA" --report "$tmp/mcts.jsonl" "$tmp/rag.jsonl" > "$tmp/report.md" 2>"$tmp/err6"
ok $? "--report: exit 0"
check "report: mcts row" grep -qxF "| mcts/offline | 3 | 12.00 (n=2) | 12.00 (n=2) | 12.00 (n=2) | 12.00 (n=2) | 13.00 (n=2) | 61.00 (n=2) | 1 |" "$tmp/report.md"
check "report: rag row" grep -qxF "| rag-function/offline | 3 | 12.00 (n=3) | 12.00 (n=3) | 12.00 (n=3) | 12.00 (n=3) | 13.00 (n=3) | 61.00 (n=3) | 0 |" "$tmp/report.md"
check "report: per judge" grep -qxF "| mcts/offline | 50.00 (n=2) | 72.00 (n=2) |" "$tmp/report.md"
check "report: question subtype" grep -qxF "| where | iden-loca | 61.00 (n=1) | 61.00 (n=1) |" "$tmp/report.md"
check "report: tokens" grep -qxF "| rag-function/offline | 6,000/200 (n=3) |" "$tmp/report.md"
check "report: grounding" grep -qxF "| rag-function/offline | 0.67 (n=3) | 0.67 (n=3) | 0.67 (n=3) | 0.58 (n=3) |" "$tmp/report.md"

# 7. the key goes to its endpoint and nowhere else
DRQA_API_KEY=sk-judgecli-S3CRET DRQA_API_BASE=http://127.0.0.1:$port_A/v1 \
    "$DRQA" --config "$tmp/conf" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" \
    --out "$tmp/key.jsonl" --judge-model judge-x --judge-model "$B" >"$tmp/out7" 2>"$tmp/err7"
ok $? "judge at the configured endpoint: exit 0"
check "configured key sent to the configured endpoint" grep -q "Bearer sk-judgecli-S3CRET" "$tmp/A/log"
check "key not sent to another endpoint" sh -c "! grep -q S3CRET '$tmp/B/log'"
check "key not in outputs" sh -c "! grep -q S3CRET '$tmp/key.jsonl' '$tmp/out7' '$tmp/err7'"

# 8. errors name the file and line; nothing is asked of a judge
before=$(requests A)
"$DRQA" --judge "$tmp/nope.jsonl" --reference "$data/ref-dev.jsonl" --out "$tmp/x.jsonl" --judge-model "$A" 2>"$tmp/e"
ok $(( $? != 2 )) "missing answers file: exit 2"
check "missing answers file named" grep -qxF "drqa-tui: cannot read '$tmp/nope.jsonl': No such file or directory; check the path" "$tmp/e"
mkdir -p "$tmp/adir"
"$DRQA" --judge "$data/answers-mcts.jsonl" --reference "$tmp/adir" --out "$tmp/x.jsonl" 2>"$tmp/e"
ok $(( $? != 2 )) "unreadable reference: exit 2"
check "unreadable reference named" grep -qxF "drqa-tui: cannot read '$tmp/adir': Is a directory; check the path" "$tmp/e"
{ sed -n 1p "$data/answers-mcts.jsonl"; echo '{"id": "q2", "answer": '; } > "$tmp/broken.jsonl"
"$DRQA" --judge "$tmp/broken.jsonl" --reference "$data/ref-dev.jsonl" --out "$tmp/x.jsonl" --judge-model "$A" 2>"$tmp/e"
ok $(( $? != 2 )) "malformed answers line: exit 2"
check "malformed line named by file:line" grep -qF "drqa-tui: $tmp/broken.jsonl:2: not a JSON object" "$tmp/e"
echo '{"id": "q9", "question": "Who wrote it?", "answer": "x"}' > "$tmp/stray.jsonl"
"$DRQA" --judge "$tmp/stray.jsonl" --reference "$data/ref-dev.jsonl" --out "$tmp/x.jsonl" --judge-model "$A" 2>"$tmp/e"
ok $(( $? != 2 )) "answer without reference: exit 2"
check "answer without reference named" grep -qF "drqa-tui: $tmp/stray.jsonl:1: no reference for id 'q9' in $data/ref-dev.jsonl" "$tmp/e"
echo '{"question": "q"}' > "$tmp/badref.jsonl"
"$DRQA" --judge "$data/answers-mcts.jsonl" --reference "$tmp/badref.jsonl" --out "$tmp/x.jsonl" 2>"$tmp/e"
ok $(( $? != 2 )) "reference without answer: exit 2"
check "reference line named" grep -qF "drqa-tui: $tmp/badref.jsonl:1: no \"reference_answer\"" "$tmp/e"
"$DRQA" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" --out "$tmp/no/dir/x.jsonl" 2>"$tmp/e"
ok $(( $? != 1 )) "unwritable output: exit 1"
check "unwritable output named" grep -qF "drqa-tui: cannot write the output file '$tmp/no/dir/x.jsonl': No such file or directory" "$tmp/e"
"$DRQA" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" --out "$tmp/x.jsonl" --judge-model "x@ftp://h" 2>"$tmp/e"
ok $(( $? != 2 )) "bad judge spec: exit 2"
check "bad judge spec named" grep -qF -e "--judge-model 'x@ftp://h': the URL must start with http:// or https://" "$tmp/e"
check "no judge asked on bad input" [ "$(requests A)" = "$before" ]

# 9. scores are appended: a run stopped part way resumes after its last whole
# line (a line cut short by the kill is dropped), a finished file is not
# judged again, and a file holding other scores is never overwritten
full=$tmp/mcts.jsonl
{ sed -n 1p "$full"; sed -n 2p "$full" | head -c 40; } > "$tmp/part.jsonl"
before=$(requests A)/$(requests B)
"$DRQA" --config "$tmp/conf" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" \
    --out "$tmp/part.jsonl" --judge-model "$A" --judge-model "$B" 2>"$tmp/err9"
ok $? "resume: exit 0"
check "resume: the partial last line is dropped, and said" \
    grep -qF "drqa-tui: $tmp/part.jsonl: dropped a partial last line (40 bytes, left by an interrupted run)" "$tmp/err9"
check "resume: says what it kept" grep -qF "holds the scores of the first 1 of 3 answers (an earlier run)" "$tmp/err9"
check "resume: only the answers after it are judged (one non-empty: one call per judge)" \
    [ "$(requests A)/$(requests B)" = "$(( ${before%/*} + 1 ))/$(( ${before#*/} + 1 ))" ]
check "resume: the file is the one an uninterrupted run wrote" cmp -s "$full" "$tmp/part.jsonl"
check "resume: the summary counts the kept lines" \
    grep -q "3 answers: 2 scored, 1 with no judge score; 4 judge scores, 2 missing" "$tmp/err9"
before=$(requests A)
"$DRQA" --config "$tmp/conf" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" \
    --out "$tmp/part.jsonl" --judge-model "$A" --judge-model "$B" 2>"$tmp/err9b"
ok $? "a finished scores file: exit 0"
check "a finished scores file: no judge asked again, the file unchanged" \
    sh -c "[ '$(requests A)' = '$before' ] && cmp -s '$full' '$tmp/part.jsonl'"
cp "$full" "$tmp/keep.jsonl"
"$DRQA" --config "$tmp/conf" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" \
    --out "$tmp/keep.jsonl" --judge-model "$A" 2>"$tmp/e"
ok $(( $? != 2 )) "scores by other judges in --out: exit 2"
check "scores by other judges: named, with what to do" \
    grep -qF "drqa-tui: $tmp/keep.jsonl:1: scores by other judges, where this run scores answer 'q1'; the file is left as it is: give another --out, or remove it to score again" "$tmp/e"
check "scores by other judges: the file is left as it was" cmp -s "$full" "$tmp/keep.jsonl"
cp "$data/answers-mcts.jsonl" "$tmp/ans.jsonl"
"$DRQA" --config "$tmp/conf" --judge "$tmp/ans.jsonl" --reference "$data/ref-dev.jsonl" --out "$tmp/ans.jsonl" \
    --judge-model "$A" 2>"$tmp/e"
ok $(( $? != 2 )) "--out naming the answers file: exit 2"
check "--out naming the answers file: said" \
    grep -qF "drqa-tui: --out '$tmp/ans.jsonl' is the answers file; give another path for the scores" "$tmp/e"
check "--out naming the answers file: the answers are left as they were" cmp -s "$data/answers-mcts.jsonl" "$tmp/ans.jsonl"
printf 'notes\n' > "$tmp/notes.txt"
"$DRQA" --config "$tmp/conf" --judge "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" \
    --out "$tmp/notes.txt" --judge-model "$A" 2>"$tmp/e"
ok $(( $? != 2 )) "--out naming a file that holds no scores: exit 2"
check "a file that holds no scores: named by line, and left as it was" \
    sh -c "grep -qF '$tmp/notes.txt:1: not a scores line' '$tmp/e' && [ \"\$(cat '$tmp/notes.txt')\" = notes ]"

echo "1..$n"
exit $fail
