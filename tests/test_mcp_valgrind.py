#!/usr/bin/env python3
"""test_mcp_valgrind: memcheck over scripted `drqa-tui --mcp` sessions on
the pyrepo fixture: (1) every tool called, ask with a progress token,
recheck, a malformed line, an unknown method, bad arguments, then EOF on
stdin; (2) an ask in flight cancelled by notifications/cancelled, another
stopped by SIGTERM. Each must end with status 0 and no memory error and no
definite or indirect leak. Skipped without valgrind and in sanitizer
builds. TAP."""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import DRQA, TOP, done, private_env  # noqa: E402
import taplib  # noqa: E402


def ok(cond, name, detail=""):
    taplib.ok(cond, name, detail, tail=True)   # a valgrind log ends with what matters


def msg(i, method, params=None):
    m = {"jsonrpc": "2.0", "id": i, "method": method}
    if params is not None:
        m["params"] = params
    return json.dumps(m)


def call(i, name, args, meta=None):
    p = {"name": name, "arguments": args}
    if meta:
        p["_meta"] = meta
    return msg(i, "tools/call", p)


def main():
    if not shutil.which("valgrind"):
        print("1..0 # SKIP valgrind is not installed")
        return 0
    ldd = subprocess.run(["ldd", DRQA], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL).stdout.decode()
    if "libasan" in ldd or "libubsan" in ldd:
        print("1..0 # SKIP a sanitizer build (valgrind needs a plain one)")
        return 0
    tmp = tempfile.mkdtemp(prefix="drqa-test-mcp-vg-")
    try:
        repo = os.path.join(tmp, "repo")
        shutil.copytree(os.path.join(TOP, "tests", "fixtures", "pyrepo"), repo)
        env = private_env(tmp)

        def vg(k):
            return ["valgrind", "--error-exitcode=99", "--leak-check=full",
                    "--errors-for-leak-kinds=definite,indirect", "--show-leak-kinds=definite,indirect",
                    "--log-file=%s/vg%d.log" % (tmp, k), DRQA, "--mcp", "--iterations", "4",
                    "--index", os.path.join(tmp, "index.sqlite"), repo]

        def log(k):
            with open("%s/vg%d.log" % (tmp, k)) as f:
                return f.read()

        # (1) a whole session, ended by EOF
        lines = [msg(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                       "clientInfo": {"name": "vg", "version": "1"}}),
                 '{"jsonrpc":"2.0","method":"notifications/initialized"}',
                 msg(2, "tools/list"),
                 call(3, "find_class", {"class_name": "App"}),
                 call(4, "find_function", {"function_name": "dispatch"}),
                 call(5, "find_code_snippet", {"code_snippet": "def save(self"}),
                 call(6, "semantic_search", {"query": "where is the session saved"}),
                 call(7, "view_code", {"code_span_list": ["tinyweb/routing.py:Router", "../../etc/passwd"]}),
                 call(8, "outline", {"path": "tinyweb/app.py"}),
                 call(9, "list_files", {}),
                 call(10, "find_references", {"symbol": "SessionBase"}),
                 call(11, "ask", {"question": "Where is the session saved?"}, {"progressToken": "t"}),
                 call(12, "recheck", {"saved": {"citations": [{"path": "tinyweb/auth.py", "start_line": 1,
                                                               "end_line": 3, "text_hash": "fnv1a64:0"}]}}),
                 '{"jsonrpc": "2.0", "id": 13, "method": ',
                 msg(14, "nope"),
                 call(15, "find_class", {"klass": "App"}),
                 call(16, "find_klass", {}),
                 msg(17, "logging/setLevel", {"level": "debug"})]
        p = subprocess.run(vg(1), input=("\n".join(lines) + "\n").encode(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env, timeout=900)
        out = [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]
        ids = {m.get("id") for m in out if "method" not in m}
        ok(ids >= set(range(1, 18)) - {13} and any("id" not in m and "error" in m for m in out),
           "session: every request answered", p.stdout.decode()[-2000:])
        ok(p.returncode == 0, "session ended by EOF: clean under memcheck (exit %d)" % p.returncode,
           log(1) + p.stderr.decode()[-1000:])

        # (2) a cancelled ask, then SIGTERM with another in flight
        q = subprocess.Popen(vg(2)[:-1] + ["--iterations", "400", "--finish-threshold", "100", repo],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        q.stdin.write((msg(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                             "clientInfo": {"name": "vg", "version": "1"}}) + "\n").encode())
        q.stdin.write((call("a", "ask", {"question": "Where is the session saved?"}, {"progressToken": "a"}) +
                       "\n").encode())
        q.stdin.flush()
        seen = False
        for raw in q.stdout:
            m = json.loads(raw)
            if m.get("method") == "notifications/progress" and "iteration" in m["params"]["message"]:
                seen = True
                break
        q.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}\n')
        q.stdin.write((call("b", "ask", {"question": "How does routing work?"}, {"progressToken": "b"}) +
                       "\n").encode())
        q.stdin.flush()
        for raw in q.stdout:
            m = json.loads(raw)
            if m.get("method") == "notifications/progress" and m["params"]["progressToken"] == "b" and \
                    "iteration" in m["params"]["message"]:
                break
        q.send_signal(signal.SIGTERM)
        rest, err = q.communicate(timeout=300)
        ok(seen, "the ask was running when cancelled")
        ok(q.returncode == 0, "cancel, then SIGTERM during an ask: clean under memcheck (exit %d)" % q.returncode,
           log(2) + err.decode()[-1000:])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
