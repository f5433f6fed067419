#!/usr/bin/env python3
"""drqa-tui --mcp-http on the pyrepo fixture, spoken to with http.client:
sessions (issued on initialize, required after, 404 once DELETEd), the
protocol version header, 202 for notifications, the Origin and Host guards,
the bearer token from the config file, the ask tool's progress on an event
stream before its response, concurrent requests and their bound (503; a
cancelled ask frees its slot), the standalone GET stream, and a clean exit
on SIGTERM. TAP on stdout."""
import http.client
import json
import os
import re
import signal
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from taplib import DRQA, TOP, done, ok, private_env, workdir  # noqa: E402


class Server:
    """One drqa-tui --mcp-http process on a free loopback port."""

    def __init__(self, tmp, name, config=None, extra=(), wrap=(), wait_s=60):
        self.dir = os.path.join(tmp, name)
        os.makedirs(os.path.join(self.dir, "config", "drqa-tui"))
        if config is not None:
            path = os.path.join(self.dir, "config", "drqa-tui", "config")
            with open(path, "w") as f:
                f.write(config)
            os.chmod(path, 0o600)
        env = private_env(self.dir)
        self.errpath = os.path.join(self.dir, "stderr")
        self.logpath = os.path.join(self.dir, "log")
        self.err = open(self.errpath, "w+")
        self.proc = subprocess.Popen(
            [*wrap, DRQA, "--mcp-http", "127.0.0.1:0", "--index", os.path.join(self.dir, "index.sqlite"),
             "--log", self.logpath, *extra, os.path.join(tmp, "repo")],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=self.err, env=env)
        self.port = None
        for _ in range(wait_s * 10):  # for the listening line
            self.err.seek(0)
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/mcp", self.err.read())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                break
            threading.Event().wait(0.1)
        self.host = "127.0.0.1:%d" % (self.port or 0)

    def stderr(self):
        if self.err.closed:
            return self.errtext
        self.err.seek(0)
        return self.err.read()

    def request(self, method, body=None, headers=None, stream=False, path="/mcp"):
        """(status, headers dict lower-cased, body text); with stream=True
        the open response instead of its body."""
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        h.update(headers or {})
        h = {k: v for k, v in h.items() if v is not None}
        data = body if isinstance(body, (str, bytes)) or body is None else json.dumps(body)
        c.request(method, path, body=data, headers=h)
        r = c.getresponse()
        hd = {k.lower(): v for k, v in r.getheaders()}
        if stream:
            return r.status, hd, r
        text = r.read().decode()
        c.close()
        return r.status, hd, text

    def stop(self, wait_s=60, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        try:
            rc = self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            rc = self.proc.wait()
            rc = "hung (killed)"
        self.errtext = self.stderr()
        self.err.close()
        return rc


def init_msg(i=1, version="2025-11-25"):
    return {"jsonrpc": "2.0", "id": i, "method": "initialize",
            "params": {"protocolVersion": version, "capabilities": {},
                       "clientInfo": {"name": "test_mcp_http", "version": "1"}}}


def sse_messages(text):
    """The JSON messages of an event stream, in order."""
    out = []
    for event in re.split(r"\r?\n\r?\n", text):
        data = [line[5:].lstrip(" ") for line in re.split(r"\r?\n", event) if line.startswith("data:")]
        if data and "".join(data).strip():
            out.append(json.loads("\n".join(data)))
    return out


def open_session(srv):
    st, hd, body = srv.request("POST", init_msg())
    sid = hd.get("mcp-session-id")
    if sid:
        srv.request("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"},
                    {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"})
    return st, hd, body, sid


def main():
    with workdir("test-mcp-http") as tmp:
        run(tmp)
    return done()


def run(tmp):
    srv = Server(tmp, "open")
    ok(srv.port is not None, "the server says where it listens", srv.stderr())
    if srv.port is None:
        return

    # sessions
    st, hd, body, sid = open_session(srv)
    ok(st == 200 and "application/json" in hd.get("content-type", ""), "initialize: 200 with JSON", (st, hd, body))
    ok(sid is not None and re.fullmatch(r"[\x21-\x7e]{32,}", sid) is not None,
       "initialize issues an Mcp-Session-Id of visible ASCII, at least 32 characters", sid)
    res = json.loads(body).get("result", {}) if st == 200 else {}
    ok(res.get("protocolVersion") == "2025-11-25", "initialize negotiates 2025-11-25", body)
    _, hd2, _, sid2 = open_session(srv)
    ok(sid2 and sid2 != sid, "each initialize gets a session id of its own", (sid, sid2))
    H = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    ping = {"jsonrpc": "2.0", "id": 7, "method": "ping"}

    st, hd, body = srv.request("POST", ping, H)
    ok(st == 200 and json.loads(body) == {"jsonrpc": "2.0", "id": 7, "result": {}}, "ping in the session: 200, {}",
       (st, body))
    st, _, body = srv.request("POST", ping, {"MCP-Protocol-Version": "2025-11-25"})
    ok(st == 400, "a request without Mcp-Session-Id: 400", (st, body))
    st, _, body = srv.request("POST", ping, {"Mcp-Session-Id": "0" * 48})
    ok(st == 404, "a request naming an unknown session: 404", (st, body))
    st, _, body = srv.request("POST", ping, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01"})
    ok(st == 400, "an unsupported MCP-Protocol-Version: 400", (st, body))
    st, _, body = srv.request("POST", ping, {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-03-26"})
    ok(st == 200, "MCP-Protocol-Version 2025-03-26 is served", (st, body))
    st, _, body = srv.request("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, H)
    ok(st == 202 and body == "", "a notification: 202, no body", (st, body))
    st, _, body = srv.request("POST", "{not json", H)
    ok(st == 400 and json.loads(body)["error"]["code"] == -32700, "a body that is not JSON: 400 with a parse error",
       (st, body))
    st, _, body = srv.request("POST", [ping, ping], H)
    ok(st == 400 and "2025-03-26" in body, "a JSON-RPC batch at 2025-11-25: 400 (removed in 2025-06-18), saying "
       "which version takes them", (st, body))
    # a session at 2025-03-26 takes a batch: its responses as one JSON array
    st, hd, body = srv.request("POST", init_msg(2, "2025-03-26"))
    sid3 = hd.get("mcp-session-id")
    H3 = {"Mcp-Session-Id": sid3, "MCP-Protocol-Version": "2025-03-26"}
    st, hd, body = srv.request("POST", [ping, {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                        {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}], H3)
    arr = json.loads(body) if st == 200 else None
    ok(isinstance(arr, list) and sorted(m.get("id") for m in arr) == [7, 8] and
       "application/json" in hd.get("content-type", ""),
       "a batch in a 2025-03-26 session: 200 with one array of the two responses", (st, body[:300]))
    st, _, body = srv.request("POST", [{"jsonrpc": "2.0", "method": "notifications/initialized"}], H3)
    ok(st == 202 and body == "", "a batch of notifications only: 202, no body", (st, body))
    st, _, body = srv.request("POST", ping, dict(H, **{"Content-Type": "text/plain"}))
    ok(st == 415, "a body that is not application/json: 415", (st, body))
    st, _, body = srv.request("POST", ping, dict(H, Accept="text/html"))
    ok(st == 406, "an Accept with neither JSON nor an event stream: 406", (st, body))
    st, hd, body = srv.request("PUT", ping, H)
    ok(st == 405 and "POST" in hd.get("allow", ""), "PUT: 405 with Allow", (st, hd))
    st, _, body = srv.request("POST", ping, H, path="/other")
    ok(st == 404, "another path: 404", (st, body))

    # DNS-rebinding guards
    st, _, body = srv.request("POST", init_msg(), {"Origin": "http://evil.example.com"})
    ok(st == 403, "an Origin that is not loopback: 403", (st, body))
    st, _, body = srv.request("POST", ping, dict(H, Origin="null"))
    ok(st == 403, "Origin: null: 403", (st, body))
    st, _, body = srv.request("POST", ping, dict(H, Origin="http://localhost.evil.example.com"))
    ok(st == 403, "an Origin that only starts with localhost: 403", (st, body))
    st, _, body = srv.request("POST", init_msg(), {"Host": "evil.example.com"})
    ok(st == 403, "a Host that is not loopback, on a loopback bind: 403", (st, body))
    st, _, body = srv.request("POST", ping, dict(H, Origin="http://localhost:5173"))
    ok(st == 200, "Origin http://localhost:5173 is accepted", (st, body))
    st, _, body = srv.request("POST", ping, dict(H, Origin="http://[::1]:8080", Host="localhost:%d" % srv.port))
    ok(st == 200, "Origin http://[::1]:8080 with Host localhost:PORT is accepted", (st, body))

    # tools
    st, hd, body = srv.request("POST", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, H)
    tools = [t["name"] for t in json.loads(body).get("result", {}).get("tools", [])] if st == 200 else []
    ok("ask" in tools, "tools/list names ask", body[:400])

    # ask with a progress token: an event stream, progress first, the response last
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
            "params": {"name": "ask", "arguments": {"question": "How does the router dispatch a request?"},
                       "_meta": {"progressToken": "tok-3"}}}
    st, hd, body = srv.request("POST", call, H)
    ok(st == 200 and hd.get("content-type", "").startswith("text/event-stream"),
       "tools/call when the client takes both: an event stream", (st, hd))
    msgs = sse_messages(body) if st == 200 else []
    prog = [m for m in msgs if m.get("method") == "notifications/progress"]
    ok(prog and all(m["params"]["progressToken"] == "tok-3" for m in prog),
       "ask sends notifications/progress with the request's token on the stream", body[:800])
    ok(msgs and msgs[-1].get("id") == 3 and "result" in msgs[-1] and not msgs[-1]["result"].get("isError"),
       "the ask response comes last on the stream, a result", body[-800:])
    ok(sum(1 for m in msgs if "id" in m) == 1, "the stream carries exactly one response", body[:800])
    st, hd, body = srv.request("POST", call, dict(H, Accept="application/json"))
    ok(st == 200 and hd.get("content-type", "").startswith("application/json") and json.loads(body).get("id") == 3,
       "tools/call when the client takes only JSON: one JSON response", (st, hd, body[:300]))

    # concurrent requests, on one session and on another
    results = {}

    def worker(i, s):
        h = {"Mcp-Session-Id": s, "MCP-Protocol-Version": "2025-11-25"}
        if i % 3 == 0:
            msg = {"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                   "params": {"name": "ask", "arguments": {"question": "Where is the request routed?"}}}
        else:
            msg = {"jsonrpc": "2.0", "id": 100 + i, "method": "tools/list"}
        try:
            st, hd, body = srv.request("POST", msg, h)
            got = sse_messages(body) if hd.get("content-type", "").startswith("text/event-stream") else [json.loads(body)]
            results[i] = (st, [m for m in got if "id" in m])
        except Exception as e:  # reported below
            results[i] = (None, repr(e))

    threads = [threading.Thread(target=worker, args=(i, sid if i % 2 else sid2)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(180)
    good = [i for i, (st, r) in results.items() if st == 200 and len(r) == 1 and r[0].get("id") == 100 + i
            and "result" in r[0]]
    ok(len(good) == 8, "8 requests at once (asks and tools/list, two sessions): each answered, ids matched",
       {i: results.get(i) for i in range(8) if i not in good})

    # the standalone GET stream
    st, hd, r = srv.request("GET", None, dict(H, Accept="text/event-stream"), stream=True)
    ok(st == 200 and hd.get("content-type", "").startswith("text/event-stream"), "GET opens an event stream", (st, hd))
    r.close()
    st, _, _ = srv.request("GET", None, {"Accept": "text/event-stream"})
    ok(st == 400, "GET without a session: 400", st)

    # DELETE ends the session
    st, _, body = srv.request("DELETE", None, H)
    ok(st == 200, "DELETE: 200", (st, body))
    st, _, body = srv.request("POST", ping, H)
    ok(st == 404, "the deleted session: 404 afterwards", (st, body))
    st, _, body = srv.request("DELETE", None, H)
    ok(st == 404, "DELETE again: 404", (st, body))
    st, _, body = srv.request("POST", ping, {"Mcp-Session-Id": sid2, "MCP-Protocol-Version": "2025-11-25"})
    ok(st == 200, "the other session lives on", (st, body))

    # a GET stream still open when the signal comes: it ends, the server exits
    H2 = {"Mcp-Session-Id": sid2, "MCP-Protocol-Version": "2025-11-25", "Accept": "text/event-stream"}
    st, hd, r = srv.request("GET", None, H2, stream=True)
    rc = srv.stop()
    ok(rc == 0, "SIGTERM with a GET stream open: the server exits 0", (rc, srv.stderr()))
    try:
        rest = r.read()
        ended = True
    except Exception as e:  # a reset is an end too, but say what it was
        rest, ended = repr(e), "IncompleteRead" in repr(e) or "Reset" in repr(e)
    ok(st == 200 and ended, "the open GET stream ends with the server", (st, rest))

    # the bearer token, from the config file
    token = "s3cret-Token-0123456789"
    srv = Server(tmp, "token", config="mcp_token = %s\nmcp_allowed_origins = https://team.example.org\n" % token)
    ok(srv.port is not None, "a server with mcp_token starts", srv.stderr())
    if srv.port is None:
        return
    st, hd, body = srv.request("POST", init_msg())
    ok(st == 401 and hd.get("www-authenticate", "").startswith("Bearer"),
       "no Authorization: 401 with WWW-Authenticate: Bearer", (st, hd, body))
    st, hd, body = srv.request("POST", init_msg(), {"Authorization": "Bearer wrong-token"})
    ok(st == 401 and "invalid_token" in hd.get("www-authenticate", ""), "a wrong token: 401, invalid_token", (st, hd))
    st, hd, body = srv.request("POST", init_msg(), {"Authorization": "Bearer " + token[:-1]})
    ok(st == 401, "the token less its last character: 401", st)
    st, hd, body = srv.request("POST", init_msg(), {"Authorization": "Bearer " + token})
    ok(st == 200 and hd.get("mcp-session-id"), "the right token: 200 and a session", (st, hd, body))
    sid = hd.get("mcp-session-id")
    st, _, body = srv.request("POST", ping, {"Mcp-Session-Id": sid, "Authorization": "Bearer " + token,
                                             "Origin": "https://team.example.org"})
    ok(st == 200, "an origin listed in mcp_allowed_origins is accepted", (st, body))
    st, _, body = srv.request("POST", ping, {"Mcp-Session-Id": sid})
    ok(st == 401, "the token is needed on every request, not only initialize", st)
    rc = srv.stop(sig=signal.SIGHUP)
    ok(rc == 0, "the token server exits 0 on SIGHUP", rc)
    seen = srv.stderr()
    if os.path.exists(srv.logpath):
        seen += open(srv.logpath).read()
    ok(token not in seen, "the token is in neither stderr nor the log")

    bounded(tmp)


def bounded(tmp):
    """mcp_max_requests = 1 with an ask held up by a model that never
    answers (the loopback fake): one more request gets 503; a
    notifications/cancelled POSTed on its own stops the ask, whose stream
    then ends with no response, and the slot is free again."""
    script = os.path.join(tmp, "hang.json")
    with open(script, "w") as f:
        json.dump({"default": {"fault": "hang", "hang_s": 60}}, f)
    portfile = os.path.join(tmp, "fake.port")
    fake = subprocess.Popen([sys.executable, os.path.join(TOP, "tests", "fake_llm.py"), "--script", script,
                             "--log", os.path.join(tmp, "fake.log"), "--port-file", portfile],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(portfile) and open(portfile).read().strip():
                break
            threading.Event().wait(0.1)
        fport = open(portfile).read().strip()
        srv = Server(tmp, "bounded", config="api_base = http://127.0.0.1:%s/v1\nmodel = fake-model\n"
                     "mcp_max_requests = 1\n" % fport)
        ok(srv.port is not None, "a server with mcp_max_requests = 1 and a model starts", srv.stderr())
        if srv.port is None:
            return
        _, _, _, sid = open_session(srv)
        H = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
        call = {"jsonrpc": "2.0", "id": 40, "method": "tools/call",
                "params": {"name": "ask", "arguments": {"question": "How does the router dispatch a request?"},
                           "_meta": {"progressToken": "held"}}}
        st, hd, r = srv.request("POST", call, H, stream=True)
        first = r.readline() + r.readline()   # "event: message" and the first progress's data line
        ok(st == 200 and b"notifications/progress" in first, "the held ask has begun (its first progress came)",
           (st, first))
        st, hd, body = srv.request("POST", {"jsonrpc": "2.0", "id": 41, "method": "ping"}, H)
        ok(st == 503 and hd.get("retry-after"), "a second request while the one slot is taken: 503 with Retry-After",
           (st, hd, body))
        st, _, body = srv.request("POST", {"jsonrpc": "2.0", "method": "notifications/cancelled",
                                           "params": {"requestId": 40, "reason": "test"}}, H)
        ok(st == 202, "notifications/cancelled for the ask: 202", (st, body))
        rest = r.read().decode()
        msgs = sse_messages(rest)
        ok(not any("id" in m for m in msgs), "the cancelled ask's stream ends with no response", rest[-500:])
        st, _, body = srv.request("POST", {"jsonrpc": "2.0", "id": 42, "method": "ping"}, H)
        ok(st == 200, "the slot is free again: the next request is answered", (st, body))
        # DELETE ends the session and what it runs: a held ask's stream ends
        # with no response, its model request aborted
        call["id"] = 43
        st, hd, r = srv.request("POST", call, H, stream=True)
        first = r.readline() + r.readline()
        ok(st == 200 and b"notifications/progress" in first, "a second held ask has begun", (st, first))
        got = {}
        reader = threading.Thread(target=lambda: got.setdefault("rest", r.read().decode()), daemon=True)
        st, _, body = srv.request("DELETE", None, H)
        ok(st == 200, "DELETE of the session while its ask runs: 200", (st, body))
        reader.start()
        reader.join(10)
        rest = got.get("rest")
        ok(rest is not None and not any("id" in m for m in sse_messages(rest)),
           "the deleted session's ask is cancelled: its stream ends at once, with no response",
           "still open after 10 s" if rest is None else rest[-500:])
        rc = srv.stop()
        ok(rc == 0, "the bounded server exits 0 on SIGTERM", rc)
    finally:
        fake.kill()
        fake.wait()


if __name__ == "__main__":
    sys.exit(main())
