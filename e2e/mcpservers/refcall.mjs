// Times tools/call with the MCP project's TypeScript client (the SDK the
// published servers are built on, installed with them), for the pool's
// comparison benchmark (internal/mcppool BenchmarkPublishedCall). Usage:
//   node refcall.mjs <calls> <tool> <arguments JSON> http <url>
//   node refcall.mjs <calls> <tool> <arguments JSON> stdio <command> [args…]
// Connects, lists the tools (as the pool's listing does), calls once to warm
// up, then times <calls> calls in a row and prints {"calls", "ns"}.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [calls, name, rawArgs, kind, ...rest] = process.argv.slice(2);
const args = JSON.parse(rawArgs);
const transport = kind === 'http'
  ? new StreamableHTTPClientTransport(new URL(rest[0]))
  : new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: 'ignore' });
const client = new Client({ name: 'guilds-bench-reference', version: '1' });
await client.connect(transport);
await client.listTools();
const call = async () => {
  const r = await client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${JSON.stringify(r.content)}`);
};
await call();
const n = Number(calls);
const start = process.hrtime.bigint();
for (let i = 0; i < n; i++) await call();
const ns = process.hrtime.bigint() - start;
console.log(JSON.stringify({ calls: n, ns: ns.toString() }));
await client.close();
process.exit(0);
