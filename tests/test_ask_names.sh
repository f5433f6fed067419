#!/bin/sh
# test_ask_names.sh: transcript file names (pyrepo fixture, offline policy).
# --ask names its transcript drqa-YYYYmmdd-HHMMSS-HASH.{json,md}, as the
# front end does, and asking the same question again (within the same
# second too) writes a new pair instead of replacing the first; --batch ids
# that differ only in characters a file name cannot hold (a/b, a b) and the
# id they would all turn into (a_b) get three distinct safe names.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
R="$top_srcdir/tests/fixtures/pyrepo"
. "$top_srcdir/tests/lib.sh"
run() { "$DRQA" --index "$T/index.sqlite" --no-progress --policy offline --quiet --iterations 2 "$@" "$R" 2>>"$T/err"; }

Q="How are URL rules registered?"
run --transcript-dir "$T/ask" --ask "$Q" >/dev/null
run --transcript-dir "$T/ask" --ask "$Q" >/dev/null
ls "$T/ask" >"$T/names"
sed 's/^/# /' "$T/names"
[ "$(grep -c -E '^drqa-[0-9]{8}-[0-9]{6}-[0-9a-f]{8}(-[0-9]+)?\.json$' "$T/names")" -eq 2 ] &&
    [ "$(grep -c -E '^drqa-[0-9]{8}-[0-9]{6}-[0-9a-f]{8}(-[0-9]+)?\.md$' "$T/names")" -eq 2 ] &&
    [ "$(wc -l <"$T/names")" -eq 4 ]
ok $? "--ask twice: two drqa-YYYYmmdd-HHMMSS-HASH pairs, the first not replaced"
"$PYTHON3" - "$T/ask" "$Q" <<'PY'
import json, os, sys
d = sys.argv[1]
qs = [json.load(open(os.path.join(d, f)))["question"] for f in sorted(os.listdir(d)) if f.endswith(".json")]
assert qs == [sys.argv[2]] * 2, qs
PY
ok $? "both JSON transcripts are whole and hold the question"

printf '%s\n' '{"id": "a/b", "question": "How are URL rules registered?"}' \
    '{"id": "a_b", "question": "Where is the session cookie signed?"}' \
    '{"id": "a b", "question": "What does dispatch_request do?"}' \
    '{"id": "../up", "question": "What does dispatch_request do?"}' >"$T/in.jsonl"
run --batch "$T/in.jsonl" --out "$T/out.jsonl" --transcript-dir "$T/batch" >/dev/null
ls "$T/batch" >"$T/bnames"
sed 's/^/# /' "$T/bnames"
[ "$(grep -c '\.json$' "$T/bnames")" -eq 4 ] && [ "$(grep -c '\.md$' "$T/bnames")" -eq 4 ] &&
    ! grep -q '[/ ]' "$T/bnames" && [ -z "$(find "$T" -maxdepth 1 -name '*.md')" ]
ok $? "batch ids a/b, a_b, a b and ../up: four distinct transcript pairs, safe names, none outside the directory"
"$PYTHON3" - "$T/batch" <<'PY'
import json, os, sys
d = sys.argv[1]
qs = sorted(json.load(open(os.path.join(d, f)))["question"] for f in os.listdir(d) if f.endswith(".json"))
assert qs == sorted(["How are URL rules registered?", "Where is the session cookie signed?",
                     "What does dispatch_request do?", "What does dispatch_request do?"]), qs
PY
ok $? "each transcript holds its own question"
echo "1..$n"
exit $fail
