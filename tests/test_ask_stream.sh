#!/bin/sh
# test_ask_stream.sh: --ask --policy llm against the fake model server, which
# streams its replies token by token. On a terminal (a pty, tests/ask_pty.py)
# the answer is printed as it is written and then its citation list, the
# whole output the same bytes as into a pipe; into a pipe it is printed once,
# as it always was (the exact Markdown), and --json is the same line on a
# terminal as into a pipe. An answer written again (the re-ask of an invented
# citation) is said in a line before the new text; a checked answer that
# differs from the text printed (an invented citation removed) is said and
# printed whole. C-c while the answer is written stops it: exit status 130,
# the part that arrived kept with its verified citation and marked stopped,
# on the terminal, on stderr and in the transcript; the rest never comes.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
. "$top_srcdir/tests/lib.sh"
. "$top_srcdir/tests/stream_fixture.sh"
unset NO_COLOR
export DRQA_API_KEY=sk-ask-stream-test
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
"$DRQA" --index-only --no-progress --index "$T/idx.sqlite" "$T/repo" >/dev/null 2>&1

A='`App.dispatch_request` (`tinyweb/app.py:46-51`) calls the view function at `tinyweb/app.py:51`, after matching the route.'
B='The view function is called in `tinyweb/app.py:46-51`, at line 51.'
C='It is in `tinyweb/app.py:46-51` and in `tinyweb/ghost.py:5-9` for sure.'
words=$("$PYTHON3" -c 'print(" ".join("w%d" % i for i in range(400)))')
for c in pipe tty json jtty; do stream_script "$T/script.json" "$c" 5 "$A"; done
stream_script "$T/script.json" reask 5 'It is in `tinyweb/ghost.py:1-3`.' "$B"
stream_script "$T/script.json" differs 5 "$C"
# a small open model's answer: the object in a ```json fence (a trailing
# comma), alone or with words around it
stream_script "$T/script.json" fenced 5 "$("$PYTHON3" -c 'import json, sys; print("```json\n{\n  \"answer\": %s,\n}\n```" % json.dumps(sys.argv[1]))' "$B")"
stream_script "$T/script.json" wrapped 5 "$("$PYTHON3" -c 'import json, sys; print("Sure! Here is my reply:\n\n```json\n{\"answer\": %s}\n```\n\nLet me know if you need anything else." % json.dumps(sys.argv[1]))' "$B")"
stream_script "$T/script.json" stop 20 "The view is called in \`tinyweb/app.py:46-51\`, then $words LASTWORD."
stream_script "$T/script.json" stopearly 20 "The view is reached from $words and then \`tinyweb/app.py:46-51\` LASTWORD."
fake_start "$T/script.json" "$T/requests.jsonl" || exit 1

# ask CASE [PTY-OPTIONS --] [DRQA-OPTIONS]: --ask the question of CASE; into
# $T/CASE.out (a pipe), or on a terminal when PTY-OPTIONS (ask_pty.py's)
# are set in $pty; stderr in $T/CASE.err, the status in $rc.
ask() {
    name=$1
    shift
    set -- --ask "$(stream_question "$name")" --policy llm --api-base "http://127.0.0.1:$port/v1" \
        --model fake-model --iterations 4 --index "$T/idx.sqlite" "$@"
    if [ "$pty" ]; then
        # shellcheck disable=SC2086
        "$PYTHON3" "$top_srcdir/tests/ask_pty.py" --out "$T/$name.raw" --err "$T/$name.err" $pty -- "$DRQA" "$@" \
            "$T/repo"
        rc=$?
        tr -d '\r' <"$T/$name.raw" >"$T/$name.out"
    else
        "$DRQA" "$@" "$T/repo" >"$T/$name.out" 2>"$T/$name.err"
        rc=$?
    fi
}

# the search's note on where its citations were read (search.h) ends the answer
EV='_Evidence: every citation was read on the best path, nodes 3, 4._'
printf '%s\n\n%s\n\n**Citations:**\n\n- `tinyweb/app.py:46-51` `App.dispatch_request`\n' "$A" "$EV" >"$T/want.md"
pty= ask pipe
is "$rc" 0 "into a pipe: succeeds"
cmp -s "$T/pipe.out" "$T/want.md"
ok $? "into a pipe: the answer and its citations, printed once, byte for byte as before"
grep -q '"stream\\":true' "$T/requests.jsonl"
ok $? "the replies were asked for as event streams"

pty=--guard=60 ask tty
is "$rc" 0 "on a terminal: succeeds"
cmp -s "$T/tty.out" "$T/want.md"
ok $? "on a terminal: the answer as it came, then its citations: the same text, nothing twice"
[ "$fail" = 0 ] || { diff "$T/want.md" "$T/tty.out" | sed 's/^/#   /'; sed 's/^/#   err: /' "$T/tty.err"; }

pty= ask json --json
pty=--guard=60 ask jtty --json
same=$("$PYTHON3" -c 'import json, sys
a, b = (json.loads(open(p).read()) for p in sys.argv[1:3])
for d in (a, b):
    for k in ("wall_ms", "question"):
        d.pop(k, None)
print("same" if a == b and "stopped" not in a else "differ")' "$T/json.out" "$T/jtty.out")
is "$same" same "--json: the same line on a terminal as into a pipe, with no stopped mark"
is "$(grep -c . "$T/jtty.out")" 1 "--json on a terminal: one line, no answer text printed before it"

# written again: an invented citation is re-asked; the second answer is used
pty=--guard=60 ask reask
is "$rc" 0 "re-asked on a terminal: succeeds"
like "$(cat "$T/reask.out")" "It is in \`tinyweb/ghost.py:1-3\`.

--- the answer is being written again ---

$B

$EV

**Citations:**" "the re-ask is said before the new text, then the citations of the answer used"

# the checked answer differs from what was printed: said, printed whole
pty=--guard=60 ask differs
is "$rc" 0 "an invented citation on a terminal: succeeds"
like "$(cat "$T/differs.out")" "$C

--- the checked answer differs from the text above (citations no evidence verifies are removed, notes added); the answer as checked: ---

It is in \`tinyweb/app.py:46-51\` and in  for sure." "a checked answer that differs is said, then printed"
like "$(cat "$T/differs.out")" "_1 citation that matched no evidence on the trajectory was removed._" \
    "with the removal noted"

# a fenced JSON answer streams as its text; with words around the fence the
# JSON streams as it came, and the checked answer is said to be the string in it
pty=--guard=60 ask fenced
is "$rc" 0 "a fenced JSON answer on a terminal: succeeds"
like "$(cat "$T/fenced.out")" "$B

$EV" "it is printed as the answer's text"
ok "$(grep -c '```\|"answer"\|differs' "$T/fenced.out" | grep -qx 0; echo $?)" "with no fence, no JSON and no 'differs' line"
pty=--guard=60 ask wrapped
is "$rc" 0 "a JSON answer with words around its fence on a terminal: succeeds"
like "$(cat "$T/wrapped.out")" "Let me know if you need anything else.

--- the model wrote its answer inside JSON, with words around it; the answer it holds, as checked: ---

$B" "the checked answer is said to be the string inside the JSON, then printed"
pty= ask wrapped
is "$(head -1 "$T/wrapped.out")" "$B" "into a pipe: only the answer's text"

# C-c before the answer's first citation: the list's span is said not to be one of the answer's
pty="--guard=60 --stop-after=w3" ask stopearly
is "$rc" 130 "C-c before the first citation: exit status 130"
like "$(cat "$T/stopearly.out")" "_Evidence: the answer cites no code the search read; the span listed is the best one read on" \
    "the span the list names is said to be the search's best, not the answer's citation"

# C-c while the answer is written
mkdir -p "$T/tr"
pty="--guard=60 --stop-after=w3" ask stop --transcript-dir "$T/tr"
is "$rc" 130 "C-c while the answer is written: exit status 130"
like "$(cat "$T/stop.out")" "The view is called in \`tinyweb/app.py:46-51\`, then w0 w1 w2 w3" "the part that arrived is kept"
like "$(cat "$T/stop.out")" "_Stopped while it was being written: this answer is incomplete._" "marked as stopped"
grep -q LASTWORD "$T/stop.out"
ok $((! $?)) "the rest never comes (the connection was closed)"
like "$(cat "$T/stop.out")" "- \`tinyweb/app.py:46-51\`" "its verified citation is listed"
like "$(cat "$T/stop.err")" "the answer was stopped (C-c) while it was being written" "stderr says so"
grep -q '"stopped":[[:space:]]*true' "$T"/tr/*.json
ok $? "the transcript JSON marks the answer stopped"
grep -q 'Stopped while it was being written' "$T"/tr/*.md
ok $? "the transcript Markdown says so"

echo "1..$n"
exit $fail
