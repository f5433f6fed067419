#!/usr/bin/env python3
"""Memcheck over a scripted --mcp-http session on the pyrepo fixture:
initialize, tools/list, ping, an ask with a progress token answered as an
event stream, a find_class call answered as JSON, the GET stream opened and
dropped, DELETE, a second session left open, then SIGTERM. The server must
exit 0 with no memory error and no definite or indirect leak. Skipped when
valgrind is missing and in sanitizer builds. TAP on stdout."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_mcp_http as t  # noqa: E402
from taplib import workdir  # noqa: E402


def main():
    if not shutil.which("valgrind"):
        print("1..0 # SKIP valgrind is not installed")
        return 0
    ldd = subprocess.run(["ldd", t.DRQA], capture_output=True, text=True).stdout
    if "libasan" in ldd or "libubsan" in ldd:
        print("1..0 # SKIP a sanitizer build (valgrind needs a plain one)")
        return 0
    with workdir("test-mcp-http-vg") as tmp:
        vglog = os.path.join(tmp, "vg.log")
        wrap = ["valgrind", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
                "--show-leak-kinds=definite,indirect", "--log-file=" + vglog]
        srv = t.Server(tmp, "vg", wrap=wrap, wait_s=300)
        t.ok(srv.port is not None, "the server starts under memcheck", srv.stderr())
        if srv.port is None:
            t.done()
            return 1
        st, hd, body, sid = t.open_session(srv)
        t.ok(st == 200 and sid, "initialize", (st, body[:300]))
        H = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
        st, _, body = srv.request("POST", {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, H)
        t.ok(st == 200 and '"find_class"' in body, "tools/list", body[:300])
        st, _, body = srv.request("POST", {"jsonrpc": "2.0", "id": 3, "method": "ping"}, H)
        t.ok(st == 200, "ping", body)
        call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                "params": {"name": "ask", "arguments": {"question": "How does the router dispatch a request?"},
                           "_meta": {"progressToken": 9}}}
        st, hd, body = srv.request("POST", call, H)
        msgs = t.sse_messages(body) if st == 200 else []
        t.ok(any(m.get("method") == "notifications/progress" for m in msgs) and msgs and msgs[-1].get("id") == 4,
             "ask: progress, then the response, on an event stream", body[:500])
        call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                "params": {"name": "find_class", "arguments": {"class_name": "Router"}}}
        st, hd, body = srv.request("POST", call, dict(H, Accept="application/json"))
        t.ok(st == 200 and '"id":5' in body.replace(" ", ""), "find_class as JSON", body[:300])
        st, hd, r = srv.request("GET", None, dict(H, Accept="text/event-stream"), stream=True)
        t.ok(st == 200, "the GET stream opens", st)
        r.close()
        st, _, _ = srv.request("DELETE", None, H)
        t.ok(st == 200, "DELETE", st)
        st, _, _, sid2 = t.open_session(srv)
        t.ok(st == 200 and sid2, "a second session, left open", st)
        rc = srv.stop(wait_s=300)
        log = open(vglog).read() if os.path.exists(vglog) else ""
        t.ok(rc == 0, "SIGTERM: exit %s (99 = memcheck errors)" % rc,
             "\n".join(re.findall(r"==\d+== (?:Invalid.*|.*uninitialised.*|.*definitely lost.*|.*indirectly lost.*|"
                                  r"ERROR SUMMARY.*|   (?:at|by) .*)", log)[:40]))
    return t.done()


if __name__ == "__main__":
    sys.exit(main())
