#!/bin/sh
# test_modes_llm.sh: the model-backed parts of the engine against the
# scripted fake server (tests/fake_llm.py), on copies of the pyrepo fixture:
#   - --mode direct|rag-function|rag-window under --policy llm: what each
#     request carries (no repository text for direct; the retrieved spans
#     with their headers for the RAG modes, a window cut at a line with its
#     header saying so), citations verified against the spans shown with one
#     re-ask, tokens in the batch line equal to what the server reported,
#     and a clear error line when the model fails;
#   - --parallel 3 with a model whose replies are all unusable, so the
#     offline fallback runs beside the executor: the run completes, every
#     citation lies in a span the search saw, the transcript records
#     parallel = 3;
#   - remote embeddings: the first run embeds every chunk, the next one only
#     its question (and a one-text check); with the server down, or refusing
#     the key, the run warns and answers from the local vectors.
# One fake serves every run; each run's requests are the lines its log grew
# by. The checks are computed by one python3 call per run (python start-up
# is the slow part).
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
mkdir -p "$XDG_CONFIG_HOME/drqa-tui"
# no retries: the failure cases stay fast
printf 'retries = 0\ntimeout_connect_ms = 2000\n' >"$XDG_CONFIG_HOME/drqa-tui/config"
# line K of file F
line() { sed -n "$2p" "$1"; }

Q="Where does App.dispatch_request call the view function?"
QW="Where is the route dispatch table registered?"
QF="Why does the model fail for this question?"
EKEY=sk-embed-Zx81SECRETembedKey
for r in repo wrepo erepo erepo2 erepo3 erepo4; do cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/$r"; done
# a module longer than one window: windows 1-500, 451-950, 901-1200
$PYTHON3 -c 'import sys
lines = ["\"\"\"The route dispatch table: every view registered by path.\"\"\""]
lines += ["register_route(\"/path/%04d\", view_%04d)  # dispatch table entry" % (i, i) for i in range(2, 1201)]
open(sys.argv[1], "w").write("\n".join(lines) + "\n")' "$T/wrepo/tinyweb/bigtable.py"
# a chunk whose embedding request the fake answers with a 401 repeating the key
printf 'def refused():\n    """ECHO-THE-KEY marker."""\n    return 1\n' >"$T/erepo3/refused.py"

cat >"$T/script.json" <<'EOF'
{"embed_dim": 16,
 "rules": [
 {"endpoint": "embeddings", "match": "ECHO-THE-KEY", "fault": "echo_key"},
 {"match": "You are the Perception Agent", "content": "no idea"},
 {"match": "You are the Planning Agent", "content": "{\"action\": \"DoSomethingElse\"}"},
 {"match": "You are the Evidence Filter", "content": "[[["},
 {"match": "You are the Evaluation Agent", "content": "{\"value\": \"high\"}"},
 {"match": "You are the Answer Agent", "content": "{\"answer\": \"see `tinyweb/ghost.py:1-9`\"}"},
 {"match": "Question: Why does the model fail for this question?\n\nRetrieved", "status": 503, "error": "model overloaded"},
 {"match": "Question: Why does the model fail for this question?", "content": "  \n "},
 {"match": "match no span you were shown: tinyweb/nowhere.py:1-5",
  "content": "`App.dispatch_request` calls the view function at `tinyweb/app.py:51`, inside `tinyweb/app.py:46-51`; the router lives in `tinyweb/ghost.py:3-4`."},
 {"match": "Where is the route dispatch table registered?",
  "content": "Each route is registered with `register_route` in `tinyweb/bigtable.py:10-12`, and later in `tinyweb/bigtable.py:300-301`."},
 {"match": "from retrieved code", "content": "It calls the view at `tinyweb/nowhere.py:1-5`."},
 {"match": "You are given no code",
  "content": "Frameworks like this usually look the view up by endpoint, e.g. in `tinyweb/app.py:40-50`, and call it."}
]}
EOF
fake_start "$T/script.json" "$T/all.jsonl"
touch "$T/all.jsonl"

# run NAME [drqa options...] REPO: the batch line in NAME.json, stderr in
# NAME.err, the requests in NAME.jsonl, the exit status in NAME.rc
run() {
    name=$1
    shift
    before=$(wc -l <"$T/all.jsonl")
    "$DRQA" --json "$@" >"$T/$name.json" 2>"$T/$name.err"
    echo $? >"$T/$name.rc"
    tail -n +$((before + 1)) "$T/all.jsonl" >"$T/$name.jsonl"
}
# fake-model is in no profile row: a temperature goes out only because the
# config file sets one (the modes then send their own, 0)
printf 'temperature = 0.2\n' >"$T/model.conf"
llm() { echo --policy llm --config "$T/model.conf" --api-base "http://127.0.0.1:$port/v1" --model fake-model; }

# The checks, one call per run: prints one value per line.
cat >"$T/check.py" <<'EOF'
import json, re, sqlite3, sys

def load(name):
    d = json.load(open(name + ".json"))
    reqs = [json.loads(l) for l in open(name + ".jsonl")]
    return d, reqs

def cites(d):
    return " ".join("%s:%d-%d" % (c["path"], c["start_line"], c["end_line"]) for c in d["citations"])

def fake_tokens(reqs, replies):
    # what the fake reports: bytes/4 of the prompt and of the reply
    i = sum((len(r["prompt"]) + 3) // 4 for r in reqs)
    o = sum((len(replies[r["rule"]]) + 3) // 4 for r in reqs)
    return "%d %d" % (i, o)

def tokens(d):
    return "%d %d" % (d["tokens"]["input"], d["tokens"]["output"])

def embedded(reqs):
    return [json.loads(r["body"])["input"] for r in reqs if r["path"].endswith("/embeddings")]

what, name = sys.argv[1], sys.argv[2]
script = json.load(open(sys.argv[3]))
replies = {"rule%d" % i: r.get("content", "") for i, r in enumerate(script["rules"])}
out = []
if what in ("direct", "ragf", "ragw", "fail"):
    d, reqs = load(name)
    chat = [r for r in reqs if r["path"].endswith("/chat/completions")]
    p0 = chat[0]["prompt"] if chat else ""
    out += [cites(d), d["answer"], d["error"], " ".join(r["rule"] for r in chat), tokens(d), fake_tokens(chat, replies),
            " ".join(str(json.loads(r["body"]).get("temperature")) for r in chat)]
    if what == "direct":
        out.append(str(any(s in p0 for s in ("tinyweb/", "view_functions", "def "))))
    if what == "ragf":
        out.append(str("tinyweb/app.py:46-51  App.dispatch_request\n   46      def dispatch_request(self, request):" in p0
                       and "   51          return self.view_functions[endpoint](request, **args)" in p0))
        out.append(str(len(re.findall(r"^[a-z_/]+\.py:\d+-\d+", p0, re.M))))
        out.append(str("These citations match no span you were shown: tinyweb/nowhere.py:1-5" in chat[-1]["prompt"]))
        # the batch line's evidence entries that are citations: their text is the file's lines
        checked = wrong = 0
        for e in d["evidence"]:
            if not any((c["path"], c["start_line"], c["end_line"]) == (e["path"], e["start_line"], e["end_line"])
                       for c in d["citations"]):
                continue
            lines = open(sys.argv[4] + "/" + e["path"]).read().split("\n")
            checked += 1
            wrong += e["text"] != "\n".join(lines[e["start_line"] - 1:e["end_line"]])
        out.append("%d %d" % (checked > 0, wrong))
    if what == "ragw":
        bad, first = [], 0
        for h in re.finditer(r"^(\S+):(\d+)-(\d+)", p0, re.M):
            a, b = int(h.group(2)), int(h.group(3))
            body = p0[h.end():].split("\n\n")[0].split("\n")[1:]
            if [int(l.split()[0]) for l in body if l.strip()] != list(range(a, b + 1)) or b - a + 1 > 500:
                bad.append(h.group(0))
            if h.group(1) == "tinyweb/bigtable.py" and a == 1:
                first = b
        out += [" ".join(bad), str(first), str(max(len(r["prompt"]) for r in chat))]
elif what == "par":
    d, reqs = load(name)
    t = json.load(open(sys.argv[4]))
    spans = [s for nd in t["nodes"] for s in (nd.get("observation") or [])]
    outside = [c for c in d["citations"] if not any(
        s["path"] == c["path"] and s["start_line"] <= c["start_line"] and c["end_line"] <= s["end_line"] for s in spans)]
    fallbacks = sum(1 for nd in t["nodes"] if "used the offline plan" in (nd.get("rationale") or ""))
    out += [str(t["config"]["parallel"]), d["policy"],
            "%s %s %s %d %s" % (len(t["nodes"]) > 6, fallbacks > 3, len(d["citations"]) > 0, len(outside),
                                "ghost.py" in (d["answer"] or ""))]
elif what == "embed":
    d, reqs = load(name)
    sys.path.insert(0, sys.argv[5])
    import index_sql   # the functions the view chunks calls
    db = index_sql.connect(sys.argv[4])
    nchunks = db.execute("select count(*) from chunks").fetchone()[0]
    cached = db.execute("select count(*) from embeddings where model = 'fake-embed'").fetchone()[0]
    hashes = db.execute("select count(distinct hash) from chunks").fetchone()[0]
    e = embedded(reqs)
    out += [cites(d), str(nchunks), str(sum(len(x) for x in e)), json.dumps(e[-1] if e else None),
            "%d %d" % (cached, hashes), " ".join(json.dumps(x) for x in e) if len(e) < 4 else "many"]
for v in out:
    print((v if v is not None else "None").replace("\n", "\\n"))
EOF
checks() { $PYTHON3 "$T/check.py" "$1" "$T/$2" "$T/script.json" "${3:-}" "$top_srcdir/tests" >"$T/$2.check"; }

# ---------------------------------------------------------------- direct
run direct $(llm) --mode direct --ask "$Q" "$T/repo"
checks direct direct
C="$T/direct.check"
is "$(cat "$T/direct.rc")" 0 "direct: --ask succeeds"
is "$(line "$C" 1)" "" "direct: the answer cites nothing"
case "$(line "$C" 2)" in *"without any repository context"*) r=0 ;; *) r=1 ;; esac
ok $r "direct: the answer says it had no repository context"
case "$(line "$C" 2)" in *"tinyweb/app.py:40-50"*) r=1 ;; *) r=0 ;; esac
ok $r "direct: the location the model invented is removed from the text"
is "$(line "$C" 4)" "rule11" "direct: one request, the direct prompt"
is "$(line "$C" 8)" "False" "direct: the request carries no repository text"
is "$(line "$C" 7)" "0" "direct: temperature 0"
is "$(line "$C" 5)" "$(line "$C" 6)" "direct: the batch line has the tokens the server reported"

is "$($PYTHON3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["policy"], d.get("model"))' "$T/direct.json")" \
    "llm fake-model" "direct: the batch line names the chat model (so --report tells two models apart)"
# resuming a --batch output written with another model is refused, the file unchanged
printf '{"id": "m1", "question": "%s"}\n' "$Q" >"$T/mq.jsonl"
"$DRQA" --quiet $(llm) --mode direct --batch "$T/mq.jsonl" --out "$T/mout.jsonl" "$T/repo" 2>/dev/null
cp "$T/mout.jsonl" "$T/mout.before"
"$DRQA" --quiet --policy llm --api-base "http://127.0.0.1:$port/v1" --model other-model --mode direct \
    --batch "$T/mq.jsonl" --out "$T/mout.jsonl" "$T/repo" 2>"$T/mout.err"
is "$?" 2 "batch: resuming the answers of another model: status 2"
grep -qF "mout.jsonl:1: the answer kept for id \"m1\" was written by direct/llm/fake-model; this run is direct/llm/other-model" "$T/mout.err"
ok $? "batch: the message names both models: $(cat "$T/mout.err")"
cmp -s "$T/mout.before" "$T/mout.jsonl"
ok $? "batch: the answers file is left as it was"

# ---------------------------------------------------------- rag-function
run ragf $(llm) --mode rag-function --ask "$Q" "$T/repo"
checks ragf ragf "$T/repo"
C="$T/ragf.check"
is "$(cat "$T/ragf.rc")" 0 "rag-function: --ask succeeds"
is "$(line "$C" 4)" "rule10 rule8" "rag-function: a reply citing outside the chunks is re-asked once"
is "$(line "$C" 10)" "True" "rag-function: the re-ask lists the invalid citation"
is "$(line "$C" 8)" "True" "rag-function: the chunks go out under their path:start-end headers, lines numbered"
is "$(line "$C" 9)" 10 "rag-function: ten chunks are shown"
is "$(line "$C" 7)" "0 0" "rag-function: temperature 0"
is "$(line "$C" 1)" "tinyweb/app.py:51-51 tinyweb/app.py:46-51" \
    "rag-function: the citations inside the chunks are kept, the other is dropped"
is "$(line "$C" 11)" "1 0" "rag-function: a cited span carries exactly its lines' text"
case "$(line "$C" 2)" in *ghost.py*) r=1 ;; *"1 citation outside the retrieved spans was removed"*) r=0 ;; *) r=1 ;; esac
ok $r "rag-function: the invalid citation is removed from the text, and the answer says so"
is "$(line "$C" 5)" "$(line "$C" 6)" "rag-function: the batch line adds up the tokens of both calls"

# ------------------------------------------------------------ rag-window
run ragw $(llm) --mode rag-window --ask "$QW" "$T/wrepo"
checks ragw ragw
C="$T/ragw.check"
is "$(cat "$T/ragw.rc")" 0 "rag-window: --ask succeeds"
is "$(line "$C" 8)" "" "rag-window: every window shows exactly the lines its header names, at most 500"
cut=$(line "$C" 9)
ok "$([ "$cut" -gt 12 ] && [ "$cut" -lt 300 ] && echo 0 || echo 1)" \
    "rag-window: the window 1-500 of the long module is cut at its byte cap (line $cut)"
is "$(line "$C" 1)" "tinyweb/bigtable.py:10-12" \
    "rag-window: a citation inside the window but past the lines shown is dropped"
ok "$([ "$(line "$C" 10)" -lt 60000 ] && echo 0 || echo 1)" "rag-window: the prompt stays under the context cap"
is "$(line "$C" 5)" "$(line "$C" 6)" "rag-window: the batch line has the tokens the server reported"

# -------------------------------------------------------------- failures
run fail1 $(llm) --mode rag-function --ask "$QF" "$T/repo"
checks fail fail1
is "$(cat "$T/fail1.rc")" 1 "rag-function: a failing server fails the question"
grep -q '^drqa-tui: rag-function: the model call failed: .*model overloaded' "$T/fail1.err"
ok $? "rag-function: the error line names the mode and the server's message"
is "$(line "$T/fail1.check" 2)" "None" "rag-function: no answer on failure"
run fail2 $(llm) --mode direct --ask "$QF" "$T/repo"
checks fail fail2
is "$(cat "$T/fail2.rc")" 1 "direct: an empty reply fails the question"
is "$(line "$T/fail2.check" 3)" "direct: the model returned an empty answer" "direct: the error says the reply was empty"

# ------------------------------- parallel fallbacks (the offline policy on its own connection)
run par $(llm) --parallel 3 --iterations 12 --transcript-dir "$T/tr" --ask "$Q" "$T/repo"
checks par par "$(ls "$T/tr"/*.json | head -1)"
C="$T/par.check"
is "$(cat "$T/par.rc")" 4 "--parallel 3, every reply unusable: the search completes; the model's answer cites nothing verified (exit 4)"
is "$(line "$C" 1)" 3 "--parallel 3: the transcript records parallel = 3"
is "$(line "$C" 3)" "True True True 0 False" \
    "--parallel 3: offline plans were used, and every citation lies in a span the search saw"

# ------------------------------------------------------ remote embeddings
emb() { echo --mode rag-function --embed-base "http://127.0.0.1:$1/v1" --embed-model fake-embed; }
run emb1 $(emb "$port") --ask "$Q" "$T/erepo"
index=$(ls "$XDG_CACHE_HOME"/drqa-tui/erepo-*.sqlite | head -1)
checks embed emb1 "$index"
C="$T/emb1.check"
is "$(cat "$T/emb1.rc")" 0 "embeddings: the first run succeeds"
nchunks=$(line "$C" 2)
is "$(line "$C" 3)" "$((nchunks + 1))" "embeddings: the first run embeds all $nchunks chunks and the question"
is "$(line "$C" 4)" "[\"$Q\"]" "embeddings: the question is embedded by the remote model"
set -- $(line "$C" 5)
is "$1" "$2" "embeddings: the vectors are cached in the index by chunk hash under the model's name"
is "$(line "$C" 1 | cut -d' ' -f1)" "tinyweb/app.py:46-51" "embeddings: the search answers"
ok "$(grep -c warning "$T/emb1.err")" "embeddings: no warning while the server works"

run emb2 $(emb "$port") --ask "$Q" "$T/erepo"
checks embed emb2 "$index"
is "$(cat "$T/emb2.rc")" 0 "embeddings: the second run succeeds"
is "$(line "$T/emb2.check" 6)" "[\"embeddings check\"] [\"$Q\"]" \
    "embeddings: the second run embeds no chunk, only a check and the question"
is "$(line "$T/emb2.check" 1)" "$(line "$C" 1)" "embeddings: the same answer from the cached vectors"

# an index of another schema is rebuilt, and its cached vectors go with it
sqlite3 "$index" "PRAGMA user_version = $(( $(sqlite3 "$index" "PRAGMA user_version") - 1 ))"
run emb2r $(emb "$port") --ask "$Q" "$T/erepo"
checks embed emb2r "$index"
is "$(cat "$T/emb2r.rc")" 0 "embeddings: the run after a schema change succeeds"
grep -q "it was rebuilt in the current one (schema [0-9]*); its [0-9]* cached embeddings of chunk texts still present were kept" "$T/emb2r.err"
ok $? "embeddings: stderr says the index was rebuilt and the cached vectors kept"
is "$(line "$T/emb2r.check" 6)" "[\"embeddings check\"] [\"$Q\"]" \
    "embeddings: after the rebuild no chunk is embedded again, only a check and the question"
is "$(line "$T/emb2r.check" 1)" "$(line "$C" 1)" "embeddings: the same answer after the rebuild"

# vectors of chunk texts the tree no longer has stay cached for a text that
# comes back, at most as many as the index has chunks; the oldest go first
churn() { $PYTHON3 -c 'import sys
r = int(sys.argv[2])
open(sys.argv[1], "w").write("".join("def churn_%03d():\n    \"\"\"Churn round %d, function %d.\"\"\"\n    return %d\n\n\n"
                                     % (i, r, i, r * 1000 + i) for i in range(200)))' "$T/erepo/tinyweb/churn.py" "$1"; }
# texts of churn round R the run NAME sent to the embeddings endpoint
sent() { $PYTHON3 -c 'import json, sys
n = 0
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["path"].endswith("/embeddings"):
        n += sum(("Churn round %s," % sys.argv[2]) in x for x in json.loads(r["body"])["input"])
print(n)' "$T/$1.jsonl" "$2"; }
sq() { sqlite3 "$index" "$1"; }
for r in 1 2 3 4; do
    churn $r
    run "churn$r" $(emb "$port") --ask "$Q" "$T/erepo"
done
live=$(sq "SELECT count(*) FROM chunk_spans")
stale=$(sq "SELECT count(*) FROM embeddings WHERE model = 'fake-embed' AND hash NOT IN (SELECT hash FROM chunk_spans)")
is "$(cat "$T/churn4.rc") $(sent churn4 4)" "0 200" "embeddings cache: each churn round embeds its 200 new texts"
# 600 stale written, at most $live kept: with fewer than 400 chunks all of round 1 goes
ok "$([ "$live" -lt 400 ] && [ "$stale" -eq "$live" ]; echo $?)" \
    "embeddings cache: stale vectors are kept up to the number of chunks ($stale stale, $live chunks; 600 written)"
churn 3
run churn3b $(emb "$port") --ask "$Q" "$T/erepo"
is "$(sent churn3b 3)" 0 "embeddings cache: the newest stale vectors were kept (round 3 back: nothing embedded)"
churn 1
run churn1b $(emb "$port") --ask "$Q" "$T/erepo"
is "$(sent churn1b 1)" 200 "embeddings cache: the oldest went first (round 1 back: embedded again)"
rm "$T/erepo/tinyweb/churn.py"

export DRQA_EMBED_KEY="$EKEY"
run emb3 $(emb "$port") --ask "$Q" "$T/erepo3"
unset DRQA_EMBED_KEY
is "$(cat "$T/emb3.rc")" 0 "embeddings refused: the run still answers"
grep -q "^drqa-tui: warning: remote embeddings (model 'fake-embed' at http://127.0.0.1:$port/v1) unusable: .*401" "$T/emb3.err"
ok $? "embeddings refused: warned, with the server's status"
ok "$(cat "$T/emb3.err" "$T/emb3.json" | grep -c "$EKEY")" "embeddings refused: the key is in no output"

# the server down ($port is free once the fake is gone): cached chunks (the
# check fails) and uncached ones (embedding them fails)
fake_stop
for r in erepo erepo2; do
    run "down-$r" $(emb "$port") --ask "$Q" "$T/$r"
    is "$(cat "$T/down-$r.rc")" 0 "embeddings server down ($r): the run still answers"
    grep -q "^drqa-tui: warning: remote embeddings (model 'fake-embed' at http://127.0.0.1:$port/v1) unusable: .*; SemanticSearch uses the local vectors and BM25 for this run\$" "$T/down-$r.err"
    ok $? "embeddings server down ($r): a warning on stderr names the server"
    grep -q '"citations":\[{"path":"tinyweb/app.py","start_line":46,"end_line":51[,}]' "$T/down-$r.json"
    ok $? "embeddings server down ($r): answered from the local vectors"
done

# a small embedding model behind llama.cpp's server: inputs over 100 tokens
# are refused with its 500; the texts are cut, and every chunk is embedded
cat >"$T/small.json" <<'EOF'
{"embed_dim": 16, "embed_max_tokens": 100, "embed_limit_style": "llamacpp-old", "default": {}}
EOF
if fake_start "$T/small.json" "$T/all.jsonl"; then
    run small $(emb "$port") --ask "$Q" "$T/erepo4"
    index=$(ls "$XDG_CACHE_HOME"/drqa-tui/erepo4-*.sqlite | head -1)
    checks embed small "$index"
    is "$(cat "$T/small.rc")" 0 "small embedding model: the run succeeds"
    ok "$(grep -c warning "$T/small.err")" "small embedding model: no warning, the remote vectors are used"
    set -- $(line "$T/small.check" 5)
    is "$1" "$2" "small embedding model: every chunk's vector is cached"
    PYTHONPATH="$top_srcdir/tests" $PYTHON3 -c 'import json, sys
from fake_llm import embed_tokens
reqs = [json.loads(l) for l in open(sys.argv[1])]
longest = [max(embed_tokens(t) for t in json.loads(r["body"])["input"]) for r in reqs if r["path"].endswith("/embeddings")]
# refusals first, then every request fits
print(len(longest), sum(1 for x in longest if x > 100) > 0, all(x <= 100 for x in longest[-3:]))' "$T/small.jsonl" >"$T/small.fit" 2>&1
    set -- $(cat "$T/small.fit")
    is "${2:-} ${3:-}" "True True" "small embedding model: whole texts were refused, the cut ones fit (${1:-?} requests)"
    fake_stop
else
    ok 1 "small embedding model: the fake server starts"
fi

echo "1..$n"
exit $fail
