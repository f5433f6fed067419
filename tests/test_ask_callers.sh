#!/bin/sh
# "What calls get_response?" is answered by the code that calls it: the
# search's first step is FindReferences on the name (the index's call
# edges), the citations that call it come first, each quoted at its call,
# and the answer's first sentence names them with the line of each call. A
# docstring that only mentions the name is no call. Two definitions of the
# name (Handler's and Proxy's) are said to share it. Checked on a repository
# the test writes, offline policy. "Which classes inherit from Handler?" is
# answered by the classes that do, the same way.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"

R="$T/repo"
mkdir -p "$R/web"
: >"$R/web/__init__.py"
cat >"$R/web/handlers.py" <<'EOF'
class Handler:
    """Turns a request into a response."""

    def get_response(self, request):
        """Return the response for request, through the middleware."""
        return self.middleware(request)

    def middleware(self, request):
        return request


class WSGIHandler(Handler):
    """The WSGI entry point."""

    def __call__(self, environ):
        request = dict(environ)
        response = self.get_response(request)
        return response
EOF
cat >"$R/web/proxy.py" <<'EOF'
class Proxy:
    """Stands in for a handler in tests."""

    def get_response(self, request):
        return None
EOF
cat >"$R/web/client.py" <<'EOF'
def fetch(handler, request):
    """Send request to handler and return what it answers."""
    return handler.get_response(request)


def describe():
    """Say how get_response is reached: through the handler."""
    return "handler"


def shutdown_hook():
    """Close the handler's connections when the process ends."""
    return None


def usage_hint(handler):
    """How a response is reached, for the help screen."""
    return 'call handler.get_response(request) for it', "or get_response(req)"
EOF

"$DRQA" --index "$T/index.sqlite" --no-progress --quiet --policy offline --transcript-dir "$T/tr" --json \
    --ask "What calls get_response?" "$R" >"$T/out" 2>"$T/err"
ok $? "the callers question is answered"
"$PYTHON3" - "$T/out" "$T/tr" >"$T/facts" <<'EOF'
import glob, json, sys
d = json.load(open(sys.argv[1]))
t = json.load(open(glob.glob(sys.argv[2] + "/*.json")[0]))
first_child = min((n for n in t["nodes"] if n.get("parent") == 0), key=lambda n: n["id"])
print("first-step", first_child.get("action"), json.dumps(first_child.get("args", {}), sort_keys=True))
c = d["citations"]
print("first-cite", c[0]["path"], c[0]["start_line"], c[0]["end_line"] if c else "")
print("head", d["answer"].split("\n", 1)[0])
print("answer", json.dumps(d["answer"]))
EOF
sed 's/^/# /' "$T/facts" | cut -c1-300
grep -q '^first-step FindReferences .*get_response' "$T/facts"
ok $? "the search's first step is FindReferences on get_response"
awk '/^first-cite/ { exit !(($2 == "web/handlers.py" && $3 <= 17 && $4 >= 17) || ($2 == "web/client.py" && $3 <= 3 && $4 >= 3)) }' "$T/facts"
ok $? "the first citation is a call of it, not its definition"
grep -q '^head \*\*In short:\*\* `get_response` is called by ' "$T/facts"
ok $? "the first sentence says what calls it"
grep '^head' "$T/facts" | grep -q '`WSGIHandler.__call__` (`web/handlers.py:17`)' &&
    grep '^head' "$T/facts" | grep -q '`fetch` (`web/client.py:3`)'
ok $? "naming both callers with the line of each call"
grep '^head' "$T/facts" | grep -q 'of any of the 2 functions and methods named `get_response`'
ok $? "and saying that two definitions share the name"
! grep '^head' "$T/facts" | grep -q 'describe'
ok $? "a docstring that mentions the name is no call"
! grep '^head' "$T/facts" | grep -q 'usage_hint'
ok $? "nor is a string literal that writes a call of it"
grep '^answer' "$T/facts" | grep -q '17: response = self.get_response(request)'
ok $? "a caller is quoted at its call"

# a name nothing calls: the answer says the index records no call of it
"$DRQA" --index "$T/index.sqlite" --no-progress --quiet --policy offline --ask "What calls shutdown_hook?" "$R" \
    >"$T/none" 2>"$T/err"
sed -n '1p' "$T/none" | sed 's/^/# /'
sed -n '1p' "$T/none" | grep -q '^\*\*In short:\*\* the index records no call of `shutdown_hook` in the repository; '
ok $? "a name nothing calls: the first sentence says the index records no call of it"

# "Which classes inherit from Handler?": the same for the inheritance edges
"$DRQA" --index "$T/index.sqlite" --no-progress --quiet --policy offline --ask "Which classes inherit from Handler?" \
    "$R" >"$T/sub" 2>"$T/err"
ok $? "the subclasses question is answered"
sed -n '1p' "$T/sub" | sed 's/^/# /'
sed -n '1p' "$T/sub" | grep -q '^\*\*In short:\*\* `Handler` is subclassed by `WSGIHandler` (`web/handlers.py:12`) \[1\]'
ok $? "the first sentence names the subclass, the line of its class statement and its citation, first"

# a class longer than a window: its definition and the windows inside it
# (their enclosing definition is the class) are one subclass, named once
B="$T/big"
mkdir -p "$B/web"
: >"$B/web/__init__.py"
printf 'class Handler:\n    """Turns a request into a response."""\n\n    def get_response(self, request):\n        return request\n' \
    >"$B/web/base.py"
printf 'class ASGIHandler(Handler):\n    """The ASGI entry point."""\n\n    def __call__(self, scope):\n        return self.get_response(scope)\n' \
    >"$B/web/asgi.py"
"$PYTHON3" - "$B/web/wsgi.py" <<'EOF'
import sys
lines = ['class WSGIHandler(Handler):', '    """The WSGI entry point: a handler for WSGI servers."""', '']
for i in range(120):
    lines += ['    def step_%d(self, request):' % i, '        """Step %d of the handler chain."""' % i,
              '        return self.get_response(request)', '', '']
lines += ['    def inherit_handler(self, request):', '        """The handler classes inherit this: subclasses of Handler."""',
          '        return request']
open(sys.argv[1], 'w').write('\n'.join(lines) + '\n')
EOF
"$DRQA" --index "$T/big.sqlite" --no-progress --quiet --policy offline --ask "Which classes inherit from Handler?" \
    "$B" >"$T/bigsub" 2>"$T/err"
sed -n '1p' "$T/bigsub" | sed 's/^/# /'
[ "$(sed -n '1p' "$T/bigsub" | grep -o 'web/wsgi.py:1`' | wc -l)" = 1 ] && sed -n '1p' "$T/bigsub" | grep -q 'ASGIHandler'
ok $? "a long subclass cited by its definition and by a window inside it is named once"

echo "1..$n"
exit $fail
