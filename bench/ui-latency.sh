#!/bin/sh
# bench/ui-latency.sh: key-to-screen latency of the front end, idle and while
# the search worker is busy, in one run. drqa-tui runs in a private tmux
# server (80x24) with --policy llm against the loopback fake model server
# (tests/fake_llm.py), every reply delayed by DELAY_MS, so the worker is
# always waiting on a request or posting events. The search starts paused
# (idle figure), then is resumed (busy figure). Each sample sends '?' or Esc
# and times until capture-pane (through one tmux control-mode client) shows
# the help screen opened or closed; Esc includes the 25 ms escape delay and
# the polling is part of both figures, so read the ratio.
#
# usage: bench/ui-latency.sh [BUILD_DIR]   (default: the current directory)
# env:   SAMPLES (default 60), DELAY_MS (default 150), REPO (the repository
#        searched; default a copy of the pyrepo fixture; e.g.
#        REPO=/usr/lib/python3/dist-packages/django)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
DRQA=$(cd "$build" && pwd)/drqa-tui
[ -x "$DRQA" ] || { echo "no drqa-tui in $build (give the build directory)" >&2; exit 2; }
command -v tmux >/dev/null || { echo "tmux is needed" >&2; exit 2; }
PYTHON3=${PYTHON3:-python3}
T=$(mktemp -d "${TMPDIR:-/tmp}/drqa-ui-bench.XXXXXX")
SOCK="drqa-ui-bench-$$"
fake_pid=
cleanup() {
    [ -n "$fake_pid" ] && kill "$fake_pid" 2>/dev/null || true
    tmux -L "$SOCK" kill-server 2>/dev/null || true
    rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SOCK"
    rm -rf "$T"
}
trap cleanup EXIT
export HOME="$T/home" XDG_CACHE_HOME="$T/cache" XDG_CONFIG_HOME="$T/config" XDG_DATA_HOME="$T/data"
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
mkdir -p "$HOME"
if [ -n "${REPO:-}" ]; then
    repo=$(cd "$REPO" && pwd)
else
    cp -R "$here/tests/fixtures/pyrepo" "$T/repo"
    repo=$T/repo
fi
"$DRQA" --index-only --no-progress --index "$T/idx.sqlite" "$repo" >/dev/null
echo "repository: $repo"
d=${DELAY_MS:-150}
cat >"$T/script.json" <<JSON
{"rules": [
 {"match": "You are the Perception Agent", "delay_ms": $d, "content": "{\"summary\": \"go on\", \"candidates\": []}"},
 {"match": "You are the Planning Agent", "delay_ms": $d,
  "content": "{\"action\": \"SemanticSearch\", \"args\": {\"query\": \"request dispatch\"}}"},
 {"match": "You are the Evidence Filter", "delay_ms": $d, "content": "{\"spans\": []}"},
 {"match": "You are the Evaluation Agent", "delay_ms": $d, "content": "{\"value\": 40, \"feedback\": \"more\"}"}
], "default": {"delay_ms": $d, "content": "{}"}}
JSON
"$PYTHON3" "$here/tests/fake_llm.py" --script "$T/script.json" --log /dev/null --port-file "$T/port" >/dev/null &
fake_pid=$!
i=0
while [ ! -s "$T/port" ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i + 1)); done
port=$(cat "$T/port")
tmux -L "$SOCK" -f /dev/null new-session -d -s b -x 80 -y 24 \
    "env LANG=C.UTF-8 DRQA_TUI_START_PAUSED=1 DRQA_API_KEY=sk-bench '$DRQA' --policy llm \
     --api-base http://127.0.0.1:$port/v1 --model fake-model --iterations 10000 --max-expand 20 \
     --index '$T/idx.sqlite' '$repo' 'How are requests dispatched?'; sleep 600"
"$PYTHON3" - "$SOCK" "${SAMPLES:-60}" <<'PY'
import subprocess, sys, time
sock, samples = sys.argv[1], int(sys.argv[2])
# One control-mode client for every command: spawning a tmux client per
# capture costs tens of milliseconds and would swamp what is measured.
ctl = subprocess.Popen(["tmux", "-L", sock, "-C", "attach-session", "-t", "b"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, text=True, bufsize=1)
def send(*a):
    ctl.stdin.write(" ".join("'%s'" % x.replace("'", "'\\''") for x in a) + "\n")
    ctl.stdin.flush()
def block():
    out, inside = [], False
    for line in ctl.stdout:
        if line.startswith("%begin"):
            inside = True
        elif line.startswith("%end") or line.startswith("%error"):
            if inside:
                return "".join(out)
        elif inside:
            out.append(line)
    raise SystemExit("tmux control client ended")
def tm(*a):
    send(*a)
    return block()
# attach-session answers with a block of its own: skip to a known reply.
send("display-message", "-p", "drqa-sync")
while "drqa-sync" not in block():
    pass
def screen():
    return tm("capture-pane", "-p", "-t", "b")
def wait(pred, limit=20.0):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        s = screen()
        if pred(s):
            return s
    raise SystemExit("timed out; screen:\n" + screen())
def sample():
    """One open + close of the help screen: two latencies in ms."""
    out = []
    for key, want in (("?", True), ("Escape", False)):
        t0 = time.perf_counter()
        tm("send-keys", "-t", "b", key)
        wait(lambda s: ("Help: drqa-tui keys" in s) == want)
        out.append((time.perf_counter() - t0) * 1000)
    return out
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
wait(lambda s: "| paused" in s)
idle_s = [sample() for _ in range(samples // 2)]
idle = [x for pair in idle_s for x in pair]
tm("send-keys", "-t", "b", "p")
wait(lambda s: "| searching" in s)
wait(lambda s: "iter 2/" in s)          # requests are flowing
busy_s = [sample() for _ in range(samples // 2)]
busy = [x for pair in busy_s for x in pair]
last = screen().rstrip("\n").splitlines()[-2]
t0 = time.perf_counter()
for _ in range(50):
    screen()
poll = (time.perf_counter() - t0) / 50 * 1000
print("key-to-screen latency, %d samples each (ms; one capture through tmux takes %.2f ms)" % (len(idle), poll))
print("  idle (paused):      p50 %6.1f  p95 %6.1f  max %6.1f" % (pct(idle, 50), pct(idle, 95), max(idle)))
print("  busy (llm, %s):  p50 %6.1f  p95 %6.1f  max %6.1f" % ("delayed replies", pct(busy, 50), pct(busy, 95), max(busy)))
print("  ratio busy/idle:    p50 %6.2f  p95 %6.2f" % (pct(busy, 50) / pct(idle, 50), pct(busy, 95) / pct(idle, 95)))
for name, k in (("? (open help)", 0), ("Esc (close help)", 1)):
    i, b = [p[k] for p in idle_s], [p[k] for p in busy_s]
    print("  %-17s idle p50 %6.1f p95 %6.1f | busy p50 %6.1f p95 %6.1f" % (name, pct(i, 50), pct(i, 95), pct(b, 50), pct(b, 95)))
print("  status at the end:", last.strip())
PY
