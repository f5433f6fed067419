#!/bin/sh
# The offline answer reads as an answer: its first line states what the code
# shows (the definition that does it, what calls it, which setting controls
# it), each claim with a [n] citation, and [n] is the n-th entry of the
# citation list, as is every numbered span of the body ("n. `path:a-b`").
# Checked on the pyrepo fixture and on a generated repository whose large
# class is seen both as an outline and verbatim: a cited outline whose lines
# were also read verbatim is verified as those lines, and must not then hold
# another citation's lines (the body numbered ten spans, the list seven, on
# the setting question below).
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
R="$top_srcdir/tests/fixtures/pyrepo"
. "$top_srcdir/tests/lib.sh"

# ask REPO QUESTION: the --json line in $T/out, status in $rc
ask() { "$DRQA" --index "$T/$(basename "$1").sqlite" --no-progress --quiet --policy offline --json --ask "$2" "$1" \
        >"$T/out" 2>"$T/err"; rc=$?; }

# agree: "ok" when the body's numbered spans are the citations in order and
# the head has claims and every [n] of it names an entry of the list; else
# what disagrees
agree() {
    "$PYTHON3" - "$T/out" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
cites = ["%s:%d-%d" % (c["path"], c["start_line"], c["end_line"]) for c in d["citations"]]
items = re.findall(r"^(\d+)\. `([^`]+)`", d["answer"], re.M)
head = d["answer"].split("\n", 1)[0]
refs = [int(n) for n in re.findall(r"\[(\d+)\]", head)] if head.startswith("**In short:**") else []
bad = []
if [int(n) for n, _ in items] != list(range(1, len(items) + 1)):
    bad.append("items not numbered 1..%d" % len(items))
if [s for _, s in items] != cites:
    bad.append("%d numbered spans %s, %d citations %s" % (len(items), [s for _, s in items], len(cites), cites))
if not refs or any(n < 1 or n > len(cites) for n in refs):
    bad.append("[n] %s against %d citations" % (refs, len(cites)))
print("; ".join(bad) or "ok")
EOF
}

# head: the first line's claims as "NAME PATH N" (the first definition the
# head names, in its file, and its [n]), then whether citation N is that
# definition's span
head_claim() {
    "$PYTHON3" - "$T/out" "$1" "$2" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
first = d["answer"].split("\n", 1)[0]
m = re.search(r"`([\w.]+)` in `([^`]+)` \[(\d+)\]", first)
if not first.startswith("**In short:**") or not m:
    print("no head: " + first[:200]); sys.exit()
name, path, n = m.group(1), m.group(2), int(m.group(3))
c = d["citations"][n - 1] if 0 < n <= len(d["citations"]) else None
want_path, want_line = sys.argv[2], int(sys.argv[3])
print(name, path, "cited" if c and c["path"] == path == want_path and c["start_line"] <= want_line <= c["end_line"]
      else "not cited as %s:%d (%r)" % (want_path, want_line, c))
EOF
}

ask "$R" "How does the router build a URL for an endpoint?"
is "$rc" 0 "--ask exits 0"
is "$(head_claim tinyweb/routing.py 162)" "Router.build tinyweb/routing.py cited" \
   "the head names Router.build, the defining function, with the citation of its span"
case "$("$PYTHON3" -c "import json; print(json.load(open('$T/out'))['answer'].split(chr(10))[0])")" in
*"called by \`Router.build_external\` ["[0-9]*"]"*) ok 0 "the head says what calls it, with a citation" ;;
*) ok 1 "the head says what calls it, with a citation: $(head -c 300 "$T/out")" ;;
esac
is "$(agree)" ok "[n] and the numbered spans agree with the citation list"

ask "$R" "Which setting turns on debug mode in the app?"
is "$(head_claim tinyweb/app.py 30)" "App.__init__ tinyweb/app.py cited" "the head names the code reading the setting"
case "$("$PYTHON3" -c "import json; print(json.load(open('$T/out'))['answer'].split(chr(10))[0])")" in
*"The setting \`debug\` controls it: \`tinyweb/app.py:30\` [1]"*) ok 0 "the head names the setting and where it is read" ;;
*) ok 1 "the head names the setting and where it is read: $(head -c 300 "$T/out")" ;;
esac
is "$(agree)" ok "[n] agree with the citation list (setting question)"
# the same code asked of without a word of configuration: no setting is said
# to control it (the question may be about anything the code reads it beside)
ask "$R" "How is debug mode turned on in the app?"
case "$("$PYTHON3" -c "import json; print(json.load(open('$T/out'))['answer'].split(chr(10))[0])")" in
*"controls it"*) ok 1 "a question that asks of no setting is told of none: $(head -c 300 "$T/out")" ;;
*) ok 0 "a question that asks of no setting is told of none" ;;
esac

for q in "What happens to the session when a user logs out?" "Where is the URL pattern compiled into a regular expression?" \
         "Why does the router freeze its rules?" "What is the purpose of the Base class?"; do
    ask "$R" "$q"
    is "$rc:$(agree)" "0:ok" "[n] agree with the citation list: $q"
done

# a large class: its outline and its methods read verbatim
B="$T/bigrepo"
mkdir -p "$B/pkg"
: >"$B/pkg/__init__.py"
{
    ledger_class
    printf '    def settle(self):\n        """Settle every account of the ledger."""\n        return self.post_1(0)\n'
} >"$B/pkg/ledger.py"
printf 'from .ledger import Ledger\n\ndef report(l):\n    """Print a report of the ledger."""\n    return l.settle()\n' \
    >"$B/pkg/report.py"
for q in "What does the Ledger class keep and how does it settle accounts?" "How does the ledger settle accounts?" \
         "Where is a report of the ledger printed?"; do
    ask "$B" "$q"
    is "$rc:$(agree)" "0:ok" "[n] agree with the citation list on a large class: $q"
done

echo "1..$n"
exit $fail
