#!/bin/sh
# test_layering.sh: the command line stays out of the engine library. No
# member of libdrqa.a defines or calls a cli_* or opts_* function, no source
# compiled into it or library header names struct drqa_opts or includes the
# command line's headers (cli.h, cli_opts.h, cli_settings.h): each library
# module takes a settings struct of its own, which src/cli_settings.c fills
# from the options.
set -u
: "${top_srcdir:?}" "${top_builddir:=.}"
. "$top_srcdir/tests/tap.sh"
lib="$top_builddir/libdrqa.a"
NM=${NM:-nm}

[ -f "$lib" ]
ok $? "the library is built ($lib)"
members=$(ar t "$lib" 2>/dev/null)
[ -n "$members" ]
ok $? "it has members"

# the check itself works: the program defines what the library must not
"$NM" "$top_builddir/drqa-tui" 2>/dev/null | grep -q ' T opts_parse$'
ok $? "nm finds opts_parse in drqa-tui"

syms=$("$NM" -A "$lib" 2>/dev/null | grep -E ' [A-Za-z] (opts|cli)_[A-Za-z0-9_]*$')
is "$syms" "" "no member of libdrqa.a defines or references an opts_* or cli_* symbol"

bad=
for m in $members; do
    case $m in
    cli_*|opts*) bad="$bad $m" ;;
    esac
done
is "$bad" "" "no command-line object is a member of libdrqa.a"

# the sources of the members (src/NAME.c for NAME.o) and every header that is
# not the command line's
files=
for m in $members; do
    f="$top_srcdir/src/${m%.o}.c"
    [ -f "$f" ] && files="$files $f"
done
for h in "$top_srcdir"/src/*.h; do
    case ${h##*/} in
    cli.h|cli_*.h) ;;
    *) files="$files $h" ;;
    esac
done
[ -n "$files" ]
ok $? "library sources found"
# shellcheck disable=SC2086
found=$(grep -l -E 'drqa_opts|#[[:space:]]*include[[:space:]]*"(opts|cli|cli_opts|cli_settings)\.h"' $files 2>/dev/null |
        sed "s|^$top_srcdir/||" | tr '\n' ' ')
is "$found" "" "no library source or header names struct drqa_opts or includes a command-line header"

[ ! -e "$top_srcdir/src/opts.c" ] && [ ! -e "$top_srcdir/src/opts.h" ]
ok $? "the options live in src/cli_opts.c, not src/opts.c"

echo "1..$n"
exit $fail
