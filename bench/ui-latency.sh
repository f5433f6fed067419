#!/bin/sh
# bench/ui-latency.sh: key-to-screen latency of the front end, idle and while
# the search worker is busy, in one run. drqa-tui runs in a private tmux
# server (80x24). A sample sends '?' and times until the screen tmux holds
# (capture-pane, through one tmux control-mode client) shows the help screen,
# then sends '?' again and times until it is gone: the time runs from the key
# sent to the screen having changed, the polling included (one capture's cost
# is printed). '?' both ways, so no escape delay is in the figure.
#
# The idle figure (the anchor) is taken while the search is paused; the busy
# one while it runs, and only samples during which the status line said
# "searching" from start to end count. With POLICY=offline (the default) the
# worker runs the offline policy's actions against the index, on the CPU the
# front end shares; when a search ends, the next question of a fixed list is
# asked (not timed) and sampling goes on. With POLICY=llm it waits on the
# loopback fake model server (tests/fake_llm.py), every reply delayed by
# DELAY_MS, so the worker is mostly waiting and posting events.
#
# usage: bench/ui-latency.sh [BUILD_DIR]   (default: the current directory)
# env:   SAMPLES (default 60: key presses per figure), POLICY (offline|llm),
#        GAP_MS (default 100: the pause between two samples, which spreads
#        them over the search),
#        DELAY_MS (llm only, default 150), REPO (the repository searched;
#        default a copy of the pyrepo fixture; e.g.
#        REPO=/usr/lib/python3/dist-packages/django)
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-.}
# the test build: the search starts paused by its hook DRQA_TUI_START_PAUSED
DRQA=$(cd "$build" && pwd)/tests/drqa-tui-hooks
[ -x "$DRQA" ] || { echo "no tests/drqa-tui-hooks in $build (give the build directory; make tests/drqa-tui-hooks)" >&2; exit 2; }
command -v tmux >/dev/null || { echo "tmux is needed" >&2; exit 2; }
PYTHON3=${PYTHON3:-python3}
POLICY=${POLICY:-offline}
case $POLICY in offline|llm) ;; *) echo "POLICY is offline or llm, not '$POLICY'" >&2; exit 2 ;; esac
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
export XDG_STATE_HOME="$T/state"
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
if [ "$POLICY" = llm ]; then
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
    polargs="--policy llm --api-base http://127.0.0.1:$port/v1 --model fake-model --max-expand 20"
else
    polargs="--policy offline --max-expand 5"
fi
tmux -L "$SOCK" -f /dev/null new-session -d -s b -x 80 -y 24 \
    "env LANG=C.UTF-8 DRQA_TUI_START_PAUSED=1 DRQA_API_KEY=sk-bench '$DRQA' $polargs \
     --iterations 10000 --index '$T/idx.sqlite' '$repo' 'How are requests dispatched?'; sleep 600"
"$PYTHON3" - "$SOCK" "${SAMPLES:-60}" "$POLICY" "${GAP_MS:-100}" <<'PY'
import subprocess, sys, time
sock, samples, policy, gap = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]) / 1000
# One control-mode client for every command: spawning a tmux client per
# capture costs milliseconds and would swamp what is measured.
ctl = subprocess.Popen(["tmux", "-L", sock, "-C", "attach-session", "-t", "b"], stdin=subprocess.PIPE,
                       stdout=subprocess.PIPE, text=True, encoding="utf-8", errors="replace", bufsize=1)
def send(*a):
    ctl.stdin.write(" ".join("'%s'" % x.replace("'", "'\\''") for x in a) + "\n")
    ctl.stdin.flush()
def block():
    out, inside = [], False
    for line in ctl.stdout:
        if line.startswith("%begin"):
            inside, out = True, []
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
def status(s):
    """The status line (the row naming the iteration), or ""."""
    for row in reversed(s.split("\n")):
        if " | iter " in row:
            return row
    return ""
HELP = "Help: drqa-tui keys"
def wait(pred, limit=60.0, must=True):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        s = screen()
        if pred(s):
            return s
    if must:
        raise SystemExit("timed out; screen:\n" + screen())
    return None
def sample():
    """'?' opens the help, '?' closes it: two latencies in ms, and whether
    the status line said searching before, between and after."""
    out, busy = [], True
    for want in (True, False):
        t0 = time.perf_counter()
        tm("send-keys", "-t", "b", "?")
        s = wait(lambda s: (HELP in s) == want)
        out.append((time.perf_counter() - t0) * 1000)
        busy = busy and "| searching" in status(s)
    return out, busy
def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(p / 100 * (len(v) - 1))))]
QUESTIONS = ["How are requests dispatched?", "Where are URL patterns resolved?",
             "How is the session cookie signed?", "How are templates rendered?",
             "Where are database queries compiled to SQL?", "How is middleware applied to a request?"]
def iters(s):
    st = status(s)
    try:
        return int(st.split("iter ", 1)[1].split("/", 1)[0])
    except (IndexError, ValueError):
        return 0
s0 = wait(lambda s: "| paused" in status(s) and HELP not in s)
pairs = []
for _ in range((samples + 1) // 2):
    time.sleep(gap)
    pairs.append(sample()[0])
idle = [x for p in pairs for x in p]
# A check of the method: Esc closes the help only after ncurses' escape
# delay (25 ms, set by the front end), so its figure must show that delay.
esc = []
for _ in range(10):
    tm("send-keys", "-t", "b", "?")
    wait(lambda s: HELP in s)
    t0 = time.perf_counter()
    tm("send-keys", "-t", "b", "Escape")
    wait(lambda s: HELP not in s)
    esc.append((time.perf_counter() - t0) * 1000)
tm("send-keys", "-t", "b", "p")
wait(lambda s: "| searching" in status(s))
busy, dropped, asked, ran, qi = [], 0, 1, 0, 1
t_busy = time.monotonic()
while len(busy) < samples and time.monotonic() - t_busy < 600:
    s = screen()
    st = status(s)
    if "| searching" not in st:
        if "| done" in st or "| error" in st:
            # the search ended: ask the next question, untimed (it starts
            # at once; only the first one was started paused)
            ran += iters(s)
            q = QUESTIONS[qi % len(QUESTIONS)]
            qi += 1
            tm("send-keys", "-t", "b", "a")
            wait(lambda s: "Ask:" in s)
            tm("send-keys", "-t", "b", "-l", q)
            tm("send-keys", "-t", "b", "Enter")
            wait(lambda s: "| searching" in status(s), 10.0, False)
            asked += 1
        else:
            time.sleep(0.01)   # answering or indexing: look again shortly
        continue
    time.sleep(gap)   # spread the samples over the search, not its first step
    pair, was_busy = sample()
    if was_busy:
        busy.extend(pair)
    else:
        dropped += 1
if len(busy) < 4:
    raise SystemExit("too few samples while searching (%d); status: %s" % (len(busy), status(screen())))
s = screen()
ran += iters(s)
t0 = time.perf_counter()
for _ in range(50):
    screen()
poll = (time.perf_counter() - t0) / 50 * 1000
print("key-to-screen latency, '?' opening and closing the help (ms; one capture through tmux takes %.2f ms)" % poll)
print("  idle (paused), %3d keys:       p50 %6.1f  p95 %6.1f  max %6.1f" % (len(idle), pct(idle, 50), pct(idle, 95), max(idle)))
print("  searching (%s), %3d keys:  p50 %6.1f  p95 %6.1f  max %6.1f" % (policy, len(busy), pct(busy, 50), pct(busy, 95), max(busy)))
print("  check: Esc, %d keys (ncurses waits 25 ms for more bytes): p50 %6.1f  min %6.1f" % (len(esc), pct(esc, 50), min(esc)))
print("  ratio searching/idle:          p50 %6.2f  p95 %6.2f" % (pct(busy, 50) / pct(idle, 50), pct(busy, 95) / pct(idle, 95)))
print("  %d questions searched, about %d iterations; %d sample pairs dropped (the search ended during them)" % (asked, ran, dropped))
print("  status at the end:", status(s).strip())
PY
