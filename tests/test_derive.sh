#!/bin/sh
# test_derive.sh: a fresh index holds what questions read besides its tables
# (the local vectors, the line postings, the symbol names: src/derive.h),
# byte for byte what a first question would have stored, so that the first
# question stores nothing; after updates in place (a changed file, a deleted
# one) they are made again, equal to those of a fresh index of the same tree.
set -u
: "${top_srcdir:?}" "${DRQA:?}" "${PYTHON3:=python3}"
FIX="$top_srcdir/tests/fixtures/pyrepo"
. "$top_srcdir/tests/lib.sh"
q() { sqlite3 -batch "$1" "$2"; }
# dump INDEX [stamps]: the derived rows; without 'stamps', only what does not
# depend on the ids the rows got (an updated index gives new ones)
dump() {
    if [ "${2:-}" = stamps ]; then
        q "$1" "SELECT 'vm', model, stamp, ndocs FROM vec_models;
                SELECT 'mx', model, stamp, part, hex(rows) FROM vec_matrix ORDER BY part;
                SELECT 'lm', key, hex(value) FROM lp_meta ORDER BY key;
                SELECT 'an', stamp FROM act_names"
    fi
    q "$1" "SELECT 'vt', first, hex(terms), hex(dfs), hex(vecs) FROM vec_term_blocks ORDER BY first;
            SELECT 'lt', term, hex(post) FROM lp_terms ORDER BY term;
            SELECT 'lm', key, hex(value) FROM lp_meta WHERE key IN ('nlines', 'lens') ORDER BY key;
            SELECT 'an', hex(names) FROM act_names"
}
# drops the derived rows, as an index an older drqa-tui built has none
underive() { q "$1" "DELETE FROM vec_term_blocks; DELETE FROM vec_models; DELETE FROM vec_matrix; DELETE FROM lp_terms;
                     DELETE FROM lp_meta; DELETE FROM act_names"; }
ask() { "$DRQA" --no-progress --quiet --policy offline --index "$1" --ask "$2" "$R" >/dev/null 2>&1; }

R="$T/repo"
cp -R "$FIX" "$R"
mkdir -p "$T/idx"
I="$T/idx/a.sqlite"
"$DRQA" --no-progress --index "$I" --index-only "$R" >/dev/null 2>&1
ok $? "a fresh index"
is "$(q "$I" "SELECT count(*) > 0 FROM vec_term_blocks") $(q "$I" "SELECT count(*) FROM vec_models")" "1 1" \
    "it holds the local vectors"
is "$(q "$I" "SELECT count(*) > 0 FROM lp_terms") $(q "$I" "SELECT count(*) FROM lp_meta WHERE key = 'stamp'")" "1 1" \
    "and the line postings"
is "$(q "$I" "SELECT count(*) FROM act_names")" "1" "and the symbol names"
dump "$I" stamps >"$T/fresh.txt"

# the fit runs whole beside resolving (a small one, as here) or makes its
# quantised vectors after it (a large one; DRQA_TEST_EARLY_FIT=0 takes that
# path): the same rows either way
if [ -x "$DRQA_HOOKS" ]; then
    DRQA_TEST_EARLY_FIT=0 "$DRQA_HOOKS" --no-progress --index "$T/idx/late.sqlite" --index-only "$R" >/dev/null 2>&1
    dump "$T/idx/late.sqlite" stamps >"$T/late.txt"
    test -s "$T/late.txt" && cmp -s "$T/fresh.txt" "$T/late.txt"
    ok $? "a fit whose quantised vectors wait for resolving stores the same rows as one beside it"
else
    skip "no $DRQA_HOOKS (make check builds it)"
fi

# a file handed to the derived data at the wrong place (one place twice, one
# never: DRQA_TEST_DERIVE_PLACE): what was built is not the index's, so none
# of it is stored, the log says so, and the first question makes the rows,
# the same as a fresh index's
if [ -x "$DRQA_HOOKS" ]; then
    DRQA_TEST_DERIVE_PLACE=1 "$DRQA_HOOKS" --no-progress --log "$T/misplaced.log" --index "$T/idx/misplaced.sqlite" \
        --index-only "$R" >/dev/null 2>&1
    ok $? "a build whose derived data lost a file's place still indexes"
    grep -q "did not all come to the derived data in their places; the first question makes it" "$T/misplaced.log"
    ok $? "the log says the derived data was not stored"
    # (the term vectors' and the line postings' tables are made by the
    # first store into them)
    lp=$(q "$T/idx/misplaced.sqlite" "SELECT (SELECT count(*) FROM lp_terms) + (SELECT count(*) FROM lp_meta)" 2>/dev/null ||
         q "$T/idx/misplaced.sqlite" "SELECT count(*) FROM sqlite_schema WHERE name IN ('lp_terms', 'lp_meta')")
    vt=$(q "$T/idx/misplaced.sqlite" "SELECT count(*) FROM vec_term_blocks" 2>/dev/null ||
         q "$T/idx/misplaced.sqlite" "SELECT count(*) FROM sqlite_schema WHERE name = 'vec_term_blocks'")
    is "$(q "$T/idx/misplaced.sqlite" "SELECT count(*) FROM vec_models") $vt $lp" "0 0 0" \
        "no vectors and no line postings were stored"
    ask "$T/idx/misplaced.sqlite" "where is the session flushed?"
    dump "$T/idx/misplaced.sqlite" stamps >"$T/misplaced.txt"
    test -s "$T/misplaced.txt" && cmp -s "$T/fresh.txt" "$T/misplaced.txt"
    ok $? "the first question stores the rows a fresh index holds"
else
    skip "no $DRQA_HOOKS (make check builds it)"
    skip "no $DRQA_HOOKS"
    skip "no $DRQA_HOOKS"
    skip "no $DRQA_HOOKS"
fi

# what a first question stores when the index has none
cp "$I" "$T/idx/b.sqlite"
underive "$T/idx/b.sqlite"
ask "$T/idx/b.sqlite" "where is the session flushed?"
dump "$T/idx/b.sqlite" stamps >"$T/asked.txt"
test -s "$T/asked.txt" && cmp -s "$T/fresh.txt" "$T/asked.txt"
ok $? "the same rows, stamps included, as a first question stores"

# the first question on the fresh index finds them current: it writes no
# row (but directory listings, which a walk within their mtime's second
# reads again)
rows() { q "$1" .dump | grep -v '^INSERT INTO dirs '; }
rows "$I" >"$T/before.sql"
ask "$I" "where is the session flushed?"
ok $? "the first question answers"
rows "$I" >"$T/after.sql"
cmp -s "$T/before.sql" "$T/after.sql"
ok $? "and writes no row of the index"

# updates in place: a changed file and a deleted one
printf '\ndef derived_marker_function():\n    """Marks the change."""\n    return 1\n' >>"$R/tinyweb/app.py"
rm "$R/tinyweb/testing.py"
"$DRQA" --no-progress --index "$I" --index-only "$R" >/dev/null 2>&1
ok $? "an update in place"
ask "$I" "where is the session flushed?"
"$DRQA" --no-progress --index "$T/idx/c.sqlite" --index-only "$R" >/dev/null 2>&1
dump "$I" >"$T/updated.txt"
dump "$T/idx/c.sqlite" >"$T/fresh2.txt"
is "$(q "$I" "SELECT count(*) FROM vec_term_blocks WHERE instr(x'00' || terms, x'00' || CAST('derived' AS BLOB) || x'00') > 0
              OR instr(x'00' || terms, x'00' || CAST('derivedmarkerfunction' AS BLOB) || x'00') > 0")" "1" \
    "the updated index's vectors know the new function's terms"
cmp -s "$T/updated.txt" "$T/fresh2.txt"
ok $? "and equal a fresh index's of the same tree"

# big files (128 KiB or more) are parsed ahead of their place in path order
# (src/index_pool.c, pool_order) and written in that order; the line
# postings, which go by path order, are still the ones a first question
# stores; a skipped file among them takes its place too
B="$T/bigrepo"
cp -R "$FIX" "$B"
for g in aa mid zz; do
    "$PYTHON3" -c 'import sys
for i in range(2400):
    print("def rule_%s_%d(expr, session):\n    return session.flush(expr + %d)\n" % (sys.argv[1], i, i))' "$g" \
        >"$B/tinyweb/${g}_generated.py"
done
printf 'x\000binary\000' >"$B/tinyweb/blob.py"
"$DRQA" --no-progress --threads 2 --index "$T/idx/big.sqlite" --index-only "$B" >/dev/null 2>&1
ok $? "a tree with big files, on two parser threads"
by() { q "$1" "SELECT group_concat(path, ' ') FROM (SELECT path FROM files ORDER BY $2)"; }
written=$(by "$T/idx/big.sqlite" id)
test -n "$written" && [ "$written" != "$(by "$T/idx/big.sqlite" path)" ]
ok $? "its files were written out of path order"
is "$(q "$T/idx/big.sqlite" "SELECT count(*) FROM skipped WHERE path = 'tinyweb/blob.py'")" "1" "the binary file was skipped"
is "$(q "$T/idx/big.sqlite" "SELECT count(*) FROM lp_meta WHERE key = 'stamp'")" "1" "the build stored the line postings"
dump "$T/idx/big.sqlite" stamps >"$T/big.txt"
cp "$T/idx/big.sqlite" "$T/idx/big2.sqlite"
underive "$T/idx/big2.sqlite"
R="$B"
ask "$T/idx/big2.sqlite" "where is the session flushed?"
dump "$T/idx/big2.sqlite" stamps >"$T/big-asked.txt"
test -s "$T/big.txt" && cmp -s "$T/big.txt" "$T/big-asked.txt" || diff "$T/big.txt" "$T/big-asked.txt" | cut -c1-150 | head -8 | sed "s/^/# /"; cmp -s "$T/big.txt" "$T/big-asked.txt"
ok $? "the same rows, stamps included, as a first question stores"
"$DRQA" --no-progress --threads 1 --index "$T/idx/big1.sqlite" --index-only "$B" >/dev/null 2>&1
is "$(by "$T/idx/big1.sqlite" id)" "$(by "$T/idx/big1.sqlite" path)" "on one thread they are written in path order"
echo "1..$n"
exit $fail
