#!/bin/sh
# End-to-end tests of --ask on the pyrepo fixture with the offline policy: the
# Markdown answer and its citations (each a real span of its file), the --json
# object's exact keys, every mode and ablation, the same output for the same
# seed, the policy line on stderr, and clear errors with non-zero status.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
R="$top_srcdir/tests/fixtures/pyrepo"
. "$top_srcdir/tests/lib.sh"

# ask ARGS...: stdout in $T/out, stderr in $T/err, status in $rc
ask() { "$DRQA" --index "$T/index.sqlite" --no-progress --policy offline "$@" >"$T/out" 2>"$T/err"; rc=$?; }
# q EXPR: a Python expression over the JSON result d
q() { "$PYTHON3" -c "import json,sys; d=json.load(open('$T/out')); r=($1); print(r if isinstance(r, str) else repr(r))"; }

Q="What happens to the session when a user logs out?"
ask --ask "$Q" "$R"
is "$rc" 0 "--ask exits 0"
is "$(grep -c '^\*\*Citations:\*\*' "$T/out")" 1 "the answer lists its citations"
is "$(cat "$T/err")" "drqa-tui: policy: offline (--policy offline)" "the policy line on stderr"
# every cited span lies within its file
"$PYTHON3" - "$T/out" "$R" >"$T/check" <<'EOF'
import re, sys
text = open(sys.argv[1]).read().split("**Citations:**", 1)[1]
spans = re.findall(r"^- `([^`:]+):(\d+)-(\d+)`", text, re.M)
bad = [s for s in spans if int(s[1]) < 1 or int(s[2]) < int(s[1]) or
       len(open(sys.argv[2] + "/" + s[0]).read().splitlines()) < int(s[2])]
print(len(spans) > 0 and not bad, spans[0][0] if spans else "")
EOF
is "$(cut -d' ' -f1 "$T/check")" "True" "the citations are real spans of their files"
case "$(cut -d' ' -f2 "$T/check")" in
tinyweb/sessions/base.py|tinyweb/auth.py) ok 0 "the first citation is the session or auth module";;
*) ok 1 "the first citation is the session or auth module: $(cat "$T/check")";;
esac
cp "$T/out" "$T/first.md"
# the first question stored what later ones read (vectors, names) through a
# connection of its own; it leaves none of it in the WAL for the next process
is "$(wc -c <"$T/index.sqlite-wal" 2>/dev/null || echo 0)" 0 "the first question leaves the index's WAL empty"

ask --quiet --seed 1 --ask "$Q" "$R"
is "$(cat "$T/err")" "" "--quiet: nothing on stderr"
cmp -s "$T/out" "$T/first.md"
ok $? "the same seed gives the same answer"

ask --quiet --json --ask "$Q" "$R"
is "$rc" 0 "--json exits 0"
is "$(q "list(d.keys())")" \
   "['id', 'question', 'answer', 'citations', 'evidence', 'mode', 'policy', 'repo_name', 'iterations', 'tokens', 'wall_ms', 'stop_reason', 'fallback_steps', 'failed_steps', 'commit', 'dirty', 'error', 'answered_by', 'model_calls', 'failed_calls', 'verified_citations', 'uncited']" \
   "the batch-line keys, in order"
is "$(q "d['id'], d['question'] == '$Q', d['mode'], d['policy'], d['error'], sorted(d['tokens'].items())")" \
   "(1, True, 'mcts', 'offline', None, [('input', 0), ('output', 0)])" "id, question, mode, policy, no error, no tokens"
is "$(q "all(sorted(c) == ['end_line', 'path', 'start_line', 'text_hash'] for c in d['citations']) and len(d['citations']) > 0")" \
   "True" "citations: path, start_line, end_line, text_hash"
is "$(q "all(sorted(e) == ['end_line', 'path', 'start_line', 'text'] for e in d['evidence']) and len(d['evidence']) > 0")" \
   "True" "evidence: path, lines and text"
is "$(q "all(any(e['path'] == c['path'] and e['start_line'] <= c['start_line'] and c['end_line'] <= e['end_line'] for e in d['evidence']) for c in d['citations'])")" \
   "True" "every citation lies within the evidence"
is "$(q "0 < d['iterations'] <= 15 and isinstance(d['wall_ms'], int) and d['answer'].startswith('**In short:**') and d['answer'].split(chr(10) + chr(10))[1].startswith('What')")" "True" \
   "iterations, wall time, the head and a what-answer"

# every mode and ablation
for m in rag-function rag-window; do
    ask --quiet --json --mode $m --ask "Where is the URL pattern compiled into a regular expression?" "$R"
    is "$rc:$(q "d['mode'], d['error'], d['iterations'], d['citations'][0]['path']")" \
       "0:('$m', None, 0, 'tinyweb/routing.py')" "--mode $m cites routing.py first"
done
ask --quiet --json --mode direct --ask "$Q" "$R"
is "$rc:$(q "d['mode'], d['citations'], d['evidence'], d['answer'].startswith('No answer: direct mode')")" \
   "0:('direct', [], [], True)" "--mode direct says honestly it has no context and cites nothing"
for a in --no-mcts --no-perception --no-evaluation --no-semantic; do
    ask --quiet --json $a --ask "How does App.dispatch_request find the view function?" "$R"
    is "$rc:$(q "d['error'], d['citations'][0]['path'], d['iterations'] > 0")" "0:(None, 'tinyweb/app.py', True)" \
       "$a runs and cites app.py first"
done
ask --quiet --json --no-semantic --transcript-dir "$T/tr" --ask "How are expired sessions detected?" "$R"
is "$rc" 0 "--no-semantic on a conceptual question"
is "$("$PYTHON3" -c "
import json, glob
t = json.load(open(glob.glob('$T/tr/*.json')[0]))
print(any(n.get('action') == 'SemanticSearch' for n in t['nodes']), t['config']['no_semantic'])")" \
   "False True" "--no-semantic never runs SemanticSearch; the transcript records the ablation"
is "$(ls "$T/tr" | sed -E 's/^drqa-[0-9]{8}-[0-9]{6}-[0-9a-f]{8}\./drqa-STAMP-HASH./' | sort | tr '\n' ' ')" \
   "drqa-STAMP-HASH.json drqa-STAMP-HASH.md " "a JSON and a Markdown transcript"

# errors
ask --ask "$Q" "$T/no-such-repo"
is "$rc" 2 "a missing repository: status 2"
grep -q "no-such-repo' does not exist" "$T/err"
ok $? "the message names the repository: $(cat "$T/err")"
ask --ask "$R" "$Q"
is "$rc" 2 "the repository given to --ask, the question last: status 2"
grep -q -- "--ask takes the question; the repository comes last: drqa-tui --ask \"$Q\" $R" "$T/err"
ok $? "the message gives the order that works: $(cat "$T/err")"
ask "$Q" "$R"
is "$rc" 2 "the question before the repository: status 2"
grep -q "the repository comes first, then the question: drqa-tui $R \"$Q\"" "$T/err"
ok $? "the message gives the order that works: $(cat "$T/err")"
ask --mode nonsense --ask "$Q" "$R"
is "$rc" 2 "an unknown mode: status 2"
grep -q "'nonsense'" "$T/err"
ok $? "the message names the mode"
ask --ask "?? !" "$R"
is "$rc" 1 "a question without words: status 1"
grep -q "no words to look for" "$T/err"
ok $? "the message says why"

# Text cut short for the reports (a query in "siblings tried: ...", a code
# line, a signature) is cut between characters: with a question of
# full-width letters, whatever the byte offset of the cut, the transcript,
# the --json answer and the Markdown stay valid UTF-8.
for pad in "" x xy; do
    ask --quiet --json --transcript-dir "$T/u8$pad" \
        --ask "How does the router match ${pad}ｒｏｕｔｅ ｐａｔｔｅｒｎｓ ａｇａｉｎｓｔ ｔｈｅ ｒｅｑｕｅｓｔ ｐａｔｈ？" "$R"
    "$PYTHON3" - "$T/out" "$T/u8$pad" >"$T/check" 2>&1 <<'EOF'
import glob, json, sys
files = [sys.argv[1]] + sorted(glob.glob(sys.argv[2] + "/*"))
for f in files:
    if f.endswith(".md"):
        open(f, encoding="utf-8").read()
    else:
        json.load(open(f, encoding="utf-8"))
print(len(files))
EOF
    is "$(cat "$T/check")" 3 "full-width question, offset ${#pad}: answer and transcripts are valid UTF-8"
done

# ---- a class outline is cited as what was seen of it --------------------------------
# FindClass on a large class shows its outline (bodies elided); when the answer
# lists that span, the span is among the citations, its evidence the outline,
# and every span the answer lists is cited.
B="$T/bigrepo"
mkdir -p "$B/pkg"
: >"$B/pkg/__init__.py"
ledger_class >"$B/pkg/ledger.py"
printf 'from .ledger import Ledger\n\ndef report(l):\n    """Print a report of the ledger."""\n    return l.post_1(3)\n' \
    >"$B/pkg/report.py"
"$DRQA" --index "$T/big.sqlite" --no-progress --policy offline --json \
    --ask "What does the Ledger class keep and how does it settle accounts?" "$B" >"$T/out" 2>"$T/err"
is "$?" 0 "--ask on a repository with a large class exits 0"
is "$(q "[c['start_line'] for c in d['citations'] if c['path'] == 'pkg/ledger.py' and c['end_line'] == 482]")" "[1]" \
   "the outline of the whole class (lines 1-482) is cited"
is "$(q "[('elided' in e['text'], 'Keeps accounts' in e['text']) for e in d['evidence'] if e['path'] == 'pkg/ledger.py' and e['end_line'] == 482]")" \
   "[(True, True)]" "its evidence is the outline: docstring kept, bodies elided"
is "$(q "sorted(set(__import__('re').findall(r'^\\d+\\. \x60([^\x60]+)\x60', d['answer'], __import__('re').M)) - set('%s:%d-%d' % (c['path'], c['start_line'], c['end_line']) for c in d['citations']))")" \
   "[]" "every span the answer lists is among its citations"

echo "1..$n"
exit $fail
