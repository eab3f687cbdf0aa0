// Strings no database column can hold and no user means (U+0000, lone UTF-16 surrogates) are refused at the
// boundary as a 400 invalid_request_error naming the field, on every route, and nothing is stored. Each field
// below once reached SQL and answered 500 (PostgreSQL's text and jsonb cannot hold U+0000).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { startTestApp, admin, api, type TestApp } from '../helpers/app.js';

let t: TestApp;
let col: string;
before(async () => {
  t = await startTestApp();
  const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'hostile' } });
  assert.equal(r.status, 201, r.text);
  col = r.body.id;
});
after(async () => {
  await t?.close();
});

const NUL = '\u0000';
const LONE = '\ud800';

function refused(r: { status: number; body: any; text: string }, param: string, what = 'U+0000'): void {
  assert.equal(r.status, 400, r.text);
  assert.equal(r.body.error.type, 'invalid_request_error', r.text);
  assert.equal(r.body.error.code, 'invalid_request', r.text);
  assert.equal(r.body.error.param, param, r.text);
  assert.ok(r.body.error.message.includes(what), r.text);
}

/** What the database holds that a request could have changed: refused requests must leave it as it was. */
async function stored(): Promise<string> {
  const rows = [];
  for (const table of ['projects', 'api_keys', 'vector_collections', 'vector_items', 'video_tasks']) {
    rows.push(table, JSON.stringify(await t.app.services.db.query(`SELECT count(*)::int AS n FROM ${table}`)));
  }
  return rows.join(' ');
}

const items = (item: Record<string, unknown>) =>
  api(t, `/v1/vectors/collections/${col}/index`, { method: 'POST', json: { items: [item] } });
const video = (input: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  api(t, '/v1/video/process', { method: 'POST', json: { input: [input], steps: [{ model: 'detect' }], ...extra } });
const URL_OK = { type: 'video_url', url: 'http://127.0.0.1:9/v.mp4' };

test('fields that used to answer 500 on U+0000 are each a 400 naming the field, and nothing is stored', async () => {
  const before = await stored();
  refused(await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: `a${NUL}b` } }), 'name');
  refused(await items({ text: `hello${NUL}world` }), 'items[0].text');
  refused(await items({ text: 'ok', metadata: { [`k${NUL}`]: 1 } }), 'items[0].metadata.k\\u0000');
  refused(await items({ text: 'ok', metadata: { k: `v${NUL}` } }), 'items[0].metadata.k');
  refused(await items({ text: 'ok', metadata: { k: { deep: [1, `v${NUL}`] } } }), 'items[0].metadata.k.deep[1]');
  refused(await admin(t, '/admin/v1/projects', { method: 'POST', json: { name: `p${NUL}` } }), 'name');
  refused(
    await admin(t, `/admin/v1/projects/${t.projectId}/keys`, { method: 'POST', json: { name: `k${NUL}` } }),
    'name',
  );
  refused(await video(URL_OK, { webhook: { url: `http://127.0.0.1:9/hook${NUL}` } }), 'webhook.url');
  refused(await video({ type: 'video_url', url: `http://127.0.0.1:9/v${NUL}.mp4` }), 'input[0].url');
  assert.equal(await stored(), before);
});

test('lone surrogates are refused the same way (they would be stored as U+FFFD, not what was sent)', async () => {
  const before = await stored();
  refused(await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: `a${LONE}` } }), 'name', 'surrogate');
  refused(await items({ text: `x${LONE}` }), 'items[0].text', 'surrogate');
  refused(await items({ text: 'ok', metadata: { [`\udc00k`]: 1 } }), 'items[0].metadata.\\udc00k', 'surrogate');
  // A well-formed pair (an emoji) is ordinary text.
  const ok = await items({ id: 'emoji', text: 'smile \ud83d\ude00', metadata: { note: '\ud83d\ude00' } });
  assert.equal(ok.status, 200, ok.text);
  assert.notEqual(await stored(), before);
});

test('metadata patch, search filter and item delete ids are checked too', async () => {
  assert.equal((await items({ id: 'it1', text: 'one' })).status, 200);
  const before = await stored();
  refused(
    await api(t, `/v1/vectors/collections/${col}/items/it1`, { method: 'PATCH', json: { metadata: { a: `x${NUL}` } } }),
    'metadata.a',
  );
  refused(
    await api(t, `/v1/vectors/collections/${col}/search`, {
      method: 'POST',
      json: { text: 'one', filter: { a: `x${NUL}` } },
    }),
    'filter.a',
  );
  refused(
    await api(t, `/v1/vectors/collections/${col}/items`, { method: 'DELETE', json: { ids: [`it1${NUL}`] } }),
    'ids[0]',
  );
  const item = await api(t, `/v1/vectors/collections/${col}/items/it1`);
  assert.deepEqual(item.body.metadata, {});
  assert.equal(await stored(), before);
});

test('path ids and query strings with U+0000 are a 400 naming the parameter', async () => {
  const path = await api(t, `/v1/vectors/collections/${col}%00`, { unchecked: true });
  assert.equal(path.status, 400, path.text);
  assert.deepEqual(
    { ...path.body.error, message: undefined },
    { type: 'invalid_request_error', code: 'invalid_parameter', message: undefined, param: 'id' },
  );
  const item = await api(t, `/v1/vectors/collections/${col}/items/a%00b`, { unchecked: true });
  assert.equal(item.status, 400, item.text);
  assert.equal(item.body.error.param, 'item_id');
  const adminPath = await admin(t, '/admin/v1/projects/x%00/keys', { unchecked: true } as never);
  assert.equal(adminPath.status, 400, adminPath.text);
  assert.equal(adminPath.body.error.param, 'id');
  const q = await api(t, `/v1/vectors/collections/${col}/items?limit=1%00`, { unchecked: true });
  assert.equal(q.status, 400, q.text);
  assert.equal(q.body.error.param, 'limit');
  // A route without a query schema still gets the rule (its handler reads the raw query).
  const stream = await api(t, '/v1/video/tasks/vt_x/stream?offset=%00', { unchecked: true });
  assert.equal(stream.status, 400, stream.text);
  assert.equal(stream.body.error.param, 'offset');
  const files = await api(t, '/v1/files/a%00b?expires=1&signature=x', { unchecked: true });
  assert.equal(files.status, 400, files.text);
});

test('multipart text fields are held to the same rule', async () => {
  const form = new FormData();
  form.set('image', 'http://127.0.0.1:9/i.png');
  form.set('classes', `person${NUL}`);
  const r = await api(t, '/v1/vision/detect', { method: 'POST', body: form });
  refused(r, 'classes[0]');
  const named = new FormData();
  named.set('image', 'http://127.0.0.1:9/i.png');
  named.set(`x${NUL}`, '1');
  refused(await api(t, '/v1/vision/detect', { method: 'POST', body: named }), 'x\\u0000');
});

test('headers: a bad Idempotency-Key or Last-Event-ID is a 400 naming it; control bytes never reach a route', async () => {
  const key = await api(t, '/v1/vectors/collections', {
    method: 'POST',
    json: { name: 'idem' },
    headers: { 'idempotency-key': 'a\tb' },
  });
  assert.equal(key.status, 400, key.text);
  assert.equal(key.body.error.param, 'Idempotency-Key');
  const lei = await api(t, '/v1/video/tasks/vt_x/stream', { headers: { 'last-event-id': 'x1' } });
  assert.equal(lei.status, 400, lei.text);
  assert.equal(lei.body.error.param, 'Last-Event-ID');
  // fetch will not send U+0000 in a header; a raw request does. The HTTP parser (uWS) drops such a request
  // before any route sees it (the socket then idles out): nothing is stored and the server goes on.
  const before = await stored();
  const port = Number(new URL(t.url).port);
  const body = JSON.stringify({ name: 'raw-nul' });
  for (const header of [`Idempotency-Key: a${NUL}b`, `Last-Event-ID: 1${NUL}`, `X-Request-Id: r${NUL}`]) {
    await new Promise<void>((resolve) => {
      const sock = connect(port, '127.0.0.1');
      sock.on('error', () => resolve());
      sock.write(
        Buffer.from(
          `POST /v1/vectors/collections HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${t.key}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n${header}\r\n\r\n${body}`,
          'latin1',
        ),
      );
      setTimeout(() => {
        sock.destroy();
        resolve();
      }, 300);
    });
  }
  assert.equal(await stored(), before);
  assert.equal((await api(t, '/v1/project')).status, 200);
});

test('nesting deeper than 64 levels is a 400, not a stack overflow in the code that reads it', async () => {
  const deep = `${'{"a":'.repeat(20_000)}"leaf"${'}'.repeat(20_000)}`;
  const r = await api(t, `/v1/vectors/collections/${col}/index`, {
    method: 'POST',
    body: `{"items":[{"text":"deep","metadata":{"d":${deep}}}]}`,
    headers: { 'content-type': 'application/json' },
  });
  assert.equal(r.status, 400, r.text.slice(0, 300));
  assert.equal(r.body.error.code, 'invalid_request');
  assert.match(r.body.error.message, /nested more than 64 levels deep/);
  assert.ok(r.body.error.param.startsWith('items[0].metadata.d.a.a'));
});

test('MCP: U+0000 in a tool argument is refused before any tool runs, as JSON-RPC over HTTP 400', async () => {
  const before = await stored();
  const headers = {
    authorization: `Bearer ${t.key}`,
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
  };
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '0' } },
  };
  const opened = await fetch(`${t.url}/mcp`, { method: 'POST', headers, body: JSON.stringify(init) });
  assert.equal(opened.status, 200);
  await opened.text();
  const session = opened.headers.get('mcp-session-id')!;
  const call = {
    jsonrpc: '2.0',
    id: 2,
    method: 'tools/call',
    params: { name: 'create_collection', arguments: { name: `m${NUL}` } },
  };
  const r = await fetch(`${t.url}/mcp`, {
    method: 'POST',
    headers: { ...headers, 'mcp-session-id': session },
    body: JSON.stringify(call),
  });
  const body = (await r.json()) as { error: { type: string; code: string; param: string } };
  assert.equal(r.status, 400);
  assert.deepEqual(
    { ...body.error, message: undefined },
    { type: 'invalid_request_error', code: 'invalid_request', message: undefined, param: 'params.arguments.name' },
  );
  assert.equal(await stored(), before);
  await fetch(`${t.url}/mcp`, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': session } }).then((x) =>
    x.text(),
  );
});
