#!/bin/sh
# test_tree_truth.sh: what the search says about itself is true, over several
# questions on the fixture repositories (offline policy, transcripts read by
# tests/tree_truth.py):
#   - no node has two children with one action (normalised arguments; a
#     Finish is one action): with a finish threshold no Finish reaches, the
#     search goes on under finished leaves, where repeats used to pile up;
#   - every citation is read by a node the answer names (the best path, or
#     the nodes off it its Evidence line lists);
#   - coverage and what is missing are stated alike by a node's feedback and
#     its children's reports, and never 100% beside a missing term;
#   - a one-letter name the index defines is a question ("What is g?"): the
#     answer cites its definition, no step fails;
#   - a variable the question names ('g', USER_KEY) is the head's subject:
#     where it is defined, numbered with that citation.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
CHECK="$PYTHON3 $top_srcdir/tests/tree_truth.py"
ask() {   # REPO DIR QUESTION ARGS...
    repo=$1 dir=$2 q=$3
    shift 3
    "$DRQA" --index "$T/$(basename "$repo").sqlite" --no-progress --policy offline --quiet \
        --transcript-dir "$T/$dir" "$@" --ask "$q" "$repo" >"$T/out" 2>>"$T/err"
}
PY="$top_srcdir/tests/fixtures/pyrepo"
MIXED="$top_srcdir/tests/fixtures/mixed"
for q in "Where is the URL pattern compiled into a regular expression?" \
    "What happens to the session when a user logs out?" "How are URL rules registered?" \
    "How are sessions stored?" "Why does the router freeze its rules?"; do
    ask "$PY" tr "$q" --iterations 40 --finish-threshold 99
    ask "$PY" tr "$q" --iterations 15 --seed 3
done
for q in "How does the Go server handle a request?" "Where are Java records validated?"; do
    ask "$MIXED" tr "$q" --iterations 30 --finish-threshold 99
done
ls "$T"/tr/*.json >"$T/list"
[ "$(wc -l <"$T/list")" -eq 12 ]
ok $? "twelve transcripts written"

for c in siblings evidence coverage; do
    $CHECK $c $(cat "$T/list") >"$T/$c" 2>&1
    st=$?
    sed 's/^/# /' "$T/$c" | head -8
    case $c in
    siblings) what="no node has two children with one action" ;;
    evidence) what="every citation is read by a node the answer names" ;;
    coverage) what="feedback and reports state one coverage, never 100% beside a missing term" ;;
    esac
    ok $st "$what"
done

# a one-letter module-level name
G="$T/grepo"
mkdir -p "$G/pkg"
printf 'from .globals import g\n' >"$G/pkg/__init__.py"
printf 'class _Globals:\n    """Holds data for one request."""\n\n\ndef _make():\n    return _Globals()\n\n\ng = _make()\n' \
    >"$G/pkg/globals.py"
printf 'from .globals import g\n\n\ndef handler():\n    g.user = None\n    return g\n' >"$G/pkg/views.py"
ask "$G" gq "What is g?" --iterations 6
st=$?
ok $st "--ask 'What is g?' answers (exit $st)"
grep -q 'pkg/globals.py:9' "$T/out"
ok $? "and cites where g is defined, pkg/globals.py:9"
$PYTHON3 - "$T"/gq/*.json <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
bad = [n["id"] for n in t["nodes"] if n["status"] == "error"]
assert not bad and not (t["answer"] or {}).get("failure"), (bad, t["answer"].get("failure"))
PY
ok $? "no step of its search failed"
cp "$T/out" "$T/out-g"

# a variable the question names is the answer's subject: its definition, the
# line the head states, is the citation the head numbers
head_cites() {   # OUT NAME PATH LINE: the head says NAME is defined in PATH at LINE [k], citation k is PATH:LINE
    $PYTHON3 - "$@" <<'PY'
import re, sys
out, name, path, line = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], sys.argv[4]
head = out.split("\n", 1)[0]
m = re.search(r"`%s` is defined in `%s` at line %s \[(\d+)\]" % (re.escape(name), re.escape(path), line), head)
assert m, head
k = m.group(1)
cite = re.search(r"^%s\. `([^`]+)`" % k, out, re.M)
assert cite and cite.group(1) == "%s:%s-%s" % (path, line, line), (k, cite and cite.group(1))
PY
}
head_cites "$T/out-g" g pkg/globals.py 9
ok $? "'What is g?': the head says where g is defined and numbers that citation"
ask "$PY" vq "Where is USER_KEY defined?" --iterations 8
head_cites "$T/out" USER_KEY tinyweb/auth.py 5 && head -1 "$T/out" | grep -q 'it is used in `login`'
ok $? "'Where is USER_KEY defined?': tinyweb/auth.py line 5 is the subject, login uses it"
echo "1..$n"
exit $fail
