// What importing the app loads: every process that starts it (the server, each CLI command, fronts, workers)
// pays for its imports, so libraries only some requests need load with the first of them: the MCP SDK with the
// first /mcp request, the MQTT client when a worker starts publishing, the ONNX protobuf library with the first
// graph rewrite, the tokenizer's table with the first text counted (`sightflow serve` loads the SDK and the
// tokenizer before it listens). A child process imports the app and lists the packages it loaded (every module
// an import loads passes a loader hook; CommonJS files that require one another are in the require cache), then
// loads the MCP SDK the way /mcp does, which must show up.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { NODE_ARGS } from '../helpers/cli.js';

const dist = process.env.SIGHTFLOW_TEST_DIST === '1';
const file = (rel: string) =>
  pathToFileURL(
    fileURLToPath(new URL(`../../${dist ? 'dist/' : ''}src/${rel}${dist ? '.js' : '.ts'}`, import.meta.url)),
  ).href;

const HOOK = `
let port;
export function initialize(data) { port = data.port; }
export async function load(url, context, next) { port.postMessage(url); return next(url, context); }`;

// Prints, as JSON, the packages loaded after the app's import and after the MCP SDK's.
const CHILD = `
import { register, createRequire } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const { port1, port2 } = new MessageChannel();
const seen = new Set();
let waiting = null;
port1.on('message', (url) => { seen.add(url); if (waiting && url === waiting.url) waiting.done(); });
register('data:text/javascript,' + encodeURIComponent(${JSON.stringify(HOOK)}), { data: { port: port2 }, transferList: [port2] });
// The hooks run on their own thread: a last import's own URL arriving means every load before it has arrived.
let n = 0;
const settled = () => new Promise((done) => {
  const url = 'data:text/javascript,export default ' + n++;
  waiting = { url, done };
  import(url);
});
const packages = () => {
  const cache = Object.keys(createRequire(import.meta.url).cache);
  const names = new Set();
  for (const u of [...seen, ...cache]) {
    const m = decodeURIComponent(u).match(/node_modules\\/((?:@[^/]+\\/)?[^/]+)\\//);
    if (m) names.add(m[1]);
  }
  return [...names].sort();
};
await import(process.argv[1]);
await settled();
const app = packages();
const { mcpSdk } = await import(process.argv[2]);
await mcpSdk();
await settled();
console.log(JSON.stringify({ app, afterMcp: packages() }));
process.exit(0);`;

test('importing the app leaves the MCP SDK, the MQTT client, the ONNX protobuf library and the tokenizer unloaded', async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...NODE_ARGS, '--input-type=module', '-e', CHILD, file('app'), file('mcp/sdk')],
    { maxBuffer: 16 * 1024 * 1024, timeout: 60_000 },
  );
  const { app, afterMcp } = JSON.parse(stdout.trim().split('\n').at(-1)!) as { app: string[]; afterMcp: string[] };
  // What the app needs at once does load (the listing works).
  for (const p of ['zod', 'pino', 'onnxruntime-node']) assert.ok(app.includes(p), `${p} loads with the app`);
  for (const p of ['@modelcontextprotocol/sdk', 'mqtt', 'onnx-proto', 'gpt-tokenizer'])
    assert.ok(!app.includes(p), `${p} does not load with the app: ${app.join(', ')}`);
  assert.ok(afterMcp.includes('@modelcontextprotocol/sdk'), 'the MCP SDK loads with its first use');
});
