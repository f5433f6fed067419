#!/bin/sh
# test_index_arena.sh: the parser threads parse each file in a tree-sitter
# arena (src/ts_arena.h) that drops its tree whole. An index built so is the
# index built without arenas (DRQA_TEST_TS_ARENA=0: a parser per thread, each
# tree freed node by node) and the one built with arenas too small for the
# large file, whose tree comes partly from glibc and is freed as usual: the
# same symbols, edges, imports, chunks and derived rows.
set -u
: "${top_srcdir:?}" "${DRQA:?}"
. "$top_srcdir/tests/lib.sh"
q() { sqlite3 -batch "$1" "$2"; }
dump() {
    q "$1" "SELECT * FROM files ORDER BY id; SELECT * FROM symbols ORDER BY id; SELECT * FROM edges ORDER BY id;
            SELECT * FROM imports ORDER BY rowid; SELECT * FROM chunk_spans ORDER BY id;
            SELECT first, hex(terms), hex(dfs), hex(vecs) FROM vec_term_blocks ORDER BY first;
            SELECT term, hex(post) FROM lp_terms ORDER BY term"
}
need_hooks
R="$T/repo"
cp -R "$top_srcdir/tests/fixtures/pyrepo" "$R"
chmod -R u+w "$R"   # a copy from a read-only source tree (distcheck)
# a module whose tree takes some 10 MB, past a 4 MiB arena
i=0
while [ $i -lt 2000 ]; do
    printf 'def f%d(x, y=%d):\n    return f%d(x + %d, [y, "v%d"])\n\n' $i $i $((i > 0 ? i - 1 : 0)) $i $i
    i=$((i + 1))
done >"$R/large.py"
for mode in default 0 4194304; do
    if [ $mode = default ]; then
        "$DRQA_HOOKS" --no-progress --index "$T/$mode.sqlite" --index-only "$R" >/dev/null 2>&1
    else
        DRQA_TEST_TS_ARENA=$mode "$DRQA_HOOKS" --no-progress --index "$T/$mode.sqlite" --index-only "$R" >/dev/null 2>&1
    fi
    ok $? "index built (arena: $mode)"
    dump "$T/$mode.sqlite" >"$T/$mode.txt"
done
is "$(q "$T/default.sqlite" "SELECT count(*) FROM symbols WHERE name = 'f1999'")" "1" "the large module's last function is in"
test -s "$T/default.txt" && cmp -s "$T/default.txt" "$T/0.txt"
ok $? "arenas give the index built without them"
cmp -s "$T/default.txt" "$T/4194304.txt"
ok $? "arenas too small for the large module give it too"
echo "1..$n"
exit $fail
