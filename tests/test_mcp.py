#!/usr/bin/env python3
"""test_mcp: drives `drqa-tui --mcp` over stdio on a copy of the pyrepo
fixture, as an MCP client does, and checks it against the CLI:

  - initialize (version negotiation), tools/list (one tool per action of the
    registry, schemas well formed, read-only annotations);
  - every action tool: its result equals `--action` for the same arguments
    (items, spans, notes, the rendered text), its structuredContent matches
    its outputSchema;
  - ask with a progressToken: progress received, the answer and citations
    equal to `--ask --json`'s; an ask cancelled while its model request hangs
    (a loopback fake model) gets no response and the server goes on;
  - a malformed line (-32700), an unknown method (-32601), an unknown tool
    (-32602), bad arguments and a path out of the repository (isError with
    --action's own message), each followed by a working call;
  - freshness: a class added to a file is found by the next call, a file
    deleted is gone, a directory made later is watched too;
  - stdout holds only JSON-RPC messages; EOF on stdin and SIGTERM end the
    server with status 0, its threads joined, no side file left.
TAP on stdout.
"""
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import DRQA, TOP, done, ok, private_env  # noqa: E402

TIMEOUT = 120


class Server:
    """One `drqa-tui --mcp` process; a thread reads its stdout."""

    def __init__(self, args, env):
        self.p = subprocess.Popen([DRQA, "--mcp"] + args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=env)
        self.q = queue.Queue()
        self.lines = []       # every stdout line
        self.notes = []       # every notification
        self.next_id = 100
        self.stash = []       # responses read while waiting for another
        threading.Thread(target=self._read, daemon=True).start()
        self.err = []
        threading.Thread(target=self._read_err, daemon=True).start()

    def _read(self):
        for raw in self.p.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            self.lines.append(line)
            try:
                self.q.put(json.loads(line))
            except ValueError:
                self.q.put({"unparsed": line})
        self.q.put(None)

    def _read_err(self):
        for raw in self.p.stderr:
            self.err.append(raw.decode("utf-8", "replace"))

    def send_raw(self, text):
        try:
            self.p.stdin.write(text.encode() + b"\n")
            self.p.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass   # the server is gone: the waits that follow fail

    def send(self, obj):
        self.send_raw(json.dumps(obj))

    def wait_for(self, pred, timeout=TIMEOUT):
        """The first message pred accepts; notifications on the way are kept,
        and so are responses another wait will look for."""
        for i, m in enumerate(self.stash):
            if pred(m):
                return self.stash.pop(i)
        end = time.time() + timeout
        while time.time() < end:
            try:
                m = self.q.get(timeout=max(0.05, end - time.time()))
            except queue.Empty:
                break
            if m is None:   # the server is gone: so for every later wait too
                self.q.put(None)
                return None
            if "method" in m and "id" not in m:
                self.notes.append(m)
            if pred(m):
                return m
            if "method" not in m:
                self.stash.append(m)
        return None

    def request(self, method, params=None, rid=None, timeout=TIMEOUT):
        if rid is None:
            self.next_id += 1
            rid = self.next_id
        msg = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.wait_for(lambda m: m.get("id") == rid and "method" not in m, timeout)

    def call(self, name, args, meta=None):
        params = {"name": name, "arguments": args}
        if meta:
            params["_meta"] = meta
        return self.request("tools/call", params)

    def close(self, timeout=60):
        try:
            self.p.stdin.close()
        except BrokenPipeError:
            pass
        try:
            return self.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
            return "timeout"


def run_cli(args, env):
    p = subprocess.run([DRQA] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=TIMEOUT)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def snake(name):
    out = ""
    for i, c in enumerate(name):
        prev = name[i - 1] if i else ""
        nxt = name[i + 1] if i + 1 < len(name) else ""
        if i and c.isupper() and (prev.islower() or prev.isdigit() or (prev.isupper() and nxt.islower())):
            out += "_"
        out += c.lower()
    return out


def validate(value, schema, path="$"):
    """A small JSON Schema check: type, properties, required, items, enum,
    additionalProperties false. Returns a list of problems."""
    probs = []
    types = schema.get("type")
    if types is not None:
        types = types if isinstance(types, list) else [types]
        pytypes = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}

        def is_type(t):
            if t == "integer":
                return isinstance(value, int) and not isinstance(value, bool)
            if t == "number":
                return isinstance(value, (int, float)) and not isinstance(value, bool)
            return isinstance(value, pytypes[t])
        if not any(is_type(t) for t in types):
            probs.append("%s: %r is not %s" % (path, value, types))
            return probs
    if "enum" in schema and value not in schema["enum"]:
        probs.append("%s: %r not in %s" % (path, value, schema["enum"]))
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for r in schema.get("required", []):
            if r not in value:
                probs.append("%s: missing %s" % (path, r))
        for k, v in value.items():
            if k in props:
                probs += validate(v, props[k], path + "." + k)
            elif schema.get("additionalProperties") is False:
                probs.append("%s: unexpected %s" % (path, k))
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            probs += validate(v, schema["items"], "%s[%d]" % (path, i))
    return probs


def schema_problems(s, name):
    """Well-formedness of an inputSchema as the protocol asks for it."""
    probs = []
    if s.get("type") != "object" or not isinstance(s.get("properties"), dict):
        probs.append(name + ": not an object schema with properties")
        return probs
    for k, p in s["properties"].items():
        if p.get("type") not in ("string", "integer", "boolean", "array", "object", "number") and \
                not isinstance(p.get("type"), list):
            probs.append("%s.%s: type %r" % (name, k, p.get("type")))
        if p.get("type") == "array" and p.get("items", {}).get("type") != "string":
            probs.append("%s.%s: array without string items" % (name, k))
        if not isinstance(p.get("description"), str) or not p["description"]:
            probs.append("%s.%s: no description" % (name, k))
    for r in s.get("required", []):
        if r not in s["properties"]:
            probs.append("%s: required %s is not a property" % (name, r))
    return probs


# Arguments for each action tool; a new action needs its line here.
EXAMPLES = {
    "find_class": {"class_name": "SessionBase"},
    "find_function": {"function_name": "dispatch"},
    "find_code_snippet": {"code_snippet": "def save(self"},
    "semantic_search": {"query": "where is the session saved"},
    "view_code": {"code_span_list": ["tinyweb/routing.py:Router", "tinyweb/auth.py:1-9"]},
    "outline": {"path": "tinyweb/app.py"},
    "list_files": {},
    "find_references": {"symbol": "SessionBase"},
}


def main():
    tmp = tempfile.mkdtemp(prefix="drqa-test-mcp-")
    fake = None
    servers = []
    try:
        repo = os.path.join(tmp, "repo")
        shutil.copytree(os.path.join(TOP, "tests", "fixtures", "pyrepo"), repo)
        ixdir = os.path.join(tmp, "ix")
        os.mkdir(ixdir)
        index = os.path.join(ixdir, "index.sqlite")
        env = private_env(tmp)
        common = ["--index", index, "--no-progress"]

        s = Server(common + [repo], env)
        servers.append(s)

        # ---- lifecycle
        r = s.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                     "clientInfo": {"name": "test", "version": "1"}}, rid=1)
        ok(r and r["result"]["protocolVersion"] == "2025-06-18", "initialize: 2025-06-18 is answered as asked", r)
        ok(r and "tools" in r["result"]["capabilities"] and "logging" in r["result"]["capabilities"],
           "initialize: tools and logging capabilities", r)
        s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        r = s.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                     "clientInfo": {"name": "test", "version": "1"}})
        ok(r and r["result"]["protocolVersion"] == "2025-03-26", "initialize: 2025-03-26 negotiated down", r)
        r = s.request("initialize", {"protocolVersion": "2099-01-01", "capabilities": {},
                                     "clientInfo": {"name": "test", "version": "1"}})
        ok(r and r["result"]["protocolVersion"] == "2025-11-25", "initialize: an unknown version gets the latest", r)
        r = s.request("ping")
        ok(r and r.get("result") == {}, "ping", r)

        # ---- tools/list against the registry (its names, from --action's own error)
        rc, out, err = run_cli(["--action", "NoSuchAction", "{}"] + common + [repo], env)
        names = err.split("the actions are ", 1)[1].strip().split(", ") if "the actions are " in err else []
        want = sorted([snake(a) for a in names if a != "Finish"] + ["ask", "recheck"])
        r = s.request("tools/list")
        tools = {t["name"]: t for t in r["result"]["tools"]} if r else {}
        ok(len(names) >= 8 and sorted(tools) == want, "tools/list: one tool per action, plus ask and recheck",
           "got %s\nwant %s" % (sorted(tools), want))
        probs = []
        for name, t in tools.items():
            probs += schema_problems(t.get("inputSchema", {}), name)
            if t.get("outputSchema", {}).get("type") != "object":
                probs.append(name + ": no outputSchema")
            a = t.get("annotations", {})
            if a.get("readOnlyHint") is not True:
                probs.append(name + ": not readOnlyHint")
            if name not in ("ask",) and a.get("idempotentHint") is not True:
                probs.append(name + ": not idempotentHint")
            if len(t.get("description", "")) < 80:
                probs.append(name + ": a description too short for a model")
        ok(not probs, "tools/list: schemas, annotations and descriptions well formed", "\n".join(probs))
        ok(tools.get("find_class", {}).get("inputSchema", {}).get("required") == ["class_name"],
           "find_class: required fields from the argument table", tools.get("find_class"))
        # a string the tool takes from a few values lists them, and takes each of them
        cat = tools.get("semantic_search", {}).get("inputSchema", {}).get("properties", {}).get("category", {})
        refused = []
        for v in cat.get("enum", []):
            r = s.call("semantic_search", {"query": "session cookie", "category": v})
            if not r or r.get("result", {}).get("isError") is not False:
                refused.append((v, r))
        r = s.call("semantic_search", {"query": "session cookie", "category": "doc"})
        ok(sorted(cat.get("enum", [])) == ["any", "implementation", "test"] and not refused and
           r and r["result"]["isError"] is True,
           "semantic_search: category's enum lists the values the tool takes, each taken, another refused",
           (cat, refused, r))
        # a value the tool takes is one its schema allows: outline's path '' is the whole repository
        opath = tools.get("outline", {}).get("inputSchema", {}).get("properties", {}).get("path", {})
        r = s.call("outline", {"path": ""})
        res = r.get("result") if r else None
        ok("minLength" not in opath and res and not res.get("isError") and res["structuredContent"]["items"],
           "outline: path '' (the whole repository) is allowed by its schema and answered", json.dumps(opath))

        # ---- every action tool equals --action
        for name in sorted(tools):
            if name in ("ask", "recheck"):
                continue
            args = EXAMPLES.get(name)
            if args is None:
                ok(False, "%s: an example call (add one to EXAMPLES)" % name)
                continue
            action = tools[name]["title"]
            rc, out, err = run_cli(["--action", action, json.dumps(args)] + common + [repo], env)
            cli = json.loads(out) if rc == 0 else None
            r = s.call(name, args)
            res = r.get("result") if r else None
            good = bool(cli and res and not res.get("isError"))
            detail = "cli rc %s %s\nmcp %s" % (rc, err, json.dumps(r)[:2000])
            if good:
                sc = res["structuredContent"]
                spans = [(e["path"], e["start_line"], e["end_line"], e.get("label")) for e in cli["evidence"]]
                got = [(e["path"], e["start_line"], e["end_line"], e.get("symbol")) for e in sc["spans"]]
                good = (sc["items"] == cli["items"] and got == spans and sc["notes"] == cli["notes"] and
                        sc["truncated"] == cli["truncated"] and res["content"][0]["text"] == cli["rendered"])
                detail = "structured %s\ncli %s" % (json.dumps(sc)[:1500], json.dumps(cli)[:1500])
            ok(good, "%s %s: the same result as --action %s" % (name, json.dumps(args), action), detail)
            if res and "structuredContent" in res:
                p = validate(res["structuredContent"], tools[name]["outputSchema"])
                ok(not p, "%s: structuredContent matches its outputSchema" % name, "\n".join(p))

        # ---- errors, each followed by a working call
        s.send_raw('{"jsonrpc": "2.0", "id": 7, "method": ')
        r = s.wait_for(lambda m: "error" in m and m.get("id") is None, 30)
        ok(r and r["error"]["code"] == -32700 and "id" not in r, "a malformed line: -32700 without an id", r)
        r = s.request("ping")
        ok(r and r.get("result") == {}, "... and the server goes on", r)
        # integer ids come back as written, up to 2^53 - 1; a larger one, which
        # a JSON number does not hold exactly, is refused rather than answered
        # under another id
        for big in (1000000000000000, 9007199254740991, -9007199254740991):
            n0 = len(s.lines)
            r = s.request("ping", rid=big)
            raw = [l for l in s.lines[n0:] if '"result"' in l]
            ok(r and r.get("result") == {} and raw and ('"id":%d' % big) in raw[0].replace(" ", ""),
               "the integer id %d comes back as written" % big, raw[:1])
        s.send_raw('{"jsonrpc": "2.0", "id": 9007199254740993, "method": "ping"}')
        r = s.wait_for(lambda m: "error" in m and m.get("id") is None, 30)
        ok(r and r["error"]["code"] == -32600 and "2^53" in r["error"]["message"],
           "an integer id beyond 2^53 - 1: -32600 saying why", r)
        # a NUL in a string would be read cut short: refused, not answered for another text
        r = s.call("view_code", {"code_span_list": ["tinyweb/app.py\u0000.evil:1-3"]})
        ok(r and r.get("error", {}).get("code") == -32600 and "NUL" in r["error"]["message"],
           "a NUL in an argument: -32600 naming it, not a view of another span", r)
        s.send_raw('{"jsonrpc": "2.0", "id": "a\\u0000b", "method": "ping"}')
        r = s.wait_for(lambda m: "error" in m and "NUL" in m["error"]["message"], 30)
        ok(r and "id" not in r, "a NUL in a string id: refused, the id not sent back cut short", r)
        # JSON-RPC batches: refused at the versions that removed them, saying which takes them; at
        # 2025-03-26 each message is handled and the responses come back as one array
        s.send_raw(json.dumps([{"jsonrpc": "2.0", "id": 501, "method": "ping"}]))
        r = s.wait_for(lambda m: isinstance(m, dict) and "batch" in m.get("error", {}).get("message", ""), 30)
        ok(r and r["error"]["code"] == -32600 and "2025-03-26" in r["error"]["message"] and "id" not in r,
           "a batch at 2025-11-25: -32600 saying which version takes batches", r)
        r = s.request("initialize", {"protocolVersion": "2025-03-26", "capabilities": {},
                                     "clientInfo": {"name": "test", "version": "1"}})
        s.send_raw(json.dumps([{"jsonrpc": "2.0", "id": 502, "method": "ping"},
                               {"jsonrpc": "2.0", "method": "notifications/initialized"},
                               {"jsonrpc": "2.0", "id": 503, "method": "tools/call",
                                "params": {"name": "find_class", "arguments": {"class_name": "App"}}},
                               7]))
        r = s.wait_for(lambda m: isinstance(m, list), 60)
        by = {x.get("id"): x for x in r} if isinstance(r, list) else {}
        ok(r and len(r) == 3 and by.get(502, {}).get("result") == {} and
           "tinyweb/app.py" in json.dumps(by.get(503, {}).get("result")) and
           by.get(None, {}).get("error", {}).get("code") == -32600,
           "a batch at 2025-03-26: one array of responses (ping, find_class, an error for the bad member), "
           "none for the notification", r)
        s.send_raw(json.dumps([{"jsonrpc": "2.0", "method": "notifications/initialized"}]))
        n0 = len(s.lines)
        r = s.request("ping")
        ok(r and r.get("result") == {} and len(s.lines) == n0 + 1,
           "a batch of notifications only: nothing is sent back", s.lines[n0:])
        r = s.request("initialize", {"protocolVersion": "2099-01-01", "capabilities": {},
                                     "clientInfo": {"name": "test", "version": "1"}})
        r = s.request("resources/read", {"uri": "x"})
        ok(r and r.get("error", {}).get("code") == -32601, "an unknown method: -32601", r)
        r = s.call("find_klass", {"class_name": "App"})
        ok(r and r.get("error", {}).get("code") == -32602 and "find_class" in r["error"]["message"],
           "an unknown tool: -32602 naming the tools", r)
        for name, action, args in (("find_class", "FindClass", {"klass": "App"}),
                                   ("view_code", "ViewCode", {"code_span_list": "tinyweb/app.py"}),
                                   ("view_code", "ViewCode", {"code_span_list": ["../../etc/passwd"]}),
                                   ("find_function", "FindFunction", {})):
            rc, out, err = run_cli(["--action", action, json.dumps(args)] + common + [repo], env)
            r = s.call(name, args)
            res = r.get("result", {}) if r else {}
            text = res.get("content", [{}])[0].get("text", "")
            ok(rc == 2 and res.get("isError") is True and "drqa-tui: " + text + "\n" == err,
               "%s %s: isError with --action's own message" % (name, json.dumps(args)),
               "cli %s %r\nmcp %s" % (rc, err, r))
        r = s.call("find_class", {"class_name": "App"})
        ok(r and r["result"]["isError"] is False, "... and calls go on", r)

        # ---- ask, with progress, against --ask --json
        before = len(s.notes)
        r = s.call("ask", {"question": "How are sessions saved?"}, meta={"progressToken": "ask-1"})
        prog = [m for m in s.notes[before:] if m["method"] == "notifications/progress" and
                m["params"]["progressToken"] == "ask-1"]
        values = [m["params"]["progress"] for m in prog]
        ok(len(prog) >= 2 and values == sorted(set(values)), "ask: progress notifications, increasing",
           json.dumps(prog)[:1000])
        ok(any("iteration" in m["params"].get("message", "") for m in prog), "ask: progress names the iterations")
        rc, out, err = run_cli(["--ask", "How are sessions saved?", "--json"] + common + [repo], env)
        cli = json.loads(out) if rc == 0 else {}
        sc = r["result"].get("structuredContent", {}) if r else {}
        got = [(c["path"], c["start_line"], c["end_line"], c.get("text_hash")) for c in sc.get("citations", [])]
        want = [(c["path"], c["start_line"], c["end_line"], c.get("text_hash")) for c in cli.get("citations", [])]
        ok(got and got == want and all(w[3] for w in want), "ask: the citations (and their hashes) of --ask --json",
           "mcp %s\ncli %s" % (got, want))
        ok(sc.get("answer") == cli.get("answer") and sc.get("commit") == cli.get("commit"),
           "ask: the answer of --ask --json")
        p = validate(sc, tools.get("ask", {}).get("outputSchema", {"required": ["answer"]}))
        ok(not p, "ask: structuredContent matches its outputSchema", "\n".join(p))
        rc, md, err = run_cli(["--ask", "How are sessions saved?"] + common + [repo], env)
        ok(r and r["result"]["content"][0]["text"] == md, "ask: the text is --ask's Markdown")
        r = s.call("ask", {"question": ""})
        ok(r and r["result"]["isError"] is True, "ask: an empty question is an isError result", r)

        # ---- recheck of that answer: all unchanged
        r = s.call("recheck", {"saved": sc})
        rs = r["result"].get("structuredContent", {}) if r else {}
        ok(rs.get("stale") is False and rs.get("citations") and
           all(c["verdict"] == "unchanged" for c in rs["citations"]),
           "recheck: the fresh answer's citations are unchanged", r)

        # ---- freshness
        with open(os.path.join(repo, "tinyweb", "added.py"), "w") as f:
            f.write("class FreshlyAdded:\n    pass\n")
        r = s.call("find_class", {"class_name": "FreshlyAdded"})
        sp = r["result"]["structuredContent"]["spans"] if r and not r["result"]["isError"] else []
        ok(sp and sp[0]["path"] == "tinyweb/added.py", "freshness: a class added to the repository is found", r)
        os.unlink(os.path.join(repo, "tinyweb", "added.py"))
        r = s.call("list_files", {"pattern": "tinyweb/added.py"})
        items = r["result"]["structuredContent"]["items"] if r and not r["result"]["isError"] else None
        ok(items == [], "freshness: a deleted file is gone from the next call", r)
        r = s.call("recheck", {"saved": json.dumps({"citations": [{"path": "tinyweb/added.py", "start_line": 1,
                                                                    "end_line": 2, "text_hash": "fnv1a64:0"}]})})
        ok(r and r["result"]["structuredContent"]["citations"][0]["verdict"] == "gone",
           "recheck: a citation of the deleted file is gone", r)

        # a directory made after the server started is watched in its turn
        os.mkdir(os.path.join(repo, "tinyweb", "newpkg"))
        with open(os.path.join(repo, "tinyweb", "newpkg", "mod.py"), "w") as f:
            f.write("class NewDirOne:\n    pass\n")
        r = s.call("find_class", {"class_name": "NewDirOne"})
        sp = r["result"]["structuredContent"]["spans"] if r and not r["result"]["isError"] else []
        ok(sp and sp[0]["path"] == "tinyweb/newpkg/mod.py", "freshness: a file in a new directory is found", r)
        with open(os.path.join(repo, "tinyweb", "newpkg", "mod.py"), "a") as f:
            f.write("\n\nclass NewDirTwo:\n    pass\n")
        r = s.call("find_class", {"class_name": "NewDirTwo"})
        sp = r["result"]["structuredContent"]["spans"] if r and not r["result"]["isError"] else []
        ok(sp and sp[0]["start_line"] == 5, "freshness: a change inside that new directory is seen", r)

        # a cancel applied before its request started (a transport applies
        # notifications at once, requests on threads): the request is cancelled
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "early-1"}})
        s.send({"jsonrpc": "2.0", "id": "early-1", "method": "tools/call",
                "params": {"name": "find_class", "arguments": {"class_name": "App"}}})
        late = s.wait_for(lambda m: m.get("id") == "early-1", 2)
        r = s.request("ping")
        ok(r and late is None, "a cancel read before its request started still cancels it", late)

        # ---- logging/setLevel
        r = s.request("logging/setLevel", {"level": "debug"})
        ok(r and r.get("result") == {}, "logging/setLevel debug", r)
        r = s.request("logging/setLevel", {"level": "loud"})
        ok(r and r.get("error", {}).get("code") == -32602, "logging/setLevel with an unknown level: -32602", r)

        # ---- stdout: protocol messages only; EOF ends the server cleanly
        status = s.close()
        def rpc(l):   # a message, or a batch's array of them
            v = json.loads(l) if l[:1] in ("{", "[") else None
            return all(isinstance(m, dict) and m.get("jsonrpc") == "2.0" for m in (v if isinstance(v, list) else [v]))
        bad = [l for l in s.lines if not rpc(l)]
        ok(not bad, "stdout carries only JSON-RPC messages", "\n".join(bad[:5]))
        ok(status == 0, "EOF on stdin: exit status 0", "status %s; stderr %s" % (status, "".join(s.err)[-1500:]))
        left = sorted(set(os.listdir(ixdir)) - {"index.sqlite", "index.sqlite-wal", "index.sqlite-shm"})
        ok(not left, "nothing left beside the index", left)

        # ---- cancel an ask whose model request hangs; SIGTERM ends the server
        script = os.path.join(tmp, "script.json")
        with open(script, "w") as f:
            json.dump({"default": {"fault": "hang", "hang_s": 30}}, f)
        log = os.path.join(tmp, "fake.log")
        fake = subprocess.Popen([sys.executable, os.path.join(TOP, "tests", "fake_llm.py"), "--script", script,
                                 "--log", log], stdout=subprocess.PIPE, env=env)
        port = fake.stdout.readline().decode().strip()
        s2 = Server(common + ["--policy", "llm", "--model", "fake-model", "--api-base",
                              "http://127.0.0.1:%s/v1" % port, repo], env)
        servers.append(s2)
        s2.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "test", "version": "1"}}, rid=1)
        s2.send({"jsonrpc": "2.0", "id": "ask-c", "method": "tools/call",
                 "params": {"name": "ask", "arguments": {"question": "How are sessions saved?"},
                            "_meta": {"progressToken": "c"}}})
        r = s2.wait_for(lambda m: m.get("method") == "notifications/progress" and
                        m["params"]["message"] == "searching", 60)
        # the model request is in flight once the fake logged it
        end = time.time() + 30
        while time.time() < end and not (os.path.exists(log) and os.path.getsize(log) > 0):
            time.sleep(0.05)
        t0 = time.time()
        r = s2.call("find_class", {"class_name": "App"})
        ok(r and r["result"]["isError"] is False, "a find_class runs while an ask waits on its model", r)
        # three more asks: four in all, as many as there are slots; the asks
        # leave one to the lookups, so a lookup is still answered at once
        for k in range(3):
            s2.send({"jsonrpc": "2.0", "id": "ask-f%d" % k, "method": "tools/call",
                     "params": {"name": "ask", "arguments": {"question": "How are sessions saved? %d" % k}}})
        end = time.time() + 30
        while time.time() < end and sum(1 for _ in open(log)) < 3:
            time.sleep(0.05)
        time.sleep(0.5)
        # (the asks hang 30 s: a lookup that waited for a slot would not come within the 10 s waited)
        r = s2.request("tools/call", {"name": "find_class", "arguments": {"class_name": "App"}}, timeout=10)
        ok(r and r["result"]["isError"] is False,
           "with four asks waiting on the model, a lookup is still answered while they wait", r)
        for k in range(3):
            s2.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "ask-f%d" % k}})
        s2.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                 "params": {"requestId": "ask-c", "reason": "the user gave up"}})
        r = s2.request("ping")
        ok(r and r.get("result") == {}, "after the cancel the server answers", r)
        seen_at_ping = len(s2.lines)
        late = s2.wait_for(lambda m: m.get("id") == "ask-c", 3)
        ok(late is None and time.time() - t0 < 20, "the cancelled ask sends no response, and stops early",
           late)
        after = [json.loads(l) for l in s2.lines[seen_at_ping:] if l.startswith("{")]
        stale = [m for m in after if m.get("method") == "notifications/progress" and
                 m["params"].get("progressToken") == "c"]
        ok(not stale, "and no progress of the cancelled request after it", stale[:2])
        # a cancel written right behind its request (the request may not
        # have started when the cancel is read)
        s2.send_raw(json.dumps({"jsonrpc": "2.0", "id": "ask-e", "method": "tools/call",
                                "params": {"name": "ask", "arguments": {"question": "Where is the router?"}}}) +
                    "\n" + json.dumps({"jsonrpc": "2.0", "method": "notifications/cancelled",
                                        "params": {"requestId": "ask-e"}}))
        late = s2.wait_for(lambda m: m.get("id") == "ask-e", 3)
        ok(late is None, "a cancel right behind its request: no response", late)
        # the end of stdin waits for the requests in flight: a cancelled ask
        # whose model request were still hanging would hold it for 30 s
        t0 = time.time()
        status = s2.close(60)
        ok(status == 0 and time.time() - t0 < 15, "the cancel aborted the ask's model request (EOF exits at once)",
           "status %s after %.1f s" % (status, time.time() - t0))
        s3 = Server(common + ["--policy", "llm", "--model", "fake-model", "--api-base",
                              "http://127.0.0.1:%s/v1" % port, repo], env)
        servers.append(s3)
        s3.send({"jsonrpc": "2.0", "id": "ask-d", "method": "tools/call",
                 "params": {"name": "ask", "arguments": {"question": "Where is the router?"},
                            "_meta": {"progressToken": "d"}}})
        s3.wait_for(lambda m: m.get("method") == "notifications/progress" and
                    m["params"]["message"] == "searching", 60)
        time.sleep(0.5)
        t0 = time.time()
        s3.p.send_signal(signal.SIGTERM)
        try:
            status = s3.p.wait(20)
        except subprocess.TimeoutExpired:
            status = "timeout"
        ok(status == 0 and time.time() - t0 < 15, "SIGTERM during an ask: exit status 0, promptly",
           "status %s; %s" % (status, "".join(s3.err)[-1000:]))
        left = sorted(set(os.listdir(ixdir)) - {"index.sqlite", "index.sqlite-wal", "index.sqlite-shm"})
        ok(not left, "nothing left beside the index after SIGTERM", left)
    finally:
        for sv in servers:
            if sv.p.poll() is None:
                sv.p.kill()
                sv.p.wait()
        if fake:
            fake.terminate()
            fake.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return done()


if __name__ == "__main__":
    sys.exit(main())
