#!/bin/sh
# Everything from a fresh Debian 12 checkout to a built ./drqa-tui: packages
# (as root), grammar sources from npm, the autotools build. Extra arguments go
# to configure (e.g. --enable-asan).
# Also the test-only Node tools of the MCP tests (scripts/test-deps.sh, into
# test-deps/; skipped when already installed from the same lock file).
set -e
cd "$(dirname "$0")/.."
scripts/deps-debian.sh
scripts/fetch-grammars.sh
scripts/test-deps.sh
./autogen.sh
./configure -q "$@"
make -j"$(nproc)"
