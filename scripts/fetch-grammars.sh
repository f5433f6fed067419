#!/bin/sh
# Fetch tree-sitter grammar sources (generated parser.c + scanner.c) from npm into
# grammars/ (ignored by git). Versions are pinned to language ABI 14, the newest
# that Debian 12's libtree-sitter 0.20.7 accepts; newer releases are ABI 15 and
# fail at run time.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
dest="$top/grammars"
mkdir -p "$dest"
fetch() { # name version
    name=$1 ver=$2
    if [ -f "$dest/$name/src/parser.c" ] && [ "$(cat "$dest/$name/.version" 2>/dev/null)" = "$ver" ]; then
        return 0
    fi
    tmp=$(mktemp -d)
    (cd "$tmp" && npm pack --silent "$name@$ver" >/dev/null)
    rm -rf "${dest:?}/$name"
    mkdir -p "$dest/$name"
    tar -xzf "$tmp"/*.tgz -C "$dest/$name" --strip-components=1 package/src package/package.json
    rm -rf "$tmp"
    abi=$(sed -n 's/^#define LANGUAGE_VERSION \([0-9]*\)/\1/p' "$dest/$name/src/parser.c")
    if [ "$abi" != 14 ]; then
        echo "fetch-grammars: $name@$ver has language ABI '$abi'; libtree-sitter 0.20 needs 14" >&2
        exit 1
    fi
    echo "$ver" > "$dest/$name/.version"
    echo "fetch-grammars: $name@$ver (ABI $abi) in $dest/$name"
}
fetch tree-sitter-python 0.23.6
