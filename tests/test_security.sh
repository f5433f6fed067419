#!/bin/sh
# Security properties of the headless modes, on a copy of the pyrepo fixture
# with hostile additions:
#  - confinement: no action reads outside the repository, whatever the path
#    ('..', absolute, symlinks out, file_pattern) -- ViewCode, Outline,
#    ListFiles and FindCodeSnippet's file_pattern are tried with paths to a
#    secret file next to the repository and to /etc/passwd;
#  - terminal escapes: a source file holding ESC, BEL, DEL and the C1 CSI
#    (U+009B) never reaches stdout or stderr raw: --action prints JSON with
#    control characters escaped, and --ask's Markdown/JSON likewise;
#  - API keys: with DRQA_API_KEY set (and a config file holding a key),
#    --index-only, --action and --ask (offline and --policy llm against
#    tests/fake_llm.py) never write the key to stdout, stderr, the log, the
#    index, the transcripts or any file under the temp HOME/XDG dirs;
#  - permissions: the index and transcripts are created owner-only.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
mkdir -p "$XDG_CONFIG_HOME"

R="$T/repo"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$R"
echo 'def outside_secret(): return "TOPSECRET-outside"' >"$T/outside_secret.py"
mkdir "$T/outdir" && echo 'def also_secret(): return "TOPSECRET-dir"' >"$T/outdir/hidden.py"
ln -s ../outside_secret.py "$R/link_out.py"
ln -s ../outdir "$R/link_dir"
ln -s /etc/passwd "$R/passwd.py"
# a file whose text carries terminal control sequences: clear screen, OSC 52
# (clipboard write), BEL, DEL, and U+009B (the C1 CSI, as UTF-8)
printf 'def escapist():\n    """Clears \033[2J the \033]52;c;cHduZWQ=\007 screen \177 and \302\2331m more."""\n    return "\033[31mred\033[0m"\n' \
    >"$R/tinyweb/escapes.py"
IDX="$T/state/index.sqlite"

# act NAME JSON: stdout $T/out, stderr $T/err, status $rc
act() { "$DRQA" --index "$IDX" --no-progress --action "$1" "$2" "$R" >"$T/out" 2>"$T/err"; rc=$?; }
leaks() { cat "$T/out" "$T/err" | grep -c 'TOPSECRET\|root:x:0'; }

# --- confinement
for p in "../outside_secret.py" "$T/outside_secret.py" "tinyweb/../../outside_secret.py" "/etc/passwd" \
         "link_out.py" "link_dir/hidden.py" "passwd.py" "./../outdir/hidden.py" "tinyweb/../../../../../../etc/passwd" \
         "link_dir" "$T/outdir"; do
    act ViewCode "{\"code_span_list\":[\"$p\"]}"
    is "$rc:$(leaks)" "2:0" "ViewCode '$p' is refused (exit 2), nothing outside is read"
    act Outline "{\"path\":\"$p\"}"
    is "$rc:$(leaks)" "2:0" "Outline '$p' is refused (exit 2), nothing outside is read"
done
for pat in "../*" "../**" "/etc/*" "$T/*" "**/../*" "link_dir/*" "link_out.py" "../outdir/**" "*passwd*"; do
    act ListFiles "{\"file_pattern\":\"$pat\"}"
    # exit 0 with a listing, or 2 when the pattern matches no file
    is "$(leaks):$(grep -c 'outside_secret\|hidden.py\|passwd' "$T/out")" "0:0" \
       "ListFiles file_pattern '$pat' lists nothing outside the repository (exit $rc)"
    act FindCodeSnippet "{\"code_snippet\":\"TOPSECRET\",\"file_pattern\":\"$pat\"}"
    is "$(leaks)" 0 "FindCodeSnippet file_pattern '$pat' finds nothing outside"
done
act FindCodeSnippet '{"code_snippet":"root:x:0"}'
is "$(leaks)" 0 "FindCodeSnippet over the whole index finds no /etc/passwd text"
act FindFunction '{"function_name":"outside_secret"}'
is "$rc:$(leaks)" "0:0" "a function defined outside, reached by a symlink, is not indexed"

# model-sized numbers (a signed overflow found by fuzz/fuzz_action; the sanitizer stage catches a relapse)
act ViewCode '{"code_span_list":["tinyweb/auth.py:0-99999999999","tinyweb/auth.py:99999999999999999999"]}'
is "$rc:$(leaks)" "0:0" "ViewCode with line numbers of many digits: clamped, exit 0"

# --- terminal escapes
ctl() { "$PYTHON3" - "$@" <<'PY'
import sys
bad = 0
for f in sys.argv[1:]:
    b = open(f, 'rb').read()
    t = b.decode('utf-8', 'replace')
    bad += sum(1 for c in t if (ord(c) < 32 and c not in '\n\t') or 0x7f <= ord(c) <= 0x9f)
print(bad)
PY
}
act ViewCode '{"code_span_list":["tinyweb/escapes.py"]}'
is "$rc" 0 "ViewCode of the file with escapes succeeds"
is "$(ctl "$T/out" "$T/err")" 0 "ViewCode: no raw control character on stdout or stderr"
"$PYTHON3" -c "import json; d=json.load(open('$T/out')); assert '\x1b[2J' in d['evidence'][0]['text'] and '\x9b' in d['evidence'][0]['text']"
ok $? "ViewCode: the escapes are kept, as JSON escapes (the text is exact)"
act FindCodeSnippet '{"code_snippet":"return \"\u001b[31mred"}'
is "$rc:$(ctl "$T/out" "$T/err")" "0:0" "FindCodeSnippet of an escape: no raw control character"
act FindFunction '{"function_name":"escapist"}'
is "$rc:$(ctl "$T/out" "$T/err")" "0:0" "FindFunction with the docstring: no raw control character"
act SemanticSearch '{"query":"clears the screen escapist"}'
is "$rc:$(ctl "$T/out" "$T/err")" "0:0" "SemanticSearch: no raw control character"
act ViewCode "{\"code_span_list\":[\"tinyweb/\u001b[2Jnope.py\"]}"
is "$rc:$(ctl "$T/out" "$T/err")" "2:0" "an error message naming a path with an escape: no raw control character"
"$DRQA" --index "$IDX" --no-progress --iterations 3 --ask "What does escapist return and what does its docstring clear?" "$R" \
    >"$T/out" 2>"$T/err"
rc=$?
is "$rc" 0 "--ask about the file with escapes succeeds"
grep -q escapes.py "$T/out"
ok $? "--ask: the answer cites the file"
is "$(ctl "$T/out" "$T/err")" 0 "--ask Markdown: no raw control character on stdout or stderr"
"$DRQA" --index "$IDX" --no-progress --iterations 3 --json --ask "What does escapist return?" "$R" >"$T/out" 2>"$T/err"
is "$?:$(ctl "$T/out" "$T/err")" "0:0" "--ask --json: no raw control character"

# --- API keys
KEY=sk-test-SECRETsecurity0123456789
mkdir -p "$XDG_CONFIG_HOME/drqa-tui" && printf 'api_key = %s\nretries = 0\n' "$KEY" >"$XDG_CONFIG_HOME/drqa-tui/config"
export DRQA_API_KEY="$KEY" OPENAI_API_KEY="$KEY" ANTHROPIC_API_KEY="$KEY"
I2="$T/state/keyed.sqlite"
"$DRQA" --index "$I2" --no-progress --log "$T/state/drqa.log" --index-only "$R" >"$T/k1.out" 2>"$T/k1.err"
is "$?" 0 "--index-only with a key in the environment"
"$DRQA" --index "$I2" --no-progress --log "$T/state/drqa.log" --action FindClass '{"class_name":"App"}' "$R" \
    >"$T/k2.out" 2>"$T/k2.err"
is "$?" 0 "--action with a key in the environment"
"$DRQA" --index "$I2" --no-progress --log "$T/state/drqa.log" --action ViewCode '{"code_span_list":["../x"]}' "$R" \
    >"$T/k3.out" 2>"$T/k3.err"
is "$?" 2 "an --action error with a key in the environment"
cat >"$T/script.json" <<'JSON'
{"rules": [
 {"match": "You are the Planning Agent", "content": "{\"action\": \"Finish\", \"args\": {\"answer\": \"see app.py\", \"finish_reason\": \"found\"}}"},
 {"match": "You are the Answer Agent", "content": "{\"answer\": \"`App` is in `tinyweb/app.py:22-85`.\"}"}
],
 "default": {"fault": "echo_key"}}
JSON
fake_start "$T/script.json" "$T/state/fake.jsonl"
"$DRQA" --index "$I2" --no-progress --log "$T/state/drqa.log" --ask "Where is App defined?" --policy llm \
    --api-base "http://127.0.0.1:$port/v1" --model fake-model --iterations 3 --transcript-dir "$T/state/tr" \
    "$R" >"$T/k4.out" 2>"$T/k4.err"
rc=$?
# the perception replies are 401s that echo the key: every step fails, which
# --ask reports on stderr with exit 1 (the message is checked for the key below)
is "$rc" 1 "--ask --policy llm with the key against the fake (some replies echo the key back in a 401): every step failed"
grep -q '^drqa-tui: every step of the search failed' "$T/k4.err"
ok $? "and stderr says so"
grep -c "$KEY" "$T/state/fake.jsonl" >"$T/sent"
ok $([ "$(cat "$T/sent")" -gt 0 ] && echo 0 || echo 1) "the key was sent to the server (so the check below means something)"
"$DRQA" --index "$I2" --no-progress --log "$T/state/drqa.log" --ask "Where is App defined?" --policy llm \
    --api-base "http://127.0.0.1:1/v1" --model fake-model --iterations 2 --transcript-dir "$T/state/tr" \
    "$R" >"$T/k5.out" 2>"$T/k5.err"
# a server never reached stops the search: exit 3 (no model call succeeded)
# and an error naming the server, a message the key check below then covers
is "$?" 3 "--ask against a refused connection: the search stops, exit 3"
grep -q '^drqa-tui: no model call succeeded.*cannot connect to http://127\.0\.0\.1:1/' "$T/k5.err"
ok $? "and stderr names the server it could not reach"
fake_stop
rm "$T/state/fake.jsonl"
rm -r "$XDG_CONFIG_HOME"
found=$(grep -rl "$KEY" "$T" 2>/dev/null | grep -v "^$T/repo/" | sed "s|^$T/||" | tr '\n' ' ')
is "$found" "" "the key is in no output, error message, log, index, transcript or file under HOME/XDG"
ls "$T/state/tr/"*.json >/dev/null 2>&1
ok $? "transcripts were written (and searched)"

# --- permissions
perm() { stat -c '%a' "$1"; }
is "$(perm "$IDX")" 600 "the index file is owner-only (0600)"
is "$(perm "$T/state")" 700 "the index directory it created is owner-only (0700)"
for f in "$T/state/tr/"*; do
    is "$(perm "$f")" 600 "transcript $(basename "$f") is owner-only (0600)"
done
is "$(perm "$T/state/tr")" 700 "the transcript directory it created is owner-only (0700)"
"$DRQA" --no-progress --index-only "$R" >/dev/null 2>&1
def=$(find "$XDG_CACHE_HOME" "$HOME" -name '*.sqlite' 2>/dev/null | head -1)
ok $([ -n "$def" ] && echo 0 || echo 1) "the default index location is under XDG_CACHE_HOME or HOME ($def)"
[ -n "$def" ] && is "$(perm "$def"):$(perm "$(dirname "$def")")" "600:700" "the default index and its directory are owner-only"

echo "1..$n"
exit $fail
