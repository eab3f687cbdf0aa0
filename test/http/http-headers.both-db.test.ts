// Request headers are read from uWS lazily (only while its request callback runs) and copied when the request
// outlives that callback. Every way a handler can answer must still see all of them: at once, after awaits,
// after reading a body, and when it writes the response itself later (the SSE way).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { HttpServer } from '../../src/http/server.js';
import { createLogger } from '../../src/base/log.js';
import { RateLimiter } from '../../src/auth/rate-limit.js';
import type { Authenticator } from '../../src/auth/authenticator.js';
import type { RequestContext } from '../../src/http/route.js';

const lines: Array<Record<string, unknown>> = [];
const server = new HttpServer({
  log: createLogger('warn'),
  requestLog: (r) => {
    lines.push({ ...r });
  },
  // No route here asks for a key.
  authenticator: {} as Authenticator,
  rateLimiter: new RateLimiter(0, 0),
  maxJsonBytes: 1024,
  bodyTimeoutMs: 5000,
});
const pick = (ctx: RequestContext) => ({
  a: ctx.headers['x-a'],
  ua: ctx.headers['user-agent'],
  empty: ctx.headers['x-empty'],
});
const tick = () => new Promise((r) => setTimeout(r, 5));
const json = { description: 'ok' };
server.route({
  method: 'GET',
  path: '/t/sync',
  auth: 'none',
  summary: 's',
  responses: { 200: json },
  handler: (ctx) => ({ json: pick(ctx) }),
});
server.route({
  method: 'GET',
  path: '/t/async',
  auth: 'none',
  summary: 's',
  responses: { 200: json },
  handler: async (ctx) => {
    await tick();
    await tick();
    return { json: pick(ctx) };
  },
});
server.route({
  method: 'POST',
  path: '/t/body',
  auth: 'none',
  summary: 's',
  body: z.object({ n: z.number() }),
  responses: { 200: json },
  handler: (ctx) => ({ json: { ...pick(ctx), n: (ctx.body as { n: number }).n, type: ctx.headers['content-type'] } }),
});
server.route({
  method: 'GET',
  path: '/t/later',
  auth: 'none',
  summary: 's',
  responses: { 200: json },
  handler: (ctx) => {
    const res = ctx.res;
    setTimeout(() => res.cork(() => res.end(JSON.stringify(pick(ctx)))), 20);
    return { handled: true };
  },
});
const port = await server.listen('127.0.0.1', 0);
after(() => server.stop(1000));

const headers = { 'x-a': 'alpha', 'user-agent': 'ua/1', 'x-empty': '' };

test('handlers see every header whether they answer at once, after awaits, after a body, or later themselves', async () => {
  for (const path of ['/t/sync', '/t/async', '/t/later']) {
    const r = await fetch(`http://127.0.0.1:${port}${path}`, { headers });
    assert.equal(r.status, 200, path);
    assert.deepEqual(await r.json(), { a: 'alpha', ua: 'ua/1', empty: '' }, path);
  }
  const r = await fetch(`http://127.0.0.1:${port}/t/body`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: '{"n":7}',
  });
  assert.equal(r.status, 200);
  assert.deepEqual(await r.json(), { a: 'alpha', ua: 'ua/1', empty: '', n: 7, type: 'application/json' });
});

test('request ids: a valid incoming one is kept, others are replaced by a fresh one; the log line carries it', async () => {
  const kept = await fetch(`http://127.0.0.1:${port}/t/sync`, { headers: { 'x-request-id': 'client.id:1-2_3' } });
  assert.equal(kept.headers.get('x-request-id'), 'client.id:1-2_3');
  const ids = new Set<string>();
  for (const bad of ['', 'has space', 'x'.repeat(129), 'quote"']) {
    const r = await fetch(`http://127.0.0.1:${port}/t/sync`, { headers: bad ? { 'x-request-id': bad } : {} });
    const id = r.headers.get('x-request-id')!;
    assert.match(id, /^req_[0-9a-f]{32}$/);
    ids.add(id);
  }
  assert.equal(ids.size, 4);
  const line = lines.find((l) => l.requestId === 'client.id:1-2_3')!;
  assert.equal(line.route, '/t/sync');
  assert.equal(line.status, 200);
  assert.ok((line.endedMs as number) >= (line.startedMs as number));
});
