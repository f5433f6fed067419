#!/bin/sh
# Fetch tree-sitter grammar sources (generated parser.c + scanner.c) from npm into
# grammars/ (ignored by git). Versions are pinned to language ABI 14, the newest
# that Debian 12's libtree-sitter 0.20.7 accepts; newer releases are ABI 15 and
# fail at run time.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
dest="$top/grammars"
mkdir -p "$dest"
fetch() { # name version [package folders holding src/, default: the package root]
    name=$1 ver=$2
    shift 2
    dirs=${*:-.}
    first=${dirs%% *}
    if [ -f "$dest/$name/$first/src/parser.c" ] && [ "$(cat "$dest/$name/.version" 2>/dev/null)" = "$ver" ]; then
        return 0
    fi
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$name@$ver" >/dev/null)
    rm -rf "${dest:?}/$name"
    mkdir -p "$dest/$name"
    members="package/package.json"
    for d in $dirs; do
        if [ "$d" = . ]; then members="$members package/src"; else members="$members package/$d/src"; fi
    done
    # TypeScript's scanners include ../../common/scanner.h.
    [ "$name" = tree-sitter-typescript ] && members="$members package/common"
    # shellcheck disable=SC2086
    tar -xzf "$tmp"/*.tgz -C "$dest/$name" --strip-components=1 $members
    rm -rf "$tmp"
    for d in $dirs; do
        abi=$(sed -n 's/^#define LANGUAGE_VERSION \([0-9]*\)/\1/p' "$dest/$name/$d/src/parser.c")
        if [ "$abi" != 14 ]; then
            echo "fetch-grammars: $name@$ver ($d) has language ABI '$abi'; libtree-sitter 0.20 needs 14" >&2
            exit 1
        fi
    done
    echo "$ver" > "$dest/$name/.version"
    echo "fetch-grammars: $name@$ver (ABI $abi) in $dest/$name"
}
fetch tree-sitter-python 0.23.6
fetch tree-sitter-java 0.23.5
fetch tree-sitter-javascript 0.23.1
fetch tree-sitter-go 0.23.4
# 0.23.2 is the newest release whose typescript/ and tsx/ parsers are ABI 14.
fetch tree-sitter-typescript 0.23.2 typescript tsx
