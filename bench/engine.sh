#!/bin/sh
# engine: what the LLM policy and the search engine cost around the model, on
# a copy of Debian's python3-flask sources against the loopback fake model
# server (tests/fake_llm.py; no real model is involved, so nothing here says
# anything about answer quality). Not a test: it prints three measurements.
#
#   1. Engine overhead per iteration, excluding action and model time: one
#      15-iteration question with instant fake replies; wall time minus the
#      time inside actions and inside model calls, per iteration. Printed next
#      to the mean model round trip and the mean action of the same run, and
#      against the goal of 5 ms.
#   2. Input tokens per question at 15 iterations (the fake reports
#      ceil(prompt characters / 4)): fifteen distinct scripted actions over
#      flask (SemanticSearch among them, with local vectors), the evidence
#      filter asked on every result (its upper bound) and
#      keeping every raw span it is shown. Printed in full, and split into
#      the part a server's prefix cache serves and the rest: from the fake's
#      request log, each request's longest common prefix with the previous
#      request of the same role, in whole blocks of 16 tokens (64 bytes), as
#      vLLM's automatic prefix caching keeps them; the goal (30k) is on the
#      rest, the input a server must process anew; the paper's 78,681
#      (Table B1, average) is the anchor for the full count.
#   3. Wall time with 500 ms fake latency per reply, --parallel 1 against
#      --parallel 3 (the same script; the filter is not asked, so every
#      iteration is perceive, plan, evaluate); the ratio is the speed-up.
#
#   bench/engine.sh [BUILD_DIR]      (default: $top_builddir or .)
#
# Environment: PYLIB (default /usr/lib/python3/dist-packages), PYTHON3, KEEP
# (set: keep the temporary directory with the fake's request logs).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top_srcdir=${top_srcdir:-$(dirname "$here")}
build=$(cd "${1:-${top_builddir:-.}}" && pwd)
pylib=${PYLIB:-/usr/lib/python3/dist-packages}
py=${PYTHON3:-python3}
if [ ! -d "$pylib/flask" ]; then
    echo "engine.sh: '$pylib/flask' is missing (apt-get install python3-flask, or set PYLIB)" >&2
    exit 2
fi
make -s -C "$build" drqa-tui bench/bench_engine >&2
drqa=$build/drqa-tui
driver=$build/bench/bench_engine

T=$(mktemp -d "${TMPDIR:-/tmp}/drqa-bench-engine.XXXXXX")
fake_pid=
cleanup() {
    if [ -n "$fake_pid" ]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
    if [ -n "${KEEP:-}" ]; then echo "engine.sh: kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT INT TERM
export HOME="$T/home" XDG_CACHE_HOME="$T/cache" XDG_CONFIG_HOME="$T/config"
export NO_PROXY=127.0.0.1,localhost no_proxy=127.0.0.1,localhost
mkdir -p "$T/repo" "$T/config"
cp -r "$pylib/flask" "$T/repo/flask"
rm -rf "$T/repo/flask/__pycache__"
"$drqa" --index-only --quiet --no-progress --index "$T/index.sqlite" "$T/repo" >/dev/null

question="How does Flask dispatch a request to its view function and handle the exceptions the view raises?"

# The scripts: fifteen distinct actions; for each one the filter keeps every
# raw span the action returns (so its reply is always valid).
"$py" - "$drqa" "$T" <<'EOF'
import json, subprocess, sys
drqa, T = sys.argv[1], sys.argv[2]
plans = [
    ("FindFunction", {"function_name": "dispatch_request", "class_name": "Flask"}),
    ("FindFunction", {"function_name": "full_dispatch_request"}),
    ("FindFunction", {"function_name": "handle_user_exception"}),
    ("ViewCode", {"code_span_list": ["flask/app.py:1640-1800"]}),
    ("FindClass", {"class_name": "Flask"}),
    ("FindReferences", {"symbol": "Flask.dispatch_request"}),
    ("FindFunction", {"function_name": "handle_exception"}),
    ("Outline", {"path": "flask/app.py"}),
    ("FindCodeSnippet", {"code_snippet": "self.view_functions[rule.endpoint]"}),
    ("FindFunction", {"function_name": "preprocess_request"}),
    ("FindFunction", {"function_name": "finalize_request"}),
    ("ViewCode", {"code_span_list": ["flask/ctx.py:1-120"]}),
    ("FindClass", {"class_name": "RequestContext"}),
    ("FindFunction", {"function_name": "wsgi_app"}),
    ("SemanticSearch", {"query": "call the view function and handle exceptions it raises"}),
]
perception = {"summary": "dispatch_request and full_dispatch_request are found; error handling not yet read",
              "redundant": ["FindFunction dispatch_request again"],
              "unexplored": ["flask/app.py handle_user_exception", "flask/ctx.py RequestContext.push"],
              "gaps": ["how exceptions from the view reach handle_exception"],
              "candidates": ["Flask.handle_user_exception", "Flask.handle_exception", "Flask.finalize_request"]}
values = [70, 55, 80, 40, 65, 75, 30, 60, 85, 50, 45, 72, 68, 58, 77]
rules, filters, first = [], [], None
for name, args in plans:
    rules.append({"match": "You are the Planning Agent", "times": 1,
                  "content": json.dumps({"rationale": "next lead", "action": name, "args": args})})
    out = subprocess.run([drqa, "--index", T + "/index.sqlite", "--action", name, json.dumps(args), T + "/repo"],
                         capture_output=True, text=True, check=True)
    ev = json.loads(out.stdout).get("evidence", [])
    if ev:
        spans = [{"path": e["path"], "start_line": e["start_line"], "end_line": e["end_line"]} for e in ev]
        filters.append({"match": "You are the Evidence Filter", "times": 1, "content": json.dumps({"spans": spans})})
        first = first or "%s:%d-%d" % (ev[0]["path"], ev[0]["start_line"], ev[0]["end_line"])
for v in values:
    rules.append({"match": "You are the Evaluation Agent", "times": 1,
                  "content": json.dumps({"rationale": "scored", "value": v,
                                         "feedback": "inspect the callers of the handler next"})})
common = [{"match": "You are the Perception Agent", "content": json.dumps(perception)},
          {"match": "You are the Answer Agent",
           "content": "Flask.full_dispatch_request calls dispatch_request, which calls the view function; "
                      "exceptions go to handle_user_exception (`%s`)." % first},
          {"match": "You are the Evaluation Agent", "content": json.dumps({"value": 50, "feedback": "go on"})},
          {"match": "You are the Evidence Filter", "content": json.dumps({"spans": []})}]
for delay, name, fl in ((0, "instant", filters), (500, "slow", [])):
    rs = [dict(r) for r in rules + fl + common]
    if delay:
        for r in rs:
            r["delay_ms"] = delay
    json.dump({"rules": rs}, open("%s/script-%s.json" % (T, name), "w"))
EOF

start_fake() {
    rm -f "$T/port"
    "$py" "$top_srcdir/tests/fake_llm.py" --script "$T/script-$1.json" --log "$T/log-$1.jsonl" \
        --port-file "$T/port" >/dev/null &
    fake_pid=$!
    i=0
    while [ ! -s "$T/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
    export DRQA_API_BASE="http://127.0.0.1:$(cat "$T/port")/v1" DRQA_MODEL=fake-model DRQA_PROVIDER=openai
}
stop_fake() {
    kill "$fake_pid" 2>/dev/null || true
    wait "$fake_pid" 2>/dev/null || true
    fake_pid=
}
run() {   # run NAME SCRIPT DRIVER-OPTIONS...
    name=$1 script=$2
    shift 2
    start_fake "$script"
    "$driver" --prompts "$top_srcdir/prompts" --index "$T/index.sqlite" "$@" "$T/repo" "$question" >"$T/$name.json"
    stop_fake
}

run tokens instant --filter-always
run seq slow --filter-never --parallel 1
run par slow --filter-never --parallel 3

"$py" - "$T" <<'EOF'
import json, sys
T = sys.argv[1]
r = {n: json.load(open("%s/%s.json" % (T, n))) for n in ("tokens", "seq", "par")}
a = r["tokens"]
it = a["iterations"]
over = (a["wall_ms"] - a["action_ms"] - a["model_ms"]) / it
rt = a["model_ms"] / a["calls"]
act = a["action_ms"] / it
print("1. engine overhead per iteration (instant fake, %d iterations, %d model calls)" % (it, a["calls"]))
print("   overhead %.2f ms/iteration   [goal <= 5 ms: %s]" % (over, "met" if over <= 5 else "NOT met"))
print("   anchor: one model round trip %.2f ms -> overhead = %.2fx a round trip" % (rt, over / rt))
print("   anchor: actions %.2f ms/iteration -> overhead = %.2fx the actions" % (act, over / act if act else 0))
print()
tin = a["tokens_in"]
print("2. input tokens per question at %d iterations (stop: %s, node errors %d, fallbacks %d)" % (
    it, a["stop"], a["node_errors"], a["fallback_notes"]))
roles = ("Perception Agent", "Planning Agent", "Evidence Filter", "Evaluation Agent", "Answer Agent")
prev, cached = {}, 0
for line in open("%s/log-instant.jsonl" % T):
    req = json.loads(line)
    if not req.get("path", "").endswith("/chat/completions"):
        continue
    body = json.loads(req["body"])
    text = "".join(m.get("content") or "" for m in body.get("messages", []))
    role = next((r for r in roles if "You are the " + r in text), "other")
    old = prev.get(role, "")
    n = 0
    lim = min(len(old), len(text))
    while n < lim and old[n] == text[n]:
        n += 1
    cached += (n // 64) * 16
    prev[role] = text
fresh = tin - cached
print("   input %d (of which a prefix cache serves %d; new input %d), output %d   [goal: new input <= 30000: %s]" % (
    tin, cached, fresh, a["tokens_out"], "met" if fresh <= 30000 else "NOT met"))
print("   ratio to the paper's 78,681: %.2f (all input), %.2f (new input)" % (tin / 78681.0, fresh / 78681.0))
by = a["usage"].get("by_tag", {})
print("   by role: " + ", ".join("%s %d in / %d calls" % (k, v["input_tokens"], v["calls"]) for k, v in sorted(by.items())))
print()
s, p = r["seq"], r["par"]
print("3. wall time with 500 ms fake latency (%d and %d iterations, %d and %d calls)" % (
    s["iterations"], p["iterations"], s["calls"], p["calls"]))
print("   --parallel 1: %.1f s   --parallel 3: %.1f s   speed-up %.2fx   [goal >= 2x: %s]" % (
    s["wall_ms"] / 1000, p["wall_ms"] / 1000, s["wall_ms"] / p["wall_ms"],
    "met" if s["wall_ms"] / p["wall_ms"] >= 2 else "NOT met"))
EOF
