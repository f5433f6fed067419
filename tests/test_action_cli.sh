#!/bin/sh
# End-to-end tests of --action on the pyrepo fixture (and, for the order of
# namesakes, on a repository written here): the index is built by the real
# indexer, each action's JSON is checked for exact values, and errors go to
# stderr with exit status 2.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
R="$top_srcdir/tests/fixtures/pyrepo"
. "$top_srcdir/tests/lib.sh"

# act NAME JSON: runs the action; stdout in $T/out, stderr in $T/err, status in $rc
act() { "$DRQA" --index "$T/index.sqlite" --no-progress --action "$1" "$2" "$R" >"$T/out" 2>"$T/err"; rc=$?; }
# q EXPR: evaluates a Python expression over the result d; prints it
q() { "$PYTHON3" -c "import json,sys; d=json.load(open('$T/out')); r=($1); print(r if isinstance(r, str) else repr(r))"; }

act FindClass '{"class_name":"App"}'
is "$rc" 0 "FindClass App exits 0"
is "$(q "d['items'][0]['path'], d['items'][0]['start_line'], d['items'][0]['end_line'], d['items'][0]['match']")" \
   "('tinyweb/app.py', 22, 85, 'exact')" "App at tinyweb/app.py:22-85, exact"
is "$(q "len(d['items'])")" 1 "one App"

act FindClass '{"class_name":"tinyweb.sessions.db.DatabaseSession"}'
is "$(q "d['items'][0]['qualname'], d['items'][0]['start_line'], d['items'][0]['match']")" \
   "('DatabaseSession', 8, 'dotted')" "dotted module.Class"

act FindClass '{"class_name":"DBSession"}'
is "$(q "d['items'][0]['qualname'], d['items'][0]['match']")" "('DatabaseSession', 'fuzzy')" "fuzzy DBSession"
is "$(q "d['notes'][0]")" "no class named 'DBSession'; did you mean: DatabaseSession (tinyweb/sessions/db.py:8)" \
   "did you mean"

act FindFunction '{"function_name":"flush"}'
is "$(q "d['items'][0]['qualname'], d['items'][0]['path'], d['items'][0]['start_line'], d['items'][0]['end_line']")" \
   "('SessionBase.flush', 'tinyweb/sessions/base.py', 67, 74)" "FindFunction flush"
is "$(q "d['evidence'][0]['text'].splitlines()[0]")" "    def flush(self):" "with its code"

act FindFunction '{"function_name":"save","class_name":"DatabaseSession"}'
is "$(q "len(d['items']), d['items'][0]['qualname'], d['items'][0]['start_line']")" "(1, 'DatabaseSession.save', 34)" \
   "a method by class_name"

printf '%s' '{"code_snippet":"request.session.flush()\nrequest.user = None"}' >"$T/snip.json"
act FindCodeSnippet "$(cat "$T/snip.json")"
is "$(q "[(e['path'], e['start_line'], e['end_line']) for e in d['evidence']]")" "[('tinyweb/auth.py', 22, 23)]" \
   "a two-line snippet without indentation"
is "$(q "d['items'][0]['in']")" "logout" "found inside logout"

act ViewCode '{"code_span_list":["tinyweb/auth.py:20-24"]}'
is "$(q "d['evidence'][0]['text']")" "$(sed -n 20,24p "$R/tinyweb/auth.py")" "ViewCode a range: the exact lines"

act ViewCode '{"code_span_list":["tinyweb/routing.py:Router"]}'
is "$(q "d['evidence'][0]['elided'], d['evidence'][0]['start_line']")" "(True, 33)" "a large class as a skeleton"
grep -q '\.\.\. (lines .* elided; ViewCode tinyweb/routing.py:' "$T/out"; ok $? "with elision markers naming the lines"

act ViewCode '{"code_span_list":["Router.match"]}'
is "$(q "d['evidence'][0]['start_line'], d['evidence'][0].get('elided', False)")" "(120, False)" \
   "a member of the large class: whole"

act ViewCode '{"code_span_list":["../../etc/passwd"]}'
is "$rc" 2 "path traversal exits 2"
grep -q "leaves the repository" "$T/err"; ok $? "and says why on stderr"
test ! -s "$T/out"; ok $? "nothing on stdout"

act ViewCode '{"code_span_list":["tinyweb/sesions/db.py"]}'
is "$rc" 2 "a missing file exits 2"
grep -q "nearest: tinyweb/sessions/db.py" "$T/err"; ok $? "with the nearest real path"

act FindReferences '{"symbol":"SessionBase"}'
is "$(q "[(i['kind'], i['path'], i['line']) for i in d['items']]")" \
   "[('subclass', 'tinyweb/sessions/db.py', 9), ('importer', 'tinyweb/sessions/__init__.py', 2), ('importer', 'tinyweb/sessions/db.py', 2)]" \
   "FindReferences: the subclass and the importers"

act FindReferences '{"symbol":"App"}'
is "$(q "sorted((i['kind'], i['path']) for i in d['items'])")" \
   "[('caller', 'scripts/serve.py'), ('caller', 'tinyweb/testing.py'), ('importer', 'scripts/serve.py'), ('importer', 'tinyweb/__init__.py'), ('importer', 'tinyweb/testing.py')]" \
   "FindReferences App across files"

act Outline '{"path":"tinyweb/auth.py"}'
is "$(q "d['listing']")" "tinyweb/auth.py (31 lines)
  5-5  USER_KEY (variable)
  8-16  def login(request, user=None)
  19-24  def logout(request)
  27-31  def authenticate(users, name, password)" "Outline a file"

act ListFiles '{"pattern":"tinyweb/sessions/*.py"}'
is "$(q "[i['path'] for i in d['items']]")" \
   "['tinyweb/sessions/__init__.py', 'tinyweb/sessions/base.py', 'tinyweb/sessions/db.py']" "ListFiles with a glob"

act FindClass '{"class_name":'
is "$rc" 2 "malformed JSON exits 2"
grep -q "not valid JSON" "$T/err"; ok $? "and says so"
act FindClass '{"klass":"App"}'
is "$rc" 2 "an unknown field exits 2"
grep -q "unknown field 'klass'" "$T/err"; ok $? "naming the field"
act NoSuchAction '{}'
is "$rc" 2 "an unknown action exits 2"

# Of two module-level definitions of one name, the one the package imports
# (its public one) is listed first, though the other's file is shallower.
P="$T/pubrepo"
mkdir -p "$P/pkg/io"
printf 'from pkg.io.api import load\n' >"$P/pkg/__init__.py"
: >"$P/pkg/io/__init__.py"
printf 'def load(path):\n    """Load a dataset from a file."""\n    with open(path) as f:\n        return f.read()\n' \
    >"$P/pkg/io/api.py"
printf 'def load(name):\n    """Load a demo dataset by its name."""\n    return name\n' >"$P/pkg/demo.py"
"$DRQA" --index "$T/pub.sqlite" --no-progress --action FindFunction '{"function_name":"load"}' "$P" >"$T/out" 2>"$T/err"
is "$(q "[i['path'] for i in d['items']]")" "['pkg/io/api.py', 'pkg/demo.py']" \
   "FindFunction load: the definition the package imports comes first"

echo "1..$n"
exit $fail
