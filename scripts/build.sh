#!/bin/sh
# Everything from a fresh Debian 12 checkout to a built ./drqa-tui: packages
# (as root), grammar sources from npm, the autotools build. Extra arguments go
# to configure (e.g. --enable-asan).
set -e
cd "$(dirname "$0")/.."
scripts/deps-debian.sh
scripts/fetch-grammars.sh
./autogen.sh
./configure -q "$@"
make -j"$(nproc)"
