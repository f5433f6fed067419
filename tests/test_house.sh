#!/bin/sh
# test_house.sh: the house rules of src/ and ui/ (see HACKING.md):
#   - no function longer than 120 lines (tests/house_funcs.py counts them as
#     ctags does: from the line of its name to its closing brace)
#   - no source file longer than 1,500 lines
#   - no two files in a circle: A uses a symbol B defines while B uses one A
#     defines (from nm over the objects make check built: the members of
#     libdrqa.a and drqa-tui's own objects); skipped when nm is missing
#   - src/ never includes curses (only ui/ draws)
# Each failure names the function, file or pair and its size.
: "${top_srcdir:?}" "${top_builddir:=.}"
lib_name=house
. "$top_srcdir/tests/lib.sh"
MAX_FUNC=120
MAX_FILE=1500
cd "$top_srcdir" || exit 99
sources=$(ls src/*.c src/*.h ui/*.c ui/*.h)

# The counter first, on a file whose answer is known: braces, parentheses
# and quotes inside comments, strings and characters, and a macro with a
# body, are not code.
{
    echo '#define M(x) { (x); }'
    echo 'struct s { int a; } v = { 1 };'
    echo 'static int f(int a)'
    echo '{'
    echo '    const char *s = "}{ \" }"; /* } */ char c = '"'}'"'; // }'
    i=0
    while [ $i -lt 118 ]; do echo '    a++;'; i=$((i + 1)); done
    echo '}'
    echo 'int g(void) { return M(1); }'
} >"$T/known.c"
is "$("$PYTHON3" "$top_srcdir/tests/house_funcs.py" "$T/known.c")" "122 f $T/known.c:3
1 g $T/known.c:125" "the counter finds f (122 lines) and g, and nothing in comments, strings or macros"

long=$("$PYTHON3" "$top_srcdir/tests/house_funcs.py" $sources | awk -v max=$MAX_FUNC '$1 > max { print $3 ": " $2 " is " $1 " lines" }')
is "$long" "" "no function in src/ or ui/ is over $MAX_FUNC lines"

big=$(wc -l $sources | awk -v max=$MAX_FILE '$2 != "total" && $1 > max { print $2 " is " $1 " lines" }')
is "$big" "" "no source file in src/ or ui/ is over $MAX_FILE lines"

# nm -A -g prints 'OBJECT:ADDRESS TYPE NAME' (ADDRESS blank for U); an
# archive member is 'ARCHIVE:MEMBER'. Each object is named by its source.
objects=$(ls "$top_builddir"/src/drqa_tui-*.o "$top_builddir"/ui/drqa_tui-*.o 2>/dev/null)
if ! command -v nm >/dev/null 2>&1; then
    skip "two-file circles: nm is missing (binutils)"
elif [ ! -f "$top_builddir/libdrqa.a" ] || [ -z "$objects" ]; then
    skip "two-file circles: libdrqa.a and drqa-tui's objects are not built (make check builds them)"
else
    circles=$(cd "$top_builddir" && nm -A -g libdrqa.a src/drqa_tui-*.o ui/drqa_tui-*.o 2>/dev/null | awk '
        {
            obj = $1; sub(/:[0-9a-f]*$/, "", obj)
            if (obj ~ /^libdrqa\.a:/) { sub(/^libdrqa\.a:/, "src/", obj) }
            sub(/drqa_tui-/, "", obj); sub(/\.o$/, ".c", obj)
            if ($2 == "U") { uses[obj, $3] = 1; users[$3] = users[$3] " " obj }
            else if ($2 ~ /^[A-TV-Z]$/) { def[$3] = obj }
        }
        END {
            # a pair, once, with one symbol each way
            for (k in uses) {
                split(k, p, SUBSEP); a = p[1]; sym = p[2]; b = def[sym]
                if (b == "" || b == a) continue
                ab[a, b] = sym
            }
            for (k in ab) {
                split(k, p, SUBSEP); a = p[1]; b = p[2]
                if (a < b && ((b, a) in ab))
                    print a " uses " ab[a, b] " of " b ", which uses " ab[b, a] " of it"
            }
        }' | sort)
    is "$circles" "" "no two files of src/ or ui/ use each other"
fi

curses=$(grep -n -E '^[[:space:]]*#[[:space:]]*include[[:space:]]*[<"][^>"]*curses' src/*.c src/*.h)
is "$curses" "" "src/ does not include curses"

echo "1..$n"
exit $fail
