#!/bin/sh
# Install what drqa-tui needs to build, test and benchmark on Debian 12.
# Run as root. Packages already present are left alone; apt-get update runs only
# when something is missing.
set -e
PKGS="build-essential autoconf automake pkg-config
 libtree-sitter-dev libcjson-dev libcurl4-openssl-dev libncurses-dev libsqlite3-dev sqlite3 zlib1g-dev
 libmicrohttpd-dev
 python3 git tmux universal-ctags ripgrep hyperfine valgrind clang
 python3-flask python3-requests python3-django
 python3-sympy time strace locales"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
# npm: any working npm will do. Many images ship Node.js from another source
# (e.g. nodesource's nodejs, which bundles npm); asking apt for Debian's npm
# there conflicts with that nodejs and apt refuses the whole install.
command -v npm >/dev/null 2>&1 || missing="$missing npm"
if [ -z "$missing" ]; then
    echo "deps-debian: all packages present"
else
    if [ "$(id -u)" != 0 ]; then
        echo "deps-debian: missing packages:$missing" >&2
        echo "deps-debian: run this script as root (or install them with apt-get)" >&2
        exit 1
    fi
    echo "deps-debian: installing:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    # shellcheck disable=SC2086
    apt-get install -y -qq --no-install-recommends $missing
fi
command -v npm >/dev/null 2>&1 || { echo "deps-debian: npm not found after install" >&2; exit 1; }
