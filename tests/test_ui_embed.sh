#!/bin/sh
# test_ui_embed.sh: the front end builds its search with the engine's own
# builder, so --embed-base/--embed-model mean in it what they mean for --ask:
# with the scripted fake server (tests/fake_llm.py) on loopback as the
# embedder, the front end's SemanticSearch embeds its query there, as --ask
# does with the same options.
set -u
. "$top_srcdir/tests/ui_tmux.sh"
echo '{"embed_dim": 8}' >"$T/embed.json"
fake_start "$T/embed.json" "$T/req.jsonl"
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
Q="How are URL rules registered?"
# the query SemanticSearch embeds: a request whose input is a short text of
# the question's words (the chunks sent up front are code)
query_embedded() {
    [ -s "$1" ] && "$PYTHON3" - "$1" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if not r["path"].endswith("/embeddings"): continue
    inp = json.loads(r["body"]).get("input")
    inp = inp if isinstance(inp, list) else [inp]
    n += sum(1 for s in inp if "url" in s.lower() and "rule" in s.lower() and len(s) < 200)
sys.exit(0 if n else 1)
PY
}

run_ui 120 30 DRQA_TUI_ELAPSED=00:00 DRQA_API_KEY=sk-embed -- --policy offline --index "$T/ui.sqlite" \
    --iterations 6 --seed 7 --embed-base "http://127.0.0.1:$port/v1" --embed-model fake-embed "$T/repo" "$Q"
wait_for '\| done: ' 1500
ok $? "the front end's search ends"
grep -q 'SemanticSearch' "$T/screen"
ok $? "its tree holds a SemanticSearch"
grep -q '"/v1/embeddings"' "$T/req.jsonl" 2>/dev/null
ok $? "the front end sent embedding requests to --embed-base"
query_embedded "$T/req.jsonl"
ok $? "the front end's SemanticSearch embedded its query there"
keys q
wait_for '^EXIT=0'
ok $? "it quits"

n0=$(wc -l <"$T/req.jsonl")   # the server keeps the log open: the lines after these are --ask's
DRQA_API_KEY=sk-embed "$DRQA" --policy offline --index "$T/ask.sqlite" --iterations 6 --seed 7 \
    --embed-base "http://127.0.0.1:$port/v1" --embed-model fake-embed --ask "$Q" "$T/repo" \
    >/dev/null 2>"$T/ask.err"
tail -n +$((n0 + 1)) "$T/req.jsonl" >"$T/ask.jsonl"
query_embedded "$T/ask.jsonl"
ok $? "--ask with the same options embeds its query the same way"
echo "1..$n"
exit $fail
