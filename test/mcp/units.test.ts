// Unit checks without a server: the session registry (ownership, per-key limit counting sessions being
// opened, idle expiry that spares busy sessions) with a fake clock, and tools appearing as routes land.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { SessionRegistry, type McpSession } from '../../src/mcp/session-registry.js';
import { RouteTools } from '../../src/mcp/route-tools.js';
import { callRoute } from '../../src/mcp/route-dispatch.js';
import { Router } from '../../src/http/router.js';
import { defineRoute } from '../../src/http/route.js';
import { ApiError } from '../../src/base/errors.js';
import { createLogger } from '../../src/base/log.js';

const log = createLogger('silent');
const A = { projectId: 'proj_a', keyId: 'key_a' };
const B = { projectId: 'proj_a', keyId: 'key_b' };

function session(id: string, principal = A, now = 0): McpSession & { closed: number } {
  const s = {
    id,
    kind: 'streamable-http' as const,
    principal,
    lastActive: now,
    inFlight: 0,
    closed: 0,
    async close() {
      s.closed++;
    },
  };
  return s;
}

test('registry: a session answers only to the key that opened it, 404 otherwise', () => {
  const r = new SessionRegistry({ idleMs: 1000, maxPerKey: 4 }, log, () => 0);
  r.add(session('s1'));
  assert.equal(r.get('s1', A).id, 's1');
  for (const [id, p] of [
    ['s1', B],
    ['nope', A],
    [undefined, A],
  ] as const) {
    assert.throws(
      () => r.get(id, p),
      (e: ApiError) => e.status === 404 && e.code === 'session_not_found',
    );
  }
  assert.throws(
    () => r.get('s1', A, 'sse'),
    (e: ApiError) => e.status === 404,
    'a transport kind mismatch is unknown too',
  );
});

test('registry: the per-key limit counts sessions being opened; 429 with Retry-After beyond it', () => {
  const r = new SessionRegistry({ idleMs: 60_000, maxPerKey: 2 }, log, () => 0);
  r.add(session('s1'));
  const release = r.reserve(A);
  assert.throws(
    () => r.reserve(A),
    (e: ApiError) => e.status === 429 && e.code === 'too_many_sessions' && e.headers['Retry-After'] === '60',
  );
  r.reserve(B)(); // another key: its own budget
  release();
  release(); // idempotent
  r.reserve(A)();
  r.remove('s1');
  assert.equal(r.countFor(A.keyId), 0);
});

test('registry: idle sessions are closed by the sweep; busy or recently used ones are not', async () => {
  let now = 0;
  const r = new SessionRegistry({ idleMs: 1000, maxPerKey: 8 }, log, () => now);
  const idle = session('idle');
  const busy = session('busy');
  const used = session('used');
  for (const s of [idle, busy, used]) r.add(s);
  busy.inFlight = 1;
  now = 900;
  r.get('used', A); // touches it
  now = 1500;
  assert.equal(r.sweep(), 1);
  assert.equal(idle.closed, 1);
  assert.ok(!r.has('idle') && r.has('busy') && r.has('used'));
  await r.using(used, async () => {
    now = 5000;
    assert.equal(r.sweep(), 0, 'in use');
  });
  now = 5999;
  assert.equal(r.sweep(), 0);
  now = 6000;
  assert.equal(r.sweep(), 1);
  await r.closeAll();
  assert.equal(busy.closed, 1);
  assert.equal(r.size, 0);
});

test('tools appear as their routes are registered, with body, query and path parameters as arguments', async () => {
  const router = new Router();
  const tools = new RouteTools(() => router);
  assert.deepEqual([...tools.all().keys()], []);
  const Body = z.strictObject({ text: z.string(), top_k: z.number().int().min(1).optional() });
  router.add(
    defineRoute({
      method: 'POST',
      path: '/v1/vectors/collections/:id/search',
      auth: 'key',
      summary: 's',
      body: Body,
      responses: { 200: { description: 'ok', schema: z.object({ results: z.array(z.object({ id: z.string() })) }) } },
      handler: async (ctx) => ({
        json: { results: [{ id: `${ctx.params.id}:${ctx.body.text}:${ctx.principal.keyId}` }] },
      }),
    }),
  );
  router.add(
    defineRoute({
      method: 'GET',
      path: '/v1/video/tasks/:id',
      auth: 'key',
      summary: 's',
      query: z.strictObject({ include: z.string().optional() }),
      responses: { 200: { description: 'ok' } },
      handler: async (ctx) => ({ json: { id: ctx.params.id, query: ctx.query } }),
    }),
  );
  const all = tools.all();
  assert.deepEqual([...all.keys()].sort(), ['find_moments', 'get_video_task', 'search_collection']);
  const search = all.get('search_collection')!;
  assert.deepEqual(search.tool.inputSchema.required, ['id', 'text']);
  assert.deepEqual(Object.keys(search.tool.inputSchema.properties!), ['id', 'text', 'top_k']);
  assert.equal(
    (search.tool.outputSchema as any).properties.results.items.additionalProperties,
    undefined,
    'results may grow fields',
  );

  const base = { principal: A, signal: new AbortController().signal, log, maxJsonBytes: 1 << 20 };
  const ok = await callRoute({
    ...base,
    def: search.def,
    pathParams: search.pathParams,
    args: { id: 'col_1', text: 'hi' },
  });
  assert.deepEqual(ok.json, { results: [{ id: 'col_1:hi:key_a' }] });
  await assert.rejects(
    callRoute({ ...base, def: search.def, pathParams: search.pathParams, args: { id: 'col_1', text: 'hi', top_k: 0 } }),
    (e: ApiError) => e.status === 400 && e.param === 'top_k' && /^Invalid body field top_k/.test(e.message),
  );
  await assert.rejects(
    callRoute({ ...base, def: search.def, pathParams: search.pathParams, args: { text: 'hi' } }),
    (e: ApiError) => e.status === 400 && e.param === 'id',
  );
  await assert.rejects(
    callRoute({
      ...base,
      maxJsonBytes: 10,
      def: search.def,
      pathParams: search.pathParams,
      args: { id: 'c', text: 'a long text' },
    }),
    (e: ApiError) => e.status === 413,
  );

  const get = all.get('get_video_task')!;
  const q = await callRoute({
    ...base,
    def: get.def,
    pathParams: get.pathParams,
    args: { id: 'vt_1', include: 'request' },
  });
  assert.deepEqual(q.json, { id: 'vt_1', query: { include: 'request' } });
  await assert.rejects(
    callRoute({ ...base, def: get.def, pathParams: get.pathParams, args: { id: 'vt_1', colour: 1 } }),
    (e: ApiError) => e.status === 400 && /^Invalid query field colour/.test(e.message),
  );
});
