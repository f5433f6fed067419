#!/bin/sh
# test_locale_terms.sh: the terms an index holds (full-text, line postings,
# vectors) do not depend on the locale drqa-tui runs in. The same tree with
# non-ASCII identifiers and words, indexed under C.UTF-8 and under an
# ISO-8859-1 locale made here with localedef (skipped when it cannot be made:
# Debian's locales package has the sources), gives the same terms.
set -u
: "${top_srcdir:?}" "${DRQA:?}"
. "$top_srcdir/tests/lib.sh"

R="$T/repo"
mkdir -p "$R"
printf 'def gr\303\266\303\237e_\303\204pfel(z\303\244hler):\n    """Z\303\204HLER f\303\274r \303\204pfel und CamelCase."""\n    return z\303\244hler\n\n\nclass \303\204rgerHTTPFehler(Exception):\n    pass\n' >"$R/m.py"
# terms INDEX: every term the index stores, with where it comes from
terms() {
    sqlite3 -batch "$1" "CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, 'chunks_fts', 'instance');
        SELECT 'fts', term, col, offset FROM temp.v ORDER BY term, col, offset;
        SELECT 'lp', hex(term), hex(post) FROM lp_terms ORDER BY term;
        SELECT 'vt', hex(terms), hex(dfs) FROM vec_term_blocks ORDER BY first;
        SELECT 'sym', name, qualname FROM symbols ORDER BY id"
}
LC_ALL=C.UTF-8 "$DRQA" --no-progress --index "$T/utf8.sqlite" --index-only "$R" >/dev/null 2>&1
ok $? "indexed under C.UTF-8"
terms "$T/utf8.sqlite" >"$T/utf8.txt"
w1=$(printf 'gr\303\266\303\237e') w2=$(printf 'z\303\244hler')
is "$(sqlite3 -batch "$T/utf8.sqlite" "SELECT count(*) FROM lp_terms WHERE term IN ('$w1', '$w2')")" "2" \
    "a non-ASCII word is one term, its bytes kept"

mkdir -p "$T/loc"
if localedef -i de_DE -f ISO-8859-1 "$T/loc/de_DE.ISO-8859-1" >/dev/null 2>&1 &&
    [ "$(LOCPATH="$T/loc" LC_ALL=de_DE.ISO-8859-1 locale charmap 2>/dev/null)" = ISO-8859-1 ]; then
    # glibc keeps the LOCPATH it parsed for the life of the process, which
    # LeakSanitizer reports in the sanitizer build (__argz_add_sep): not ours
    printf 'leak:__argz_add_sep\n' >"$T/lsan.supp"
    LSAN_OPTIONS="suppressions=$T/lsan.supp${LSAN_OPTIONS:+:$LSAN_OPTIONS}" LOCPATH="$T/loc" LC_ALL=de_DE.ISO-8859-1 \
        "$DRQA" --no-progress --index "$T/latin1.sqlite" --index-only "$R" >/dev/null 2>&1
    ok $? "indexed under ISO-8859-1"
    terms "$T/latin1.sqlite" >"$T/latin1.txt"
    test -s "$T/latin1.txt" && cmp -s "$T/utf8.txt" "$T/latin1.txt"
    ok $? "the same terms under ISO-8859-1 as under C.UTF-8"
else
    skip "localedef cannot make an ISO-8859-1 locale here (Debian's locales package)"
    skip "localedef cannot make an ISO-8859-1 locale here"
fi
echo "1..$n"
exit $fail
