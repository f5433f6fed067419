#!/bin/sh
# Nothing lost, nothing leaked: the headless modes against the probes that
# once lost data or leaked a key, on a copy of the pyrepo fixture and the
# loopback fake model server (tests/fake_llm.py), one group per defect:
#  429    a 429 without a usable Retry-After backs off like a 5xx;
#  torn   each --batch answer line is one write() (counted with strace), and
#         resume drops a last line cut short, so --report reads the file;
#  drops  --batch refuses clashing ids (both line numbers named) and --out
#         naming the questions file (also a hard link), exits 1 while a
#         question has no answer, reads questions from a pipe (- and
#         /dev/stdin), and gets through 40k lines (no timing asserted; the
#         ratio is bench/batch-ids.sh's);
#  config a config file holding a key that others could write is refused,
#         and a malformed line never shows its value;
#  url    user:KEY@ and ?api-key= in a base URL never reach stderr, the
#         --log file or transcripts, and the API path goes before the query
#         (chat, Anthropic messages, embeddings);
#  glob   a file whose name has an unclosed '[' does not make search steps
#         fail (the offline policy escapes paths it uses as patterns);
#  minor  ViewCode 0-0 is an error and 9-3 a labelled 3-9, --action refuses
#         text after its JSON, citations outside the repository are removed
#         like unverified ones, and a 300-character id gets a transcript.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
stop_fake() { fake_stop; }
CFG="$XDG_CONFIG_HOME/drqa-tui/config"
mkdir -p "$XDG_CONFIG_HOME/drqa-tui"
R="$T/repo"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$R"
IDX="$T/index.sqlite"
"$DRQA" --index "$IDX" --no-progress --quiet --index-only "$R" >/dev/null 2>&1

start_fake() {   # start_fake SCRIPT_JSON
    printf '%s\n' "$1" >"$T/script.json"
    rm -f "$T/fake.jsonl"
    fake_start "$T/script.json" "$T/fake.jsonl"
}
# fake_paths: the request paths the fake saw, one per line
fake_paths() { "$PYTHON3" -c 'import json, sys
for l in open(sys.argv[1]): print(json.loads(l)["path"])' "$T/fake.jsonl"; }
batch() { "$DRQA" --index "$IDX" --no-progress --quiet --policy offline "$@" "$R" 2>"$T/err"; rc=$?; }
count() { grep -c "$1" "$2" 2>/dev/null; }

# ---- 429: no usable Retry-After, the jittered backoff of a 5xx
printf 'retries = 2\nbackoff_ms = 100\nbackoff_max_ms = 400\ntimeout_total_ms = 5000\n' >"$CFG"
for ra in none 0 -5 abc 99999999999999999999999; do
    if [ "$ra" = none ]; then start_fake '{"default": {"status": 429, "error": "slow down"}}'
    else start_fake "{\"default\": {\"status\": 429, \"retry_after\": \"$ra\", \"error\": \"slow down\"}}"; fi
    rm -f "$T/log429"
    "$DRQA" --index "$IDX" --no-progress --quiet --log "$T/log429" --policy llm --no-perception --api-base \
        "http://127.0.0.1:$port/v1" --model m --iterations 1 --ask "Where is the session flushed?" "$R" \
        >/dev/null 2>&1
    stop_fake
    # every call is tried three times; each retry waits at least half the backoff (50, then 100 ms)
    waits=$(sed -n 's/.*http: retrying .* in \([0-9]*\) ms (backoff)$/\1/p' "$T/log429" | tr '\n' ' ')
    calls=$(grep -c 'llm: ' "$T/log429")
    is "$(wc -l <"$T/fake.jsonl" | tr -d ' ')" "$((calls * 3))" "429 Retry-After $ra: each of $calls calls made 3 requests"
    short=$(echo "$waits" | tr ' ' '\n' | awk 'NF && $1 < 50' | wc -l | tr -d ' ')
    ok $([ -n "$waits" ] && [ "$short" = 0 ]; echo $?) "429 Retry-After $ra: every retry backed off >= 50 ms: $waits"
done
# an honoured Retry-After is capped by timeout_total_ms
start_fake '{"sequence": [{"status": 429, "retry_after": "100", "error": "wait"}], "default": {"content": "fine"}}'
printf 'retries = 1\nretry_after_max_ms = 60000\ntimeout_total_ms = 300\n' >"$CFG"
rm -f "$T/log429"
"$DRQA" --index "$IDX" --no-progress --quiet --log "$T/log429" --mode direct --api-base "http://127.0.0.1:$port/v1" \
    --model m --ask "Where is the session flushed?" "$R" >/dev/null 2>&1
stop_fake
like "$(grep 'http: retrying' "$T/log429")" "in 300 ms (Retry-After)" "Retry-After: 100 waits timeout_total_ms (300 ms), no more"
rm -f "$CFG"

# ---- torn: one write() per answer line; resume drops a cut-short last line
printf '%s\n' '{"id":"a","question":"Where is the session flushed?"}' \
    '{"id":"b","question":"Which class dispatches requests?"}' >"$T/q.jsonl"
if command -v strace >/dev/null 2>&1; then
    # LeakSanitizer cannot run under a tracer: the sanitizer build checks leaks elsewhere
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -y -e trace=write -o "$T/strace" "$DRQA" --index "$IDX" --no-progress --quiet --policy offline \
            --batch "$T/q.jsonl" --out "$T/whole.jsonl" "$R" 2>/dev/null
    longest=$(awk '{ if (length($0) > m) m = length($0) } END { print m }' "$T/whole.jsonl")
    is "$(grep -c 'whole.jsonl>' "$T/strace")" 2 "two answer lines (the longest $longest bytes) took two write() calls"
else
    ok 1 "strace is needed to count write() calls (scripts/deps-debian.sh installs it)"
fi
# a transcript is on disk before it takes its name
if command -v strace >/dev/null 2>&1; then
    ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
        strace -f -y -e trace=fsync,fdatasync,rename -o "$T/strace-tr" "$DRQA" --index "$IDX" --no-progress --quiet \
            --policy offline --transcript-dir "$T/trs" --ask "Where is the session flushed?" "$R" >/dev/null 2>&1
    $PYTHON3 -c 'import re, sys
lines = open(sys.argv[1]).read().splitlines()
ok = 0
for i, l in enumerate(lines):
    m = re.search(r"rename\(\"([^\"]*\.tmp\.\d+)\"", l)
    if m:
        ok += any(re.search(r"f(data)?sync\(\d+<%s>\)" % re.escape(m.group(1)), x) for x in lines[:i])
print(ok)' "$T/strace-tr" >"$T/tr-synced"
    is "$(cat "$T/tr-synced")" 2 "both transcript files (JSON and Markdown) are synced before their rename"
else
    ok 1 "strace is needed to see the fsync before the rename (scripts/deps-debian.sh installs it)"
fi
batch --batch "$T/q.jsonl" --out "$T/torn.jsonl"
head -c $(($(head -n 1 "$T/torn.jsonl" | wc -c) + 300)) "$T/torn.jsonl" >"$T/torn2.jsonl"
batch --batch "$T/q.jsonl" --out "$T/torn2.jsonl"
is "$rc" 0 "resume after a kill mid-line: exit 0"
like "$(cat "$T/err")" "torn2.jsonl: dropped a partial last line (300 bytes, left by an interrupted run)" \
    "resume says it dropped the partial line"
is "$(wc -l <"$T/torn2.jsonl" | tr -d ' ')" 2 "both questions have one whole line"
"$DRQA" --report "$T/torn2.jsonl" >/dev/null 2>"$T/rerr"
is "$?" 0 "--report reads the resumed file: $(head -c 200 "$T/rerr")"

# ---- drops: ids, --out, exit status, pipes, 40k lines
printf '%s\n' '{"id":2,"question":"Where is the session flushed?"}' \
    '{"question":"Which class dispatches requests?"}' >"$T/clash.jsonl"
batch --batch "$T/clash.jsonl" --out "$T/clash.out"
is "$rc" 2 "a line without an id clashing with id 2: refused (exit 2)"
like "$(cat "$T/err")" "clash.jsonl:2: id 2 is also the id of line 1 (a line without \"id\" takes its line number)" \
    "the message names both lines"
is "$(cat "$T/clash.out" 2>/dev/null | wc -l | tr -d ' ')" 0 "and nothing was answered"
printf '%s\n' '{"id":"x","question":"Where is the session flushed?"}' '' \
    '{"id":"x","question":"Which class dispatches requests?"}' >"$T/dup.jsonl"
batch --batch "$T/dup.jsonl" --out "$T/dup.out"
is "$rc" 2 "a repeated id in a new file: refused (exit 2)"
like "$(cat "$T/err")" "dup.jsonl:3: id \"x\" is also the id of line 1" "the message names lines 3 and 1"
cp "$T/q.jsonl" "$T/same.jsonl"
for out in "$T/same.jsonl" "$T/./same.jsonl" "$T/hard.jsonl"; do
    [ "$out" = "$T/hard.jsonl" ] && ln "$T/same.jsonl" "$T/hard.jsonl"
    batch --batch "$T/same.jsonl" --out "$out"
    is "$rc" 2 "--out $(basename "$out") is the questions file: refused (exit 2)"
    like "$(cat "$T/err")" "is the questions file" "and said so"
done
cmp -s "$T/q.jsonl" "$T/same.jsonl"
ok $? "the questions file is unchanged"
printf '%s\n' '{"id":"a","question":"Where is the session flushed?"}' '{"id":"n","note":"no question"}' >"$T/half.jsonl"
batch --batch "$T/half.jsonl" --out "$T/half.out"
is "$rc" 1 "a question without an answer: exit 1"
batch --batch "$T/half.jsonl" --out "$T/half.out"
is "$rc" 1 "and again on resume, while its line in OUT carries an error"
like "$(cat "$T/err")" "1 of them with an error" "the summary says so even with --quiet"
cat "$T/q.jsonl" | "$DRQA" --index "$IDX" --no-progress --quiet --policy offline --batch - --out "$T/pipe1.jsonl" "$R" 2>"$T/err"
is "$?:$(wc -l <"$T/pipe1.jsonl" | tr -d ' ')" "0:2" "--batch - reads the questions from a pipe: $(head -c 160 "$T/err")"
cat "$T/q.jsonl" | "$DRQA" --index "$IDX" --no-progress --quiet --policy offline --batch /dev/stdin --out "$T/pipe2.jsonl" "$R" 2>"$T/err"
is "$?:$(wc -l <"$T/pipe2.jsonl" | tr -d ' ')" "0:2" "--batch /dev/stdin reads a pipe: $(head -c 160 "$T/err")"
"$PYTHON3" -c 'import json
for i in range(40000): print(json.dumps({"id": i, "note": "no question"}))' >"$T/big.jsonl"
batch --batch "$T/big.jsonl" --out "$T/big.out"
is "$rc:$(wc -l <"$T/big.out" | tr -d ' ')" "1:40000" "40k lines without a question: all written, exit 1"
echo '{"id": 39999, "question": "again"}' >>"$T/big.jsonl"
batch --batch "$T/big.jsonl" --out "$T/big2.out"
like "$rc $(cat "$T/err")" "2 drqa-tui: $T/big.jsonl:40001: id 39999 is also the id of line 40000" \
    "a clash after 40k lines is found (exit 2)"

# ---- config: key files others could write; malformed lines never echoed
printf 'api_key = sk-safety-SECRET-1\napi_base = http://127.0.0.1:1/v1\n' >"$CFG"
chmod 666 "$CFG"
"$DRQA" --index "$IDX" --no-progress --policy llm --model m --iterations 1 --ask "x" "$R" >/dev/null 2>"$T/err"
is "$?" 2 "a 0666 config holding api_key is refused (exit 2)"
like "$(cat "$T/err")" "it sets api_key but is writable by everyone (mode 0666)" "the message says why"
like "$(cat "$T/err")" "chmod go-w" "and what to run"
chmod 600 "$CFG"
"$DRQA" --index "$IDX" --no-progress --policy llm --model m --iterations 1 --ask "x" "$R" >/dev/null 2>"$T/err"
is "$?" 1 "at 0600 it is used (the step fails at the refused port 1, exit 1)"
printf 'api_key: sk-safety-SECRET-2\n' >"$CFG"
"$DRQA" --index "$IDX" --no-progress --policy llm --model m --ask "x" "$R" >/dev/null 2>"$T/err"
is "$?:$(count SECRET "$T/err")" "2:0" "a malformed api_key line: exit 2, the value not on stderr"
like "$(cat "$T/err")" "config:1: expected 'key = value' after 'api_key'" "the message names file:line and the key"
rm -f "$CFG"

# ---- url: credentials in the base URL; the path before the query
start_fake '{"default": {"status": 500, "error": "boom"}}'
printf 'retries = 0\n' >"$CFG"
"$DRQA" --index "$IDX" --no-progress --log "$T/log7" --transcript-dir "$T/tr7" --policy llm --model m --iterations 1 \
    --api-base "http://user:KEYUSERINFO@127.0.0.1:$port/v1?api-key=KEYQUERY&x=1" \
    --ask "Where is the session flushed?" "$R" >"$T/out7" 2>"$T/err7"
is "$(cat "$T/err7" "$T/out7" | grep -c 'KEYUSERINFO\|KEYQUERY')" 0 "no URL credential on stderr or stdout"
ok $(grep -q '\[redacted\]' "$T/err7"; echo $?) "stderr shows the URL redacted: $(grep -o 'http://[^ ]*' "$T/err7" | head -1)"
is "$(grep -c 'KEYUSERINFO\|KEYQUERY' "$T/log7")" 0 "none in the --log file ($(wc -l <"$T/log7" | tr -d ' ') lines)"
is "$(cat "$T"/tr7/* | grep -c 'KEYUSERINFO\|KEYQUERY')" 0 "none in the transcripts"
is "$(fake_paths | sort -u)" "/v1/chat/completions?api-key=KEYQUERY&x=1" "chat: the path goes before the query string"
stop_fake
start_fake '{"default": {"content": "{\"answer\": \"no idea\"}"}}'
"$DRQA" --index "$IDX" --no-progress --provider anthropic --api-base "http://127.0.0.1:$port/?key=KEYQUERY" \
    --model m --mode direct --ask "Where is the session flushed?" "$R" >/dev/null 2>&1
is "$(fake_paths | sort -u)" "/v1/messages?key=KEYQUERY" "anthropic: /v1/messages goes before the query string"
stop_fake
start_fake '{"default": {"content": "fine"}, "embed_dim": 8}'
"$DRQA" --index "$T/index-emb.sqlite" --no-progress --quiet --mode rag-function --api-base "http://127.0.0.1:$port/v1" \
    --model m --embed-base "http://127.0.0.1:$port/v1?token=KEYQUERY" --embed-model e \
    --ask "Where is the session flushed?" "$R" >/dev/null 2>"$T/err"
like "$(fake_paths | sort -u | tr '\n' ' ')" "/v1/embeddings?token=KEYQUERY" "embeddings: the path goes before the query string"
stop_fake
rm -f "$CFG"

# ---- glob: a file named with an unclosed '['
R11="$T/repo11"
cp -r "$R" "$R11"
cat >"$R11/tinyweb/flux[cap.py" <<'EOF'
"""The flux capacitor: charges and flushes the temporal buffer."""


class FluxCapacitor:
    def charge_flux(self, gigawatts):
        """Charge the flux capacitor with gigawatts of power."""
        self.level = gigawatts
        return self.level

    def flush_flux(self):
        """Flush the flux capacitor's temporal buffer."""
        self.level = 0
EOF
"$DRQA" --index "$T/index11.sqlite" --no-progress --quiet --policy offline \
    --ask "How does the flux capacitor charge and flush its temporal buffer?" "$R11" >"$T/out11" 2>"$T/err11"
is "$?" 0 "a question about flux[cap.py is answered"
like "$(cat "$T/out11")" 'tinyweb/flux[cap.py:' "citing the file"
is "$(grep -c 'search steps failed' "$T/out11")" 0 "and no search step failed: $(grep -o 'the first: [^_]*' "$T/out11")"

# ---- minor: spans, --action JSON, citations outside, long ids
action() { "$DRQA" --index "$IDX" --no-progress --quiet --action ViewCode "$1" "$R" >"$T/aout" 2>"$T/aerr"; rc=$?; }
action '{"code_span_list": ["tinyweb/app.py:0-0"]}'
is "$rc" 2 "ViewCode app.py:0-0: an error (exit 2)"
like "$(cat "$T/aerr")" "'tinyweb/app.py:0-0': line numbers start at 1" "that says lines start at 1"
action '{"code_span_list": ["tinyweb/app.py:9-3"]}'
is "$rc:$(jget "$T/aout" evidence.0.start_line)-$(jget "$T/aout" evidence.0.end_line)" "0:3-9" "ViewCode app.py:9-3 shows lines 3-9"
like "$(jget "$T/aout" notes)" "is read as lines 3-9" "with a note saying so"
action '{"code_span_list": ["tinyweb/app.py:1-3"]} trailing'
is "$rc" 2 "--action with text after the JSON: exit 2"
like "$(cat "$T/aerr")" "unexpected text after the object at byte 44 ('trailing')" "naming the byte"
start_fake '{"default": {"content": "It is flushed in tinyweb/app.py:1-3, ../outside/secret.py:4-9 and /etc/passwd:1 here."}}'
"$DRQA" --index "$IDX" --no-progress --quiet --mode direct --api-base "http://127.0.0.1:$port/v1" --model m \
    --ask "Where is the session flushed?" "$R" >"$T/out12" 2>&1
stop_fake
is "$(grep -c 'app.py:1-3\|outside/secret.py\|/etc/passwd' "$T/out12")" 0 \
    "direct mode: citations inside and outside the repository are all removed"
like "$(cat "$T/out12")" "3 file:line references it gave could not have been read and were removed" "and counted"
long=$("$PYTHON3" -c 'print("q" * 300)')
printf '{"id":"%s","question":"Where is the session flushed?"}\n' "$long" >"$T/long.jsonl"
batch --batch "$T/long.jsonl" --out "$T/long.out" --transcript-dir "$T/trl"
is "$rc:$(jget "$T/long.out" error)" "0:None" "a 300-character id is answered (exit 0, no error)"
name=$(ls "$T/trl" | grep '\.json$')
ok $([ ${#name} -le 69 ] && case $name in qqqq*-????????????????.json) true ;; *) false ;; esac; echo $?) \
    "its transcript has a short name ending in a hash: $name"

echo "1..$n"
exit $fail
