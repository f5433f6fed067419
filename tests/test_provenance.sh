#!/bin/sh
# test_provenance.sh: the index records HEAD's commit and whether the work
# tree differed from it, and every answer carries it: --index-only (text and
# JSON), --ask --json, --batch lines and transcripts. Outside git: null.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
git_private

R="$T/repo"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$R"
chmod -R u+w "$R"
git -C "$R" init -q && git -C "$R" add -A && git -C "$R" commit -qm one
C1=$(git -C "$R" rev-parse HEAD)
idx() { "$DRQA" --json --no-progress --index "$T/i.sqlite" --index-only "$R" >"$T/out.json" 2>"$T/err.txt"; }
idx
is "$(jget "$T/out.json" commit) $(jget "$T/out.json" dirty)" "$C1 false" "--index-only --json: HEAD's commit, clean"
like "$("$DRQA" --no-progress --index "$T/i.sqlite" --index-only "$R")" "commit       $C1" "--index-only prints the commit"

echo '# edited' >>"$R/tinyweb/app.py"
idx
is "$(jget "$T/out.json" commit) $(jget "$T/out.json" dirty)" "$C1 true" "an edited tracked file makes the tree dirty"
like "$("$DRQA" --no-progress --index "$T/i.sqlite" --index-only "$R")" "$C1 (dirty" "and the text says so"

git -C "$R" commit -qam two
C2=$(git -C "$R" rev-parse HEAD)
idx
is "$(jget "$T/out.json" files.parsed) $(jget "$T/out.json" commit) $(jget "$T/out.json" dirty)" "0 $C2 false" \
   "a commit with no file changed is recorded too (nothing re-parsed)"
# answers
"$DRQA" --quiet --no-progress --index "$T/i.sqlite" --policy offline --json --transcript-dir "$T/tr" \
    --ask "How does App.dispatch_request find the view function?" "$R" >"$T/ask.json" 2>"$T/err.txt"
is "$(jget "$T/ask.json" commit) $(jget "$T/ask.json" dirty)" "$C2 false" "--ask --json carries the commit"
is "$($PYTHON3 -c 'import json, glob, sys
t = json.load(open(glob.glob(sys.argv[1] + "/*.json")[0]))
print(t["config"]["commit"], t["config"]["dirty"])' "$T/tr")" "$C2 False" "the transcript's settings carry the commit"
printf '{"id": "q1", "question": "How does App.dispatch_request find the view function?"}\n' >"$T/in.jsonl"
"$DRQA" --quiet --no-progress --index "$T/i.sqlite" --policy offline --batch "$T/in.jsonl" --out "$T/out.jsonl" \
    "$R" 2>"$T/err.txt"
is "$($PYTHON3 -c 'import json, sys
d = json.loads(open(sys.argv[1]).readline())
print(d["commit"], d["dirty"])' "$T/out.jsonl")" "$C2 False" "--batch lines carry the commit"

echo 'X = 1' >"$R/new_module.py"
idx
is "$(jget "$T/out.json" dirty)" "true" "an untracked file git does not ignore makes the tree dirty"

# outside git
P="$T/plain"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$P"
"$DRQA" --json --no-progress --index "$T/p.sqlite" --index-only "$P" >"$T/out.json" 2>"$T/err.txt"
is "$(jget "$T/out.json" commit) $(jget "$T/out.json" dirty)" "None None" "outside git: no commit"
"$DRQA" --quiet --no-progress --index "$T/p.sqlite" --policy offline --json \
    --ask "How does App.dispatch_request find the view function?" "$P" >"$T/ask.json" 2>"$T/err.txt"
is "$(jget "$T/ask.json" commit)" "None" "outside git: the answer's commit is null"
echo "1..$n"
exit $fail
