#!/bin/sh
# bench/actions.sh: latency of the actions on a real repository (default:
# Debian's Django sources), measured inside one process by bench/actions_driver
# over N generated calls per action (names, spans and snippets drawn from the
# index with a fixed seed), and FindCodeSnippet against `rg -F` on the same
# tree for the same snippets in the same run, printed as a ratio.
#
# usage: bench/actions.sh [REPO] [N]     (run from the build directory)
set -e
REPO=${1:-/usr/lib/python3/dist-packages/django}
N=${2:-200}
B=${top_builddir:-.}
T=$(mktemp -d /tmp/drqa-bench-actions-XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$B/drqa-tui" ] && [ -x "$B/bench/actions_driver" ] || {
    echo "bench/actions.sh: build first (make; make bench/actions_driver) and run from the build directory" >&2
    exit 2
}
echo "repository: $REPO"
"$B/drqa-tui" --index-only --no-progress --index "$T/index.sqlite" "$REPO" | grep -E '^(files|time)' || true
RG=$(command -v rg || true)
"$B/bench/actions_driver" "$T/index.sqlite" "$REPO" "$N" $RG
