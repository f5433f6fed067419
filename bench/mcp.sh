#!/bin/sh
# bench/mcp.sh: tool-call latency of drqa-tui --mcp over stdio (p50 and p95
# per tool, N calls each, from writing the request to reading its response,
# the index's freshness check included) next to the same action run as
# `drqa-tui --action` (process start and index check included: what an agent
# without the server pays per lookup), with the ratio of the p50s. The
# anchor is --action, measured in the same run on the same index.
#
# usage: bench/mcp.sh [REPO] [N]     (run from the build directory;
# default: Debian's Django sources, apt-get install python3-django)
set -e
REPO=${1:-/usr/lib/python3/dist-packages/django}
N=${2:-30}
B=${top_builddir:-.}
S=$(dirname "$0")
T=$(mktemp -d /tmp/drqa-bench-mcp-XXXXXX)
trap 'rm -rf "$T"' EXIT
[ -x "$B/drqa-tui" ] || { echo "bench/mcp.sh: build first (make) and run from the build directory" >&2; exit 2; }
[ -d "$REPO" ] || { echo "bench/mcp.sh: no repository at $REPO (apt-get install python3-django, or give one)" >&2; exit 2; }
export HOME="$T/home" XDG_CACHE_HOME="$T/cache" XDG_CONFIG_HOME="$T/config"
unset DRQA_API_KEY DRQA_MODEL DRQA_API_BASE OPENAI_API_KEY ANTHROPIC_API_KEY OLLAMA_HOST
echo "repository: $REPO"
"$B/drqa-tui" --index-only --no-progress --index "$T/index.sqlite" "$REPO" | grep -E '^(files|time)' || true
"${PYTHON3:-python3}" "$S/mcp_bench.py" "$B/drqa-tui" "$T/index.sqlite" "$REPO" "$N"
