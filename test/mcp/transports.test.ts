// /mcp through the SDK's own clients over loopback, for both transports (Streamable HTTP and legacy
// HTTP+SSE): initialise, tools generated from the route table with the routes' schemas, a dispatched call
// answering like REST, bad arguments as a tool error naming the field on a session that stays usable, and
// keys: 401 before any session, and a session id presented with another key answers 404.
import { test, describe, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { connect, KINDS, textOf, transportFor } from '../helpers/mcp-clients.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TOOL_CATALOGUE } from '../../src/mcp/tool-catalogue.js';
import { DetectBody } from '../../src/vision/schemas.js';

let t: TestApp;
let otherKey: string;
before(async () => {
  t = await startTestApp();
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
const ACCEPT = 'application/json, text/event-stream';

/** Raw POST /mcp (for what the SDK client hides: status codes and error bodies). */
function post(body: unknown, headers: Record<string, string>) {
  return fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
    body: JSON.stringify(body),
  });
}

/** Opens a legacy SSE stream by hand and reads up to the endpoint event. */
async function openRawSse(key: string): Promise<{ endpoint: string; close(): void; status: number }> {
  const ac = new AbortController();
  const res = await fetch(`${t.url}/mcp`, {
    headers: { accept: 'text/event-stream', authorization: `Bearer ${key}` },
    signal: ac.signal,
  });
  if (res.status !== 200) return { endpoint: '', status: res.status, close: () => ac.abort() };
  const reader = res.body!.getReader();
  let text = '';
  while (!text.includes('\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += Buffer.from(value).toString();
  }
  const m = /^event: endpoint\ndata: (\S+)\n\n/.exec(text);
  assert.ok(m, `expected an endpoint event first, got ${JSON.stringify(text)}`);
  return { endpoint: m[1]!, status: res.status, close: () => ac.abort() };
}

for (const kind of KINDS) {
  describe(`${kind} transport`, () => {
    test('initialises with the server info and the tools capability', async () => {
      const c = await connect(t, kind);
      try {
        assert.equal(c.client.getServerVersion()?.name, 'sightflow');
        assert.equal(c.client.getServerVersion()?.version, t.app.services.version);
        assert.ok(c.client.getServerCapabilities()?.tools, 'tools capability');
        assert.match(c.client.getInstructions() ?? '', /detect_objects/);
      } finally {
        await c.close();
      }
    });

    test("lists exactly the tools whose routes exist, with the routes' schemas", async () => {
      const c = await connect(t, kind);
      try {
        const { tools } = await c.client.listTools();
        const routes = t.app.server.router.all();
        const expected = TOOL_CATALOGUE.filter((s) =>
          routes.some((r) => r.method === s.method && r.path === s.path),
        ).map((s) => s.name);
        assert.deepEqual(tools.map((x) => x.name).sort(), expected.sort());
        assert.ok(expected.includes('get_project') && expected.includes('detect_objects'));

        const detect = tools.find((x) => x.name === 'detect_objects')!;
        assert.equal(detect.inputSchema.type, 'object');
        assert.deepEqual(Object.keys(detect.inputSchema.properties ?? {}).sort(), Object.keys(DetectBody.shape).sort());
        assert.equal(
          (detect.inputSchema as { additionalProperties?: unknown }).additionalProperties,
          false,
          'strict like the REST body',
        );
        const conf = (detect.inputSchema.properties as Record<string, any>).confidence_threshold;
        assert.deepEqual([conf.type, conf.minimum, conf.maximum], ['number', 0, 1]);
        assert.equal(detect.outputSchema?.type, 'object');
        assert.ok(detect.annotations?.readOnlyHint);

        // Path parameters become required string arguments.
        for (const x of tools.filter((x) => TOOL_CATALOGUE.find((s) => s.name === x.name)!.path.includes(':id'))) {
          assert.equal((x.inputSchema.properties as Record<string, any>).id?.type, 'string', x.name);
          assert.ok(x.inputSchema.required?.includes('id'), `${x.name} requires id`);
        }
      } finally {
        await c.close();
      }
    });

    test('a tool call answers what the REST route answers: structured content plus a summary', async () => {
      const c = await connect(t, kind);
      try {
        const rest = await api(t, '/v1/project');
        const r = await c.client.callTool({ name: 'get_project', arguments: {} });
        assert.ok(!r.isError, textOf(r));
        assert.deepEqual(r.structuredContent, rest.body);
        assert.equal(textOf(r), `Project ${rest.body.name} (${rest.body.id}).`);
      } finally {
        await c.close();
      }
    });

    test('bad arguments are a tool error with the REST message naming the field; the session stays usable', async () => {
      const c = await connect(t, kind);
      try {
        const args = { image_base64: 'aGVsbG8=', confidence_threshold: 3 };
        const rest = await api(t, '/v1/vision/detect', { method: 'POST', json: args });
        assert.equal(rest.status, 400);
        const r = await c.client.callTool({ name: 'detect_objects', arguments: args });
        assert.equal(r.isError, true);
        assert.equal(textOf(r), rest.body.error.message);
        assert.match(textOf(r), /confidence_threshold/);
        assert.equal(r.structuredContent, undefined);

        const unknown = await c.client.callTool({
          name: 'detect_objects',
          arguments: { image: 'http://127.0.0.1:9/x.jpg', confidense: 0.2 },
        });
        assert.equal(unknown.isError, true);
        assert.match(textOf(unknown), /confidense/);

        const both = await c.client.callTool({
          name: 'detect_objects',
          arguments: { image: 'http://127.0.0.1:9/x.jpg', image_base64: 'aGVsbG8=' },
        });
        assert.equal(both.isError, true);
        assert.equal(textOf(both), 'Expected exactly one of image, image_base64 but received both');

        const extra = await c.client.callTool({ name: 'get_project', arguments: { colour: 'red' } });
        assert.equal(extra.isError, true);
        assert.match(textOf(extra), /"colour"/);

        await assert.rejects(c.client.callTool({ name: 'no_such_tool', arguments: {} }), /Unknown tool "no_such_tool"/);

        const ok = await c.client.callTool({ name: 'get_project', arguments: {} });
        assert.ok(!ok.isError, 'the session still answers');
      } finally {
        await c.close();
      }
    });

    test('a missing or invalid key is refused before any session exists', async () => {
      for (const key of [null, 'sk_sf_not-a-real-key', `sk_sf_${'A'.repeat(43)}`]) {
        const client = new Client({ name: 'bad-key', version: '0' });
        await assert.rejects(client.connect(transportFor(t, kind, key)), (e: Error) =>
          /401|Unauthorized|authentication/i.test(`${e.message} ${(e as { code?: unknown }).code}`),
        );
        await client.close().catch(() => {});
      }
    });
  });
}

test('401 in the documented error shape, for every /mcp route', async () => {
  for (const [method, path] of [
    ['POST', '/mcp'],
    ['GET', '/mcp'],
    ['DELETE', '/mcp'],
    ['POST', '/mcp/messages?sessionId=x'],
  ] as const) {
    for (const auth of [undefined, 'Bearer sk_sf_nope']) {
      const res = await fetch(t.url + path, {
        method,
        headers: { accept: ACCEPT, 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
        body: method === 'POST' ? JSON.stringify(INIT) : undefined,
      });
      assert.equal(res.status, 401, `${method} ${path} ${auth}`);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
      const body = (await res.json()) as any;
      assert.equal(body.error.type, 'authentication_error');
      assert.ok(body.error.code === 'missing_api_key' || body.error.code === 'invalid_api_key');
    }
  }
});

test('Streamable HTTP: a session id used with another key (or unknown) is 404; DELETE ends a session', async () => {
  const c = await connect(t, 'streamable-http');
  const sid = (c.transport as { sessionId?: string }).sessionId!;
  assert.ok(sid);
  try {
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} };
    for (const key of [otherKey]) {
      const res = await post(list, {
        authorization: `Bearer ${key}`,
        'mcp-session-id': sid,
        'mcp-protocol-version': '2025-06-18',
      });
      assert.equal(res.status, 404);
      const body = (await res.json()) as any;
      assert.deepEqual([body.error.type, body.error.code], ['not_found_error', 'session_not_found']);
      assert.ok(!JSON.stringify(body).includes('other key'), 'does not reveal that the session exists');
    }
    const unknown = await post(list, { authorization: `Bearer ${t.key}`, 'mcp-session-id': 'no-such-session' });
    assert.equal(unknown.status, 404);

    // The SDK client with the other key and the stolen id fails too.
    const thief = new Client({ name: 'thief', version: '0' });
    const stolen = transportFor(t, 'streamable-http', otherKey, sid);
    await assert.rejects(
      (async () => {
        await thief.connect(stolen);
        await thief.listTools();
      })(),
    );
    await thief.close().catch(() => {});

    // The owner is unaffected.
    assert.ok((await c.client.listTools()).tools.length > 0);

    // Another key cannot end it either; the owner can.
    const del = await fetch(`${t.url}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${otherKey}`, 'mcp-session-id': sid },
    });
    assert.equal(del.status, 404);
    const mine = await fetch(`${t.url}/mcp`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${t.key}`, 'mcp-session-id': sid, 'mcp-protocol-version': '2025-06-18' },
    });
    assert.equal(mine.status, 200);
    const after = await post(list, { authorization: `Bearer ${t.key}`, 'mcp-session-id': sid });
    assert.equal(after.status, 404);
  } finally {
    await c.client.close();
  }
});

test('Streamable HTTP: a message without a session that is not initialize is 400, and so is DELETE without one', async () => {
  const res = await post(
    { jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} },
    { authorization: `Bearer ${t.key}` },
  );
  assert.equal(res.status, 400);
  const body = (await res.json()) as any;
  assert.match(body.error.message, /initialize request.*Mcp-Session-Id/);
  const del = await fetch(`${t.url}/mcp`, { method: 'DELETE', headers: { authorization: `Bearer ${t.key}` } });
  assert.equal(del.status, 400);
  assert.equal(((await del.json()) as any).error.param, 'mcp-session-id');
});

test('legacy SSE: the stream announces the endpoint; a session id used with another key is 404', async () => {
  const s = await openRawSse(t.key);
  try {
    assert.match(s.endpoint, /^\/mcp\/messages\?sessionId=[0-9a-f-]{36}$/);
    const send = (key: string, body: unknown) =>
      fetch(t.url + s.endpoint, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const stolen = await send(otherKey, INIT);
    assert.equal(stolen.status, 404);
    const body = (await stolen.json()) as any;
    assert.deepEqual(
      [body.error.type, body.error.code, body.error.param],
      ['not_found_error', 'session_not_found', 'sessionId'],
    );
    const notRpc = await send(t.key, { hello: 'world' });
    assert.equal(notRpc.status, 400);
    const own = await send(t.key, INIT);
    assert.equal(own.status, 202);
  } finally {
    s.close();
  }
  const noStream = await fetch(`${t.url}/mcp`, {
    headers: { authorization: `Bearer ${t.key}`, accept: 'application/json' },
  });
  assert.equal(noStream.status, 400);
});
