#!/bin/sh
# test_ui_man.sh: the man page against the program. Every option printed by
# `drqa-tui --help` must be documented in the OPTIONS section, every
# environment variable the sources read (getenv and llm_config.c's env_get, the
# test hooks aside: DRQA_TEST_* and ui/test_hooks.c, which drqa-tui is built
# without) in the ENVIRONMENT section, and the page must
# format without warnings. (Keys are checked by tests/test_keymap.)
set -u
: "${top_srcdir:?}" "${DRQA:?}"
MAN="$top_srcdir/man/drqa-tui.1"
. "$top_srcdir/tests/tap.sh"

# section NAME: the roff text of one .SH section, with \- turned into -
section() {
    awk -v s="$1" '/^\.SH /{on = ($2 == s)} on' "$MAN" | sed 's/\\-/-/g'
}

opts=$("$DRQA" --help | sed -n 's/^  \(--[a-z][a-z-]*\).*/\1/p')
count=$(printf '%s\n' "$opts" | grep -c .)
[ "$count" -ge 30 ]
ok $? "drqa-tui --help lists options ($count)"
OPTS=$(section OPTIONS)
for o in $opts; do
    printf '%s\n' "$OPTS" | grep -q -- "^\.BI\{0,1\} $o\( \|$\)"
    ok $? "option $o is documented in the man page"
done

vars=$(ls "$top_srcdir"/src/*.c "$top_srcdir"/ui/*.c | grep -v '/ui/test_hooks\.c$' | xargs cat |
       grep -o -E '(getenv|env_get\(env,) *\(?"[A-Z_][A-Z0-9_]*"' |
       grep -o -E '"[A-Z0-9_]+"' | tr -d '"' | grep -v '^DRQA_TEST_' | sort -u)
nv=$(printf '%s\n' "$vars" | grep -c .)
[ "$nv" -ge 14 ]
ok $? "the sources read environment variables ($nv)"
ENV=$(section ENVIRONMENT)
for v in $vars; do
    printf '%s\n' "$ENV" | grep -q "^\.B $v\$"
    ok $? "environment variable $v is documented"
done
for s in NAME SYNOPSIS DESCRIPTION OPTIONS KEYS ENVIRONMENT FILES EXAMPLES "EXIT"; do
    grep -q "^\.SH $s" "$MAN"
    ok $? "the man page has a $s section"
done
if command -v groff >/dev/null 2>&1; then
    warn=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
    [ -z "$warn" ]
    ok $? "the man page formats without warnings${warn:+: $warn}"
else
    skip "groff is not installed"
fi
echo "1..$n"
exit $fail
