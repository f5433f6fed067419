#!/bin/sh
# test_ui_man.sh: the man page against the program. Every option printed by
# `drqa-tui --help` must be documented in the OPTIONS section, every
# environment variable the sources read (getenv and llm_config.c's env_get, the
# test hooks aside: DRQA_TEST_* and ui/test_hooks.c, which drqa-tui is built
# without) in the ENVIRONMENT section, and the page must
# format without warnings; --exploration's default and "cursor held" are
# documented. (Keys are checked by tests/test_keymap.)
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
# --exploration's default as the search uses it (MCTS_DEFAULT_C), in --help
# and in the man page; the status line's "cursor held" is explained
c=$(sed -n 's/^#define MCTS_DEFAULT_C \([0-9]*\)\.0$/\1/p' "$top_srcdir/src/mcts.h")
"$DRQA" --help | grep -q -- "--exploration C .*(default $c)"
ok $? "--help gives --exploration's default ($c)"
printf '%s\n' "$OPTS" | sed -n '/^\.BI --exploration /,/^\.TP/p' | grep -q "(default $c)"
ok $? "the man page gives --exploration's default ($c)"
grep -q 'cursor held' "$MAN"
ok $? "the man page says what the status line's 'cursor held' means"
if command -v groff >/dev/null 2>&1; then
    warn=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
    [ -z "$warn" ]
    ok $? "the man page formats without warnings${warn:+: $warn}"
else
    skip "groff is not installed"
fi
echo "1..$n"
exit $fail
