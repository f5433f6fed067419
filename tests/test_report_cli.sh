#!/bin/sh
# drqa-tui --report from the command line: the grounding metrics of answers
# files against a reference (the command bench/quality.sh runs) as exact
# Markdown and as JSON, judged scores files of two systems, --out, and the
# error messages for missing and malformed files.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
tmp=$T
data=$top_srcdir/tests/data/eval

# 1. answers files + the dev reference: exact tables (worked out by hand:
#    mcts hits 1,0,0 @1 and 1,1,0 @5, recall 1, 1/2, 0; rag 1,0,1 / 1,0,1, recall 1/4, 1, 1/2).
"$DRQA" --reference "$data/ref-dev.jsonl" --report "$data/answers-mcts.jsonl" "$data/answers-rag.jsonl" \
    > "$tmp/out.md" 2>"$tmp/err"
ok $? "answers with a reference: exit 0"
cat > "$tmp/want.md" <<'EOF'
## Overall

No judge scores in these files (answers files, or --judge ran with no judge model).

## Tokens per question (input/output, mean)

| System | Tokens |
|---|---|
| mcts/offline | 200/20 (n=3) |
| rag-function/offline | 6,000/200 (n=3) |

## Grounding (no model)

file-hit@k: a gold file among the first k distinct cited files; file-hit@5 (citations): among the first five citations, repeats counted; identifier recall: share of the reference's identifiers found in the answer and its evidence.

| System | file-hit@1 | file-hit@5 | file-hit@5 (citations) | Identifier recall |
|---|---|---|---|---|
| mcts/offline | 0.33 (n=3) | 0.67 (n=3) | 0.67 (n=3) | 0.50 (n=3) |
| rag-function/offline | 0.67 (n=3) | 0.67 (n=3) | 0.67 (n=3) | 0.58 (n=3) |
EOF
check "answers tables, exact text" cmp -s "$tmp/out.md" "$tmp/want.md"
check "nothing on stderr" [ ! -s "$tmp/err" ]

# 1b. files and options in any order: the files first and --reference after
#     them, or --reference between two files, give the same tables
"$DRQA" --report "$data/answers-mcts.jsonl" "$data/answers-rag.jsonl" --reference "$data/ref-dev.jsonl" \
    > "$tmp/after.md" 2>"$tmp/err"
t $? "--reference after the report files: exit 0"
check "--reference after the report files: the same tables" cmp -s "$tmp/after.md" "$tmp/want.md"
check "--reference after the report files: nothing on stderr" [ ! -s "$tmp/err" ]
"$DRQA" --report "$data/answers-mcts.jsonl" --reference "$data/ref-dev.jsonl" "$data/answers-rag.jsonl" \
    > "$tmp/between.md" 2>"$tmp/err"
t $? "--reference between the report files: exit 0"
check "--reference between the report files: the same tables" cmp -s "$tmp/between.md" "$tmp/want.md"

# 2. the same as JSON (for scripts)
"$DRQA" --json --reference "$data/ref-sweqa.jsonl" --report "$data/answers-rag.jsonl" > "$tmp/out.json"
ok $? "--json: exit 0"
check "--json numbers (SWE-QA reference: gold from the answer text)" "$PYTHON3" -c '
import json, sys
j = json.load(open(sys.argv[1]))
s = j["systems"][0]
ok = (s["system"] == "rag-function/offline" and s["questions"] == 3
      and abs(s["file_hit@1"]["mean"] - 1/3) < 1e-9 and s["file_hit@5"]["n"] == 3
      and abs(s["identifier_recall"]["mean"] - (1/3 + 1 + 0.5) / 3) < 1e-9
      and s["overall"] == {"mean": None, "n": 0} and j["judges"] == [])
sys.exit(0 if ok else 1)' "$tmp/out.json"

# 3. without a reference answers files have no metrics: undefined, not zero
"$DRQA" --report "$data/answers-mcts.jsonl" > "$tmp/noref.md"
ok $? "answers without a reference: exit 0"
check "metrics undefined without a reference" grep -qxF "| mcts/offline | - (n=0) | - (n=0) | - (n=0) | - (n=0) |" "$tmp/noref.md"

# 4. judged scores of two systems, written with --out
"$DRQA" --report "$data/scores-a.jsonl" --report "$data/scores-b.jsonl" --out "$tmp/scores.md"
ok $? "scores files with --out: exit 0"
check "overall row of the first system" grep -qxF "| mcts/llm | 3 | 15.00 (n=2) | 15.00 (n=2) | 15.00 (n=2) | 15.00 (n=2) | 15.00 (n=2) | 75.00 (n=2) | 1 |" "$tmp/scores.md"
check "overall row of the second system" grep -qxF "| rag-function/llm | 2 | 10.25 (n=2) | 11.00 (n=2) | 12.00 (n=2) | 13.00 (n=2) | 14.25 (n=2) | 60.50 (n=2) | 0 |" "$tmp/scores.md"

# 4a. --out naming one of the files read is refused, the file left as it was
cp "$data/scores-b.jsonl" "$tmp/b.jsonl"
"$DRQA" --report "$data/scores-a.jsonl" "$tmp/b.jsonl" --out "$tmp/b.jsonl" 2>"$tmp/err4a"
is "$?" 2 "--out naming an input file: exit 2"
grep -qF "drqa-tui: --out '$tmp/b.jsonl' is the input file '$tmp/b.jsonl'; give another path for the report" "$tmp/err4a"
ok $? "--out naming an input file: said ($(cat "$tmp/err4a"))"
cmp -s "$data/scores-b.jsonl" "$tmp/b.jsonl"
ok $? "--out naming an input file: the scores are left as they were"

# 4b. answers lines carrying the model ledger (--json's "usage"): cost per question
cat >"$tmp/cost.jsonl" <<'EOF2'
{"id": 1, "question": "q1", "answer": "a", "citations": [], "mode": "mcts", "policy": "llm", "tokens": {"input": 9000, "output": 300}, "usage": {"total": {"calls": 9, "cached_input_tokens": 6000, "cost_usd": 0.03}, "by_tag": {}}}
{"id": 2, "question": "q2", "answer": "a", "citations": [], "mode": "mcts", "policy": "llm", "tokens": {"input": 7000, "output": 100}, "usage": {"total": {"calls": 7, "cached_input_tokens": 2000, "cost_usd": 0.01}, "by_tag": {}}}
{"id": 3, "question": "q3", "answer": "a", "citations": [], "mode": "mcts", "policy": "llm", "tokens": {"input": 7000, "output": 100}, "usage": {"total": {"calls": 7, "cached_input_tokens": 1000, "cost_usd": null}, "by_tag": {}}}
EOF2
"$DRQA" --report "$tmp/cost.jsonl" > "$tmp/cost.md"
ok $? "answers with a model ledger: exit 0"
check "cost per question: cached tokens and the priced questions' mean cost, the unpriced one counted" \
    grep -qxF "| mcts/llm | 3,000 (n=3) | 0.0200 (n=2), 1 unpriced |" "$tmp/cost.md"
"$DRQA" --report "$data/answers-mcts.jsonl" > "$tmp/nocost.md"
check "no cost section without a ledger" sh -c '! grep -q "Model cost" "$1"' sh "$tmp/nocost.md"

# 5. errors
"$DRQA" --report "$tmp/missing.jsonl" 2>"$tmp/e" >/dev/null
ok $(( $? != 2 )) "missing file: exit 2"
check "missing file named" grep -qxF "drqa-tui: cannot read '$tmp/missing.jsonl': No such file or directory; check the path" "$tmp/e"
printf '%s\nnot json\n' "$(sed -n 1p "$data/scores-a.jsonl")" > "$tmp/bad.jsonl"
"$DRQA" --report "$data/scores-b.jsonl" "$tmp/bad.jsonl" 2>"$tmp/e" >"$tmp/o"
ok $(( $? != 2 )) "malformed file: exit 2"
check "malformed line named by file:line" grep -qxF "drqa-tui: $tmp/bad.jsonl:2: not a JSON object (not json); each line must be one object" "$tmp/e"
check "no table printed on error" [ ! -s "$tmp/o" ]
echo '{"question": "Unknown?", "answer": "a", "mode": "m", "policy": "p"}' > "$tmp/stray.jsonl"
"$DRQA" --reference "$data/ref-dev.jsonl" --report "$tmp/stray.jsonl" 2>"$tmp/e" >/dev/null
ok $(( $? != 2 )) "answer without reference: exit 2"
check "answer without reference named" grep -qF "drqa-tui: $tmp/stray.jsonl:1: no reference for id '1'" "$tmp/e"
"$DRQA" --reference "$tmp/missing-ref.jsonl" --report "$data/answers-mcts.jsonl" 2>"$tmp/e" >/dev/null
ok $(( $? != 2 )) "missing reference: exit 2"
check "missing reference named" grep -qF "drqa-tui: cannot read '$tmp/missing-ref.jsonl'" "$tmp/e"

echo "1..$n"
exit $fail
