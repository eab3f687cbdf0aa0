// Session lifetime through the real server: a key holds at most SIGHTFLOW_MCP_MAX_SESSIONS_PER_KEY sessions
// (the next initialize or SSE stream is 429 with Retry-After, another key is unaffected, ending one frees a
// slot), and a session idle past SIGHTFLOW_MCP_SESSION_IDLE_MS is closed: its id answers 404 and a legacy
// SSE stream ends. Both settings are read from the environment when the app starts.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { connect, type Connected } from '../helpers/mcp-clients.js';

const IDLE_MS = 3000;
const MAX = 3;

let t: TestApp;
let otherKey: string;
before(async () => {
  t = await startTestApp({
    SIGHTFLOW_MCP_SESSION_IDLE_MS: String(IDLE_MS),
    SIGHTFLOW_MCP_MAX_SESSIONS_PER_KEY: String(MAX),
  });
  otherKey = (await t.app.services.projects.createKey(t.projectId, 'other')).key;
});
after(async () => {
  await t?.close();
});

const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
};
const initialize = (key: string) =>
  fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify(INIT),
  });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('a key holds at most the configured number of sessions; 429 beyond, per key, freed by ending one', async () => {
  const open: Connected[] = [];
  try {
    open.push(await connect(t, 'streamable-http'), await connect(t, 'sse'), await connect(t, 'streamable-http'));
    const refused = await initialize(t.key);
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers.get('retry-after')) >= 1);
    const body = (await refused.json()) as any;
    assert.deepEqual([body.error.type, body.error.code], ['rate_limit_error', 'too_many_sessions']);
    assert.match(body.error.message, new RegExp(`already has ${MAX} open MCP sessions`));
    const sse = await fetch(`${t.url}/mcp`, {
      headers: { authorization: `Bearer ${t.key}`, accept: 'text/event-stream' },
    });
    assert.equal(sse.status, 429);
    await sse.body?.cancel();

    // Another key has its own budget.
    const other = await connect(t, 'streamable-http', otherKey);
    await other.close();

    // Ending a session frees its slot (DELETE for Streamable HTTP, closing the stream for SSE).
    await open.shift()!.close();
    open.push(await connect(t, 'streamable-http'));
    await open.splice(0, 1)[0]!.close();
    await waitFor(async () => (await initialize(t.key)).status === 200 || undefined);
  } finally {
    for (const c of open) await c.close();
  }
});

async function waitFor(fn: () => Promise<true | undefined>, timeoutMs = 10_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await fn())) {
    if (Date.now() > until) throw new Error('timed out');
    await sleep(50);
  }
}

test('idle sessions expire: the id answers 404 and a legacy stream ends; activity keeps a session alive', async () => {
  // Slots from the previous test (a raw initialize nobody ended) expire first.
  await sleep(IDLE_MS * 2 + 500);
  const active = await connect(t, 'streamable-http');
  const idle = await connect(t, 'streamable-http');
  // A raw legacy stream (the SDK's EventSource would reconnect, opening a fresh session).
  const ac = new AbortController();
  const res = await fetch(`${t.url}/mcp`, {
    headers: { authorization: `Bearer ${t.key}`, accept: 'text/event-stream' },
    signal: ac.signal,
  });
  assert.equal(res.status, 200);
  const reader = res.body!.getReader();
  const first = Buffer.from((await reader.read()).value!).toString();
  const endpoint = /data: (\S+)/.exec(first)![1]!;
  const streamEnded = (async () => {
    for (;;) if ((await reader.read()).done) return true;
  })();
  try {
    // Calls every sixth of the idle time keep `active` open past the limit.
    const until = Date.now() + IDLE_MS * 2 + 1000;
    while (Date.now() < until) {
      assert.ok(!(await active.client.callTool({ name: 'get_project', arguments: {} })).isError);
      await sleep(IDLE_MS / 6);
    }
    await assert.rejects(idle.client.listTools(), /404|Session not found|session/i);
    assert.equal(
      await Promise.race([streamEnded, sleep(5_000).then(() => false)]),
      true,
      'the expired SSE stream ended',
    );
    const post = await fetch(t.url + endpoint, {
      method: 'POST',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      body: JSON.stringify(INIT),
    });
    assert.equal(post.status, 404);
    assert.ok(!(await active.client.callTool({ name: 'get_project', arguments: {} })).isError);
  } finally {
    ac.abort();
    await active.close();
    await idle.client.close();
  }
});
