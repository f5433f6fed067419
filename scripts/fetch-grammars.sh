#!/bin/sh
# Fetch tree-sitter grammar sources (generated parser.c + scanner.c) from npm into
# grammars/ (ignored by git): for each package of src/languages.def, its pinned
# version, the folders holding its languages' parser.c, and a shared common/
# folder when the package has one (TypeScript's scanners include
# ../../common/scanner.h). The pins are language ABI 14, the newest that
# Debian 12's libtree-sitter 0.20.7 accepts; newer releases are ABI 15 and fail
# at run time.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
dest="$top/grammars"
table="$top/src/languages.def"
mkdir -p "$dest"
fetch() { # package version folder... (each holding parser.c)
    name=$1 ver=$2
    shift 2
    dirs=$*
    ok=yes
    for d in $dirs; do [ -f "$dest/$name/$d/parser.c" ] || ok=no; done
    if [ $ok = yes ] && [ "$(cat "$dest/$name/.version" 2>/dev/null)" = "$ver" ]; then
        return 0
    fi
    tmp=$(mktemp -d)
    # gone however the script ends (npm unreachable, a tarball without the
    # files); set here, in the loop's subshell, which keeps no outer trap
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && npm pack --silent "$name@$ver" >/dev/null)
    want="package/package.json package/common/"
    for d in $dirs; do want="$want package/$d/"; done
    tar -tzf "$tmp"/*.tgz | awk -v want="$want" '
        BEGIN { n = split(want, w, " ") }
        { for (i = 1; i <= n; i++) if (index($0, w[i]) == 1) { print; next } }' >"$tmp/members"
    # unpacked and checked beside, so that a bad package leaves the grammar
    # fetched before in place
    mkdir "$tmp/x"
    tar -xzf "$tmp"/*.tgz -C "$tmp/x" --strip-components=1 -T "$tmp/members"
    for d in $dirs; do
        if [ ! -f "$tmp/x/$d/parser.c" ]; then
            echo "fetch-grammars: $name@$ver has no $d/parser.c; $dest/$name is left as it was" >&2
            exit 1
        fi
        abi=$(sed -n 's/^#define LANGUAGE_VERSION \([0-9]*\)/\1/p' "$tmp/x/$d/parser.c")
        if [ "$abi" != 14 ]; then
            echo "fetch-grammars: $name@$ver ($d) has language ABI '$abi'; libtree-sitter 0.20 needs 14;" \
                "$dest/$name is left as it was" >&2
            exit 1
        fi
    done
    echo "$ver" >"$tmp/x/.version"
    rm -rf "${dest:?}/$name"
    mv "$tmp/x" "$dest/$name"
    rm -rf "$tmp"
    trap - EXIT
    echo "fetch-grammars: $name@$ver (ABI $abi) in $dest/$name"
}
# one line per package: package version folder...
packages=$(sed -n 's/^DRQA_LANGUAGE([^,]*, *"\([^"]*\)", *"\([^"]*\)", *"\([^"]*\)".*/\1 \2 \3/p' "$table" |
    awk '{ if (!($1 in ver)) { order[n++] = $1; ver[$1] = $2 }
           else if (ver[$1] != $2) { print "fetch-grammars: " $1 " pinned to both " ver[$1] " and " $2 > "/dev/stderr"; exit 1 }
           dirs[$1] = dirs[$1] " " $3 }
         END { for (i = 0; i < n; i++) print order[i], ver[order[i]] dirs[order[i]] }')
[ -n "$packages" ] || { echo "fetch-grammars: no languages read from $table" >&2; exit 1; }
echo "$packages" | while read -r pkg ver dirs; do
    # shellcheck disable=SC2086 # dirs: one word per folder
    fetch "$pkg" "$ver" $dirs
done
