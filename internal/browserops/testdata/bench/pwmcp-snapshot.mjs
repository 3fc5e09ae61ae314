// Snapshots pages with Playwright MCP attached to a running Chromium over
// CDP, for the snapshot size benchmark (bench_test.go). Usage:
//   node pwmcp-snapshot.mjs <path to @playwright/mcp/cli.js> <cdp endpoint> <url>...
// Prints one JSON line per URL: {"url", "bytes", "yaml_bytes", "text"}.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

const [cli, cdp, ...urls] = process.argv.slice(2);
const child = spawn(process.execPath, [cli, '--cdp-endpoint', cdp], { stdio: ['pipe', 'pipe', 'inherit'] });
const pending = new Map();
let nextId = 1;
createInterface({ input: child.stdout }).on('line', (line) => {
  let msg;
  try { msg = JSON.parse(line); } catch { return; }
  if (msg.id && pending.has(msg.id)) { pending.get(msg.id)(msg); pending.delete(msg.id); }
});
const rpc = (method, params) => new Promise((resolve, reject) => {
  const id = nextId++;
  pending.set(id, (m) => (m.error ? reject(new Error(JSON.stringify(m.error))) : resolve(m.result)));
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
});
const text = (r) => (r.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'guilds-bench', version: '1' } });
child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
for (const url of urls) {
  await rpc('tools/call', { name: 'browser_navigate', arguments: { url } });
  const snap = text(await rpc('tools/call', { name: 'browser_snapshot', arguments: {} }));
  const m = snap.match(/```yaml\n([\s\S]*?)```/);
  console.log(JSON.stringify({ url, bytes: Buffer.byteLength(snap), yaml_bytes: m ? Buffer.byteLength(m[1]) : 0, text: snap }));
}
child.kill();
process.exit(0);
