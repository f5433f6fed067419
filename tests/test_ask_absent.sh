#!/bin/sh
# A question whose words the repository says nowhere ("How does the server
# handle websocket connections?" where no file says websocket) is answered
# with the closest code, and the answer says so: it names the missing words
# and does not call what it cites "the code that does it". Another stem of
# a word ("connections" where the code says "connection") is no missing word,
# nor is a word of an identifier (WebHook says webhook); a name written as
# code is missing when no file says it as written. A question whose
# words are all there gets the usual head. Checked on a repository the test
# writes, offline policy.
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"

R="$T/repo"
mkdir -p "$R/srv"
: >"$R/srv/__init__.py"
cat >"$R/srv/server.py" <<'EOF'
class Server:
    """Accepts a connection and hands each request to its handler."""

    def handle(self, connection):
        """Handle one connection: read the request, write the response."""
        request = connection.read()
        return self.dispatch(request)

    def dispatch(self, request):
        """Find the handler of the request's path and call it."""
        return request


class WebHook:
    """Posts an event to a registered address."""

    def post(self, event):
        return event
EOF

# ask QUESTION: the first line of its answer in $T/head
ask() {
    "$DRQA" --index "$T/index.sqlite" --no-progress --quiet --policy offline --ask "$1" "$R" >"$T/out" 2>"$T/err"
    rc=$?
    sed -n '1p' "$T/out" >"$T/head"
    sed 's/^/# /' "$T/head"
    return $rc
}

ask "How does the server handle websocket connections?"
ok $? "the websocket question is answered"
grep -q 'No indexed file of the repository says `websocket`, so the citations match the question' "$T/head"
ok $? "the answer says no file says websocket"
grep -q '^\*\*In short:\*\* the closest code is `Server' "$T/head"
ok $? "and calls its first citation the closest code, not the code that does it"
! grep -q 'that does it' "$T/head"
ok $? "'the code (or class) that does it' is not said"
! grep -q '`connections`\|`server`\|`handle`' "$T/head"
ok $? "words the code says (connections as connection) are not named missing"

ask "How does the webhook post an event?"
! grep -q 'No indexed file' "$T/head"
ok $? "webhook is a word of the identifier WebHook: nothing is said missing"

ask "How does the server handle a connection?"
! grep -q 'No indexed file\|closest code' "$T/head"
ok $? "a question whose words are all there gets the usual head"
grep -q 'In short' "$T/head"
ok $? "which is there"

# A name written as code is missing when the repository says it nowhere as
# written, though its parts are said: `ServerHook` (server and hook are
# words of the code) and post_event_now (post, event). A name the code
# defines or writes (WebHook, dispatch) is not missing.
ask "Where is ServerHook defined?"
grep -q 'No indexed file of the repository says `ServerHook`' "$T/head"
ok $? "ServerHook, a name of words the code says, is named missing as written"
grep -q '^\*\*In short:\*\* the closest code is' "$T/head"
ok $? "and the first citation is the closest code"
ask "How does post_event_now call the handler?"
grep -q 'No indexed file of the repository says `post_event_now`' "$T/head"
ok $? "so is post_event_now"
ask "How does WebHook post an event?"
! grep -q 'No indexed file\|closest code' "$T/head"
ok $? "WebHook, which the code defines, is not missing"

# a question in a script whose words run together (Japanese) has words no
# index term can match: they are named missing, not passed over, and the
# first citation is the closest code, not the code that does it
ask "Server はどのようにリクエストを処理しますか？"
grep -q 'No indexed file of the repository says `はどのようにリクエストを処理しますか？`' "$T/head" &&
    grep -q '^\*\*In short:\*\* the closest code is' "$T/head"
ok $? "words no term can match are named missing, the first citation the closest code"
# nor does a node's coverage claim the whole question: those words are said apart
"$DRQA" --index "$T/index.sqlite" --no-progress --quiet --policy offline --transcript-dir "$T/tr-ja" \
    --ask "Server はどのようにリクエストを処理しますか？" "$R" >/dev/null 2>&1
"$PYTHON3" - "$T/tr-ja" <<'EOF'
import glob, json, sys
t = json.load(open(glob.glob(sys.argv[1] + "/*.json")[0]))
fb = [n.get("feedback") or "" for n in t["nodes"] if n.get("feedback")]
bad = [f for f in fb if "% of the question" in f or "no index term can match" not in f]
print("# %d feedbacks, %d bad: %s" % (len(fb), len(bad), bad[:1]))
sys.exit(0 if fb and not bad else 1)
EOF
ok $? "the nodes' coverage is of the words it can look for, and names the words no term can match"

echo "1..$n"
exit $fail
