#!/usr/bin/env python3
"""mcp_bench: the driver of bench/mcp.sh. usage: mcp_bench.py DRQA INDEX REPO N"""
import json
import subprocess
import sys
import time

DRQA, INDEX, REPO, N = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
N_CLI = max(5, N // 3)   # --action costs a process and an index check each

# one call per action tool on Django: (tool, action, arguments)
CALLS = [
    ("find_class", "FindClass", {"class_name": "QuerySet"}),
    ("find_function", "FindFunction", {"function_name": "get_response", "class_name": "BaseHandler"}),
    ("find_code_snippet", "FindCodeSnippet", {"code_snippet": "def as_view(cls, **initkwargs):"}),
    ("semantic_search", "SemanticSearch", {"query": "how a middleware wraps the request handler"}),
    ("view_code", "ViewCode", {"code_span_list": ["db/models/query.py:280-340"]}),
    ("outline", "Outline", {"path": "http/request.py"}),
    ("list_files", "ListFiles", {"pattern": "db/models/*.py"}),
    ("find_references", "FindReferences", {"symbol": "HttpResponse"}),
]


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100.0 * (len(xs) - 1))))]


def main():
    p = subprocess.Popen([DRQA, "--mcp", "--quiet", "--index", INDEX, REPO], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    rid = [0]

    def request(method, params):
        rid[0] += 1
        p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": rid[0], "method": method, "params": params}) +
                       "\n").encode())
        p.stdin.flush()
        while True:
            m = json.loads(p.stdout.readline())
            if m.get("id") == rid[0]:
                return m

    request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "bench", "version": "1"}})
    p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    tools = {t["name"] for t in request("tools/list", {})["result"]["tools"]}
    # the first call waits for the server's own index check and warms its caches
    for tool, _, args in CALLS:
        if tool in tools:
            request("tools/call", {"name": tool, "arguments": args})
    rows = []
    for tool, action, args in CALLS:
        if tool not in tools:
            continue
        mcp = []
        for _ in range(N):
            t0 = time.perf_counter()
            r = request("tools/call", {"name": tool, "arguments": args})
            mcp.append((time.perf_counter() - t0) * 1000)
            if r["result"].get("isError"):
                sys.exit("bench/mcp.sh: %s failed: %s" % (tool, r["result"]["content"][0]["text"]))
        cli = []
        for _ in range(N_CLI):
            t0 = time.perf_counter()
            subprocess.run([DRQA, "--action", action, json.dumps(args), "--no-progress", "--index", INDEX, REPO],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            cli.append((time.perf_counter() - t0) * 1000)
        rows.append((tool, pct(mcp, 50), pct(mcp, 95), pct(cli, 50), pct(cli, 95)))
    p.stdin.close()
    p.wait(60)
    print("tool-call latency over stdio, %d calls per tool (--action: %d runs)" % (N, N_CLI))
    print("%-18s %10s %10s %12s %12s %8s" % ("tool", "mcp p50", "mcp p95", "--action p50", "--action p95",
                                             "ratio"))
    for tool, a, b, c, d in rows:
        print("%-18s %8.1fms %8.1fms %10.1fms %10.1fms %7.1fx" % (tool, a, b, c, d, c / a if a else 0))
    print("ratio: --action p50 / mcp p50 (higher: the server is faster per call)")


if __name__ == "__main__":
    main()
