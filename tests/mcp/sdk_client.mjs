// sdk_client.mjs: drives `drqa-tui --mcp` with the official TypeScript SDK
// client (Client + StdioClientTransport of @modelcontextprotocol/sdk, from
// $MCP_DEPS, installed by scripts/test-deps.sh) and checks what it gets
// against the command line for the same arguments. Run by
// tests/test_mcp_sdk.sh; prints TAP.
//
// Environment: DRQA (the program), MCP_DEPS (the folder holding
// node_modules), WORK (a scratch directory), REPO (a copy of pyrepo),
// FLASK (Debian's flask sources, or empty), FAKE_PORT (a loopback fake model
// whose every request hangs, for the cancel).
//
// For each repository: initialize, tools/list (every action a tool, the SDK
// compiles each outputSchema and checks every structuredContent against it),
// every action tool called with results equal to `--action` (items, spans,
// notes, the text), ask with a progress token (progress received, the
// citations of `--ask --json`), recheck of that answer. On pyrepo also: a
// malformed line written to the server's stdin (-32700, then calls go on),
// an unknown tool, bad arguments; and with the fake model an ask cancelled
// through an AbortSignal, which gets no response while a lookup runs beside it.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const deps = process.env.MCP_DEPS;
const sdk = path.join(deps, "node_modules/@modelcontextprotocol/sdk/dist/esm");
const { Client } = await import(pathToFileURL(path.join(sdk, "client/index.js")));
const { StdioClientTransport } = await import(pathToFileURL(path.join(sdk, "client/stdio.js")));

const DRQA = process.env.DRQA;
const WORK = process.env.WORK;

let n = 0;
let failed = 0;
function ok(cond, name, detail) {
    n++;
    console.log(`${cond ? "ok" : "not ok"} ${n} - ${name}`);
    if (!cond) {
        failed = 1;
        if (detail !== undefined)
            for (const l of String(typeof detail === "string" ? detail : JSON.stringify(detail)).split("\n").slice(0, 30))
                console.log(`#   ${l}`);
    }
}

function cli(args) {
    try {
        const out = execFileSync(DRQA, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 28 });
        return { rc: 0, out, err: "" };
    } catch (e) {
        return { rc: e.status, out: e.stdout || "", err: e.stderr || "" };
    }
}

function snake(name) {
    let out = "";
    for (let i = 0; i < name.length; i++) {
        const c = name[i], prev = name[i - 1] || "", next = name[i + 1] || "";
        const up = (x) => x >= "A" && x <= "Z", low = (x) => x >= "a" && x <= "z", dig = (x) => x >= "0" && x <= "9";
        if (i && up(c) && (low(prev) || dig(prev) || (up(prev) && low(next)))) out += "_";
        out += c.toLowerCase();
    }
    return out;
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

async function connect(args, extra = {}) {
    const transport = new StdioClientTransport({ command: DRQA, args: ["--mcp", ...args], stderr: "pipe", ...extra });
    const client = new Client({ name: "drqa-sdk-test", version: "1.0.0" });
    const errors = [];
    client.onerror = (e) => errors.push(String(e && e.message ? e.message : e));
    await client.connect(transport);
    return { client, transport, errors };
}

async function checkRepo(label, repo, index, examples, question) {
    const common = ["--index", index, "--no-progress", "--quiet"];
    const { client, transport, errors } = await connect([...common, repo]);
    const info = client.getServerVersion();
    ok(info && info.name === "drqa-tui", `${label}: initialize through the SDK (server ${info && info.name})`);
    ok(client.getServerCapabilities()?.tools !== undefined, `${label}: the tools capability`);

    const listed = (await client.listTools()).tools;
    const tools = Object.fromEntries(listed.map((t) => [t.name, t]));
    const unknown = cli(["--action", "NoSuchAction", "{}", ...common, repo]);
    const names = (unknown.err.split("the actions are ")[1] || "").trim().split(", ").filter((a) => a && a !== "Finish");
    const want = [...names.map(snake), "ask", "recheck"].sort();
    ok(names.length >= 8 && same(Object.keys(tools).sort(), want), `${label}: one tool per action, plus ask and recheck`,
       { got: Object.keys(tools).sort(), want });

    for (const name of Object.keys(tools).sort()) {
        if (name === "ask" || name === "recheck") continue;
        const args = examples[name];
        if (!args) {
            ok(false, `${label}: ${name}: an example call (add one)`);
            continue;
        }
        const action = tools[name].title;
        const c = cli(["--action", action, JSON.stringify(args), ...common, repo]);
        let res, problem = null;
        try {
            res = await client.callTool({ name, arguments: args });   // the SDK checks structuredContent against outputSchema
        } catch (e) {
            problem = String(e);
        }
        let good = c.rc === 0 && !problem && res && !res.isError;
        let detail = { problem, cli: c.err, res };
        if (good) {
            const j = JSON.parse(c.out);
            const sc = res.structuredContent;
            const spans = j.evidence.map((e) => [e.path, e.start_line, e.end_line, e.label ?? null]);
            const got = sc.spans.map((e) => [e.path, e.start_line, e.end_line, e.symbol ?? null]);
            const items = j.items.slice(0, 100);
            good = same(sc.items, items) && same(got, spans.slice(0, 50)) && same(sc.notes, j.notes) &&
                   sc.truncated === j.truncated && res.content[0].text === j.rendered;
            detail = { structured: JSON.stringify(sc).slice(0, 1500), cli: c.out.slice(0, 1500) };
        }
        ok(good, `${label}: ${name} ${JSON.stringify(args)} equals --action ${action}`, detail);
    }

    // ask with a progress token
    const progress = [];
    const r = await client.callTool({ name: "ask", arguments: { question } }, undefined,
                                    { onprogress: (p) => progress.push(p), timeout: 300000, resetTimeoutOnProgress: true });
    const values = progress.map((p) => p.progress);
    ok(progress.length >= 2 && values.every((v, i) => i === 0 || v > values[i - 1]),
       `${label}: ask sends increasing progress (${progress.length} notifications)`, progress.slice(0, 5));
    const a = cli(["--ask", question, "--json", ...common, repo]);
    const j = a.rc === 0 ? JSON.parse(a.out) : { citations: [] };
    const sc = r.structuredContent || {};
    const got = (sc.citations || []).map((c) => [c.path, c.start_line, c.end_line, c.text_hash]);
    const wantc = j.citations.map((c) => [c.path, c.start_line, c.end_line, c.text_hash]);
    ok(!r.isError && got.length > 0 && same(got, wantc) && sc.answer === j.answer,
       `${label}: ask returns the cited answer of --ask --json (${got.length} citations)`, { got, want: wantc, err: a.err });

    const rc = await client.callTool({ name: "recheck", arguments: { saved: sc } });
    ok(!rc.isError && rc.structuredContent.stale === false &&
       rc.structuredContent.citations.every((c) => c.verdict === "unchanged"),
       `${label}: recheck finds the fresh answer's citations unchanged`, rc);
    return { client, transport, errors };
}

const pyrepoExamples = {
    find_class: { class_name: "SessionBase" },
    find_function: { function_name: "dispatch" },
    find_code_snippet: { code_snippet: "def save(self" },
    semantic_search: { query: "where is the session saved" },
    view_code: { code_span_list: ["tinyweb/routing.py:Router", "tinyweb/auth.py:1-9"] },
    outline: { path: "tinyweb/app.py" },
    list_files: {},
    find_references: { symbol: "SessionBase" },
};
const flaskExamples = {
    find_class: { class_name: "Flask" },
    find_function: { function_name: "dispatch_request", class_name: "Flask" },
    find_code_snippet: { code_snippet: "def make_response(self, rv" },
    semantic_search: { query: "how a request is dispatched to a view function" },
    view_code: { code_span_list: ["Flask.full_dispatch_request", "ctx.py:1-30"] },
    outline: { path: "app.py" },
    list_files: { pattern: "*.py" },
    find_references: { symbol: "Flask" },
};

const repo = process.env.REPO;
const index = path.join(WORK, "pyrepo.sqlite");
const { client, transport, errors } = await checkRepo("pyrepo", repo, index, pyrepoExamples, "How are sessions saved?");

// malformed input on the server's own stdin, then calls go on
const before = errors.length;
transport._process.stdin.write("{\"jsonrpc\": \"2.0\", \"id\": 9, \"method\": \n");
let saw = false;
for (let i = 0; i < 100 && !saw; i++) {
    await new Promise((res) => setTimeout(res, 50));
    saw = errors.slice(before).some((e) => e.includes("-32700") || e.toLowerCase().includes("parse error"));
}
ok(saw, "a malformed line: the client sees the server's -32700 parse error", errors.slice(before));
await client.ping();
ok(true, "... and the server answers a ping after it");
let err = null;
try {
    await client.callTool({ name: "find_klass", arguments: {} });
} catch (e) {
    err = e;
}
ok(err && err.code === -32602, "an unknown tool: McpError -32602", String(err));
const bad = await client.callTool({ name: "find_class", arguments: { klass: "App" } });
const badCli = cli(["--action", "FindClass", JSON.stringify({ klass: "App" }), "--index", index, "--no-progress", repo]);
ok(bad.isError === true && badCli.err === `drqa-tui: ${bad.content[0].text}\n`,
   "bad arguments: isError with --action's own message", { mcp: bad, cli: badCli.err });
await client.close();

// cancel: an ask whose model request hangs, aborted through the SDK
if (process.env.FAKE_PORT) {
    const { client: c2 } = await connect(["--index", index, "--no-progress", "--policy", "llm", "--model", "fake-model",
                                          "--api-base", `http://127.0.0.1:${process.env.FAKE_PORT}/v1`, repo]);
    const ctl = new AbortController();
    let searching = false;
    const asked = c2.callTool({ name: "ask", arguments: { question: "How are sessions saved?" } }, undefined, {
        signal: ctl.signal, timeout: 120000,
        onprogress: (p) => { if (p.message === "searching") searching = true; },
    }).then(() => "answered", (e) => `rejected: ${e && e.message}`);
    for (let i = 0; i < 600 && !searching; i++) await new Promise((res) => setTimeout(res, 50));
    await new Promise((res) => setTimeout(res, 300));
    const side = await c2.callTool({ name: "find_class", arguments: { class_name: "App" } });
    ok(searching && side.isError === false, "a find_class runs while an ask waits on its model");
    ctl.abort("the user gave up");
    const outcome = await asked;
    ok(outcome.startsWith("rejected"), "the cancelled ask ends on the client's side", outcome);
    await c2.ping();
    ok(true, "... and the server answers after the cancel");
    const t0 = Date.now();
    await c2.close();
    ok(Date.now() - t0 < 15000, `the server closes promptly after the cancel (${Date.now() - t0} ms)`);
}

if (process.env.FLASK && existsSync(process.env.FLASK)) {
    const r = await checkRepo("flask", process.env.FLASK, path.join(WORK, "flask.sqlite"), flaskExamples,
                              "How does Flask dispatch a request to a view function?");
    await r.client.close();
} else {
    n++;
    console.log(`ok ${n} # SKIP Debian's flask is not installed (apt-get install python3-flask)`);
}

console.log(`1..${n}`);
process.exit(failed);
