#!/bin/sh
# test_fetch_grammars.sh: scripts/fetch-grammars.sh leaves nothing behind and
# loses nothing when a download fails. A copy of the script runs with a fake
# npm first in PATH and TMPDIR private:
#   npm fails (registry unreachable): the script fails with npm's message, its
#   scratch directory is gone, and the grammar fetched before is still there;
#   npm hands over a tarball without the grammar's sources, or with sources of
#   another language ABI: the script fails naming the package, the grammar
#   fetched before is kept, and the scratch directory is gone;
#   npm hands over good sources: each grammar is replaced, its version
#   recorded, and nothing is left in TMPDIR.
set -u
: "${top_srcdir:?}"
. "$top_srcdir/tests/lib.sh"

copy="$T/copy"
mkdir -p "$copy/scripts" "$copy/src" "$T/bin" "$T/tmp"
cp "$top_srcdir/scripts/fetch-grammars.sh" "$copy/scripts/"
cp "$top_srcdir/src/languages.def" "$copy/src/"
# the grammar of an earlier fetch, at another version: the script would fetch again
old="$copy/grammars/tree-sitter-python"
mkdir -p "$old/src"
echo '/* fetched before */' >"$old/src/parser.c"
echo 0.0.1 >"$old/.version"

cat >"$T/bin/npm" <<'NPM'
#!/bin/sh
case "$FAKE_NPM" in
down) echo "npm error code ECONNREFUSED (fake npm)" >&2; exit 7 ;;
empty) # a package without its generated sources
    mkdir package && echo '{}' >package/package.json && tar -czf pkg.tgz package && rm -r package ;;
abi*) # generated sources of language ABI ${FAKE_NPM#abi}, in every folder a package of ours has
    for d in src typescript/src tsx/src; do
        mkdir -p "package/$d" && printf '#define LANGUAGE_VERSION %s\n/* %s */\n' "${FAKE_NPM#abi}" "$3" >"package/$d/parser.c"
    done
    # files only, no directory entries, as npm packs them
    echo '{}' >package/package.json && find package -type f | tar -czf pkg.tgz -T - && rm -r package ;;
esac
NPM
chmod +x "$T/bin/npm"

run() { FAKE_NPM=$1 TMPDIR="$T/tmp" PATH="$T/bin:$PATH" sh "$copy/scripts/fetch-grammars.sh" >"$T/out" 2>"$T/err"; }

run down
rc=$?
ok "$([ "$rc" -ne 0 ]; echo $?)" "npm unreachable: the script fails (exit $rc)"
like "$(cat "$T/err")" "ECONNREFUSED (fake npm)" "and says what npm said"
is "$(ls -A "$T/tmp")" "" "its scratch directory is gone"
is "$(cat "$old/src/parser.c" 2>/dev/null)" "/* fetched before */" "the grammar fetched before is still there"

for bad in empty abi15; do
    run $bad
    rc=$?
    ok "$([ "$rc" -ne 0 ]; echo $?)" "$bad: the script fails (exit $rc)"
    like "$(cat "$T/err")" "fetch-grammars: tree-sitter-python@" "and names the package"
    like "$(cat "$T/err")" "is left as it was" "and says the grammar before is kept"
    is "$(cat "$old/src/parser.c" 2>/dev/null)" "/* fetched before */" "which it is"
    is "$(ls -A "$T/tmp")" "" "its scratch directory is gone"
done

run abi14
is "$?" 0 "good sources: the script succeeds"
like "$(cat "$old/src/parser.c" 2>/dev/null)" "tree-sitter-python@" "the grammar is the new one"
ver=$(sed -n 's/^DRQA_LANGUAGE([^,]*, *"tree-sitter-python", *"\([^"]*\)".*/\1/p' "$copy/src/languages.def" | head -1)
is "$(cat "$old/.version")" "$ver" "its version recorded ($ver)"
is "$(ls -A "$T/tmp")" "" "nothing left in TMPDIR"
run abi14
is "$(cat "$T/out")" "" "run again: nothing fetched, nothing said"

echo "1..$n"
exit $fail
