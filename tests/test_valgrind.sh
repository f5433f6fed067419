#!/bin/sh
# Memcheck over the headless paths on the pyrepo fixture: --index-only (a
# fresh index, then an unchanged update), --action (FindClass, ViewCode,
# SemanticSearch and a refused path) and an offline --ask with a transcript.
# Each must finish with no memory error and no definite or indirect leak
# (valgrind --error-exitcode=1 --leak-check=full). Skipped when valgrind is
# not installed, and in sanitizer builds (ASan and valgrind do not mix; the
# sanitizer stage checks leaks itself).
: "${top_srcdir:=.}" "${DRQA:=./drqa-tui}"
if ! command -v valgrind >/dev/null 2>&1; then
    echo "1..0 # SKIP valgrind is not installed"
    exit 0
fi
if ldd "$DRQA" 2>/dev/null | grep -q 'libasan\|libubsan'; then
    echo "1..0 # SKIP a sanitizer build (valgrind needs a plain one)"
    exit 0
fi
. "$top_srcdir/tests/lib.sh"
cp -r "$top_srcdir/tests/fixtures/pyrepo" "$T/repo"
# vg WANT_STATUS DESCRIPTION ARGS...: the program under memcheck
vg() {
    want=$1 desc=$2 k=$((n + 1))
    shift 2
    valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --show-leak-kinds=definite,indirect --log-file="$T/vg$k.log" \
        "$DRQA" --index "$T/index.sqlite" --no-progress "$@" >"$T/out$k" 2>"$T/err$k"
    rc=$?
    if [ $rc = "$want" ]; then ok 0 "$desc: clean under memcheck (exit $rc)"; else
        ok 1 "$desc: exit $rc (want $want; 99 = memcheck errors)"
        grep -A12 'Invalid\|uninitialised\|definitely lost\|indirectly lost\|ERROR SUMMARY' "$T/vg$k.log" | head -60 |
            sed 's/^/#   /'
        sed 's/^/#   stderr: /' "$T/err$k" | head -5
    fi
}
vg 0 "--index-only, a fresh index" --index-only "$T/repo"
vg 0 "--index-only, unchanged" --index-only "$T/repo"
vg 0 "--action FindClass" --action FindClass '{"class_name":"App"}' "$T/repo"
vg 0 "--action ViewCode" --action ViewCode '{"code_span_list":["tinyweb/routing.py:Router","tinyweb/auth.py:1-9"]}' "$T/repo"
vg 0 "--action SemanticSearch" --action SemanticSearch '{"query":"where is the session saved"}' "$T/repo"
vg 2 "--action with a path out of the repository" --action ViewCode '{"code_span_list":["../../etc/passwd"]}' "$T/repo"
vg 0 "--ask (offline policy) with a transcript" --ask "Where is the session flushed?" --policy offline \
    --iterations 4 --transcript-dir "$T/tr" "$T/repo"
echo "1..$n"
exit $fail
