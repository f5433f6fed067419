// The official MCP TypeScript SDK's client over Streamable HTTP against
// drqa-tui --mcp-http: connect (initialize, session), list the tools, call
// find_class, call ask with a progress callback, end the session (DELETE).
// Prints one JSON object with what it saw; tests/test_mcp_conformance.sh
// checks it. Usage: node sdk_http_client.mjs URL (MCP_DEPS: test-deps/).
import { pathToFileURL } from "node:url";

const sdk = (p) => import(pathToFileURL(`${process.env.MCP_DEPS}/node_modules/@modelcontextprotocol/sdk/dist/esm/${p}`).href);
const { Client } = await sdk("client/index.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
const { CallToolResultSchema } = await sdk("types.js");

const out = {};
const client = new Client({ name: "drqa-tui-test", version: "1" });
const transport = new StreamableHTTPClientTransport(new URL(process.argv[2]));
await client.connect(transport);
out.sessionId = transport.sessionId ?? null;
out.protocolVersion = transport.protocolVersion ?? null;
out.tools = (await client.listTools()).tools.map((t) => t.name);
const fc = await client.callTool({ name: "find_class", arguments: { class_name: "Router" } });
out.findClass = { isError: fc.isError ?? false, text: (fc.content?.[0]?.text ?? "").slice(0, 200) };
const progress = [];
const ask = await client.request(
  { method: "tools/call", params: { name: "ask", arguments: { question: "How does the router dispatch a request?" } } },
  CallToolResultSchema,
  { onprogress: (p) => progress.push(p), timeout: 120000 },
);
out.ask = { isError: ask.isError ?? false, text: (ask.content?.[0]?.text ?? "").slice(0, 300), citations: ask.structuredContent?.citations?.length ?? 0 };
out.progress = progress.length;
await transport.terminateSession();
out.terminated = transport.sessionId === undefined;
await client.close();
console.log(JSON.stringify(out));
