// Auth matrix: every failure mode answers the documented status and whole body.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, api, admin, type TestApp } from '../helpers/app.js';
import { generateKey } from '../../src/auth/api-key.js';
import { Authenticator } from '../../src/auth/authenticator.js';

let t: TestApp;
before(async () => {
  t = await startTestApp({ SIGHTFLOW_KEY_CACHE_MS: '1000' });
});
after(async () => {
  await t?.close();
});

const authErr = (code: string, message: string) => ({
  error: { type: 'authentication_error', code, message, param: null },
});

test('a valid key is authorised', async () => {
  const r = await api(t, '/v1/project');
  assert.equal(r.status, 200);
  assert.deepEqual(Object.keys(r.body).sort(), ['created_at', 'id', 'name', 'object']);
  assert.equal(r.body.id, t.projectId);
  assert.match(r.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{32}$/);
});

test('missing header -> 401 missing_api_key with WWW-Authenticate', async () => {
  const r = await api(t, '/v1/project', { key: null });
  assert.equal(r.status, 401);
  assert.equal(r.headers.get('www-authenticate'), 'Bearer');
  assert.deepEqual(
    r.body,
    authErr('missing_api_key', 'Missing Authorization header; expected "Authorization: Bearer sk_sf_..."'),
  );
});

test('wrong scheme -> 401 invalid_api_key', async () => {
  const r = await api(t, '/v1/project', { headers: { authorization: `Basic ${t.key}` } });
  assert.equal(r.status, 401);
  assert.deepEqual(r.body, authErr('invalid_api_key', 'Expected Authorization scheme "Bearer <API key>"'));
});

test('malformed key -> 401 invalid_api_key', async () => {
  for (const bad of ['sk_sf_short', 'sk_live_' + 'a'.repeat(43), t.key + 'x']) {
    const r = await api(t, '/v1/project', { key: bad });
    assert.equal(r.status, 401);
    assert.deepEqual(
      r.body,
      authErr('invalid_api_key', 'Malformed API key; keys look like sk_sf_ followed by 43 base64url characters'),
    );
  }
});

test('unknown key -> 401 invalid_api_key', async () => {
  const r = await api(t, '/v1/project', { key: generateKey() });
  assert.equal(r.status, 401);
  assert.deepEqual(r.body, authErr('invalid_api_key', 'Unknown API key'));
});

test('a disabled key stops working within 5 s', async () => {
  const created = await admin(t, `/admin/v1/projects/${t.projectId}/keys`, {
    method: 'POST',
    json: { name: 'to-disable' },
  });
  assert.equal(created.status, 201);
  const key = created.body.key as string;
  assert.equal((await api(t, '/v1/project', { key })).status, 200);
  const disabled = await admin(t, `/admin/v1/projects/${t.projectId}/keys/${created.body.id}/disable`, {
    method: 'POST',
  });
  assert.equal(disabled.status, 200);
  assert.equal(disabled.body.status, 'disabled');
  const t0 = Date.now();
  let r = await api(t, '/v1/project', { key });
  while (r.status === 200 && Date.now() - t0 < 5000) {
    await new Promise((res) => setTimeout(res, 100));
    r = await api(t, '/v1/project', { key });
  }
  assert.ok(Date.now() - t0 < 5000, 'disabled key still accepted after 5 s');
  assert.equal(r.status, 401);
  assert.deepEqual(r.body, authErr('disabled_api_key', 'This API key has been disabled'));
});

test("project A's key on project B's resource -> 404 as if it did not exist", async () => {
  const b = await admin(t, '/admin/v1/projects', { method: 'POST', json: { name: 'project-b' } });
  assert.equal(b.status, 201);
  const bKey = (await admin(t, `/admin/v1/projects/${b.body.id}/keys`, { method: 'POST', json: { name: 'b' } })).body
    .key as string;
  const cross = await api(t, `/v1/projects/${b.body.id}`);
  const unknown = await api(t, '/v1/projects/proj_doesnotexist');
  assert.equal(cross.status, 404);
  assert.deepEqual(cross.body, {
    error: { type: 'not_found_error', code: 'not_found', message: `No such project: ${b.body.id}`, param: null },
  });
  assert.deepEqual(unknown.body, {
    error: { type: 'not_found_error', code: 'not_found', message: 'No such project: proj_doesnotexist', param: null },
  });
  assert.equal((await api(t, `/v1/projects/${b.body.id}`, { key: bKey })).status, 200);
});

test('every /v1 path checks the key first, then 404 / 405', async () => {
  const noKey = await api(t, '/v1/does/not/exist', { key: null });
  assert.equal(noKey.status, 401);
  const r = await api(t, '/v1/does/not/exist');
  assert.equal(r.status, 404);
  assert.deepEqual(r.body, {
    error: {
      type: 'not_found_error',
      code: 'route_not_found',
      message: 'No route GET /v1/does/not/exist',
      param: null,
    },
  });
  const m = await api(t, '/v1/project', { method: 'DELETE' });
  assert.equal(m.status, 405);
  assert.equal(m.headers.get('allow'), 'GET');
  assert.deepEqual(m.body, {
    error: {
      type: 'invalid_request_error',
      code: 'method_not_allowed',
      message: 'Method DELETE is not allowed on /v1/project; allowed: GET',
      param: null,
    },
  });
});

test('admin API: wrong token -> 401; health probes need no auth', async () => {
  const r = await api(t, '/admin/v1/projects', { headers: { authorization: 'Bearer nope' } });
  assert.equal(r.status, 401);
  assert.deepEqual(r.body, {
    error: {
      type: 'authentication_error',
      code: 'invalid_admin_token',
      message: 'Missing or invalid admin token; expected "Authorization: Bearer $SIGHTFLOW_ADMIN_TOKEN"',
      param: null,
    },
  });
  assert.equal((await api(t, '/healthz', { key: null })).status, 200);
  const ready = await api(t, '/readyz', { key: null });
  assert.equal(ready.status, 200);
  assert.equal(ready.body.checks.database, true);
});

test('admin API is disabled entirely without SIGHTFLOW_ADMIN_TOKEN', async () => {
  const t2 = await startTestApp({ SIGHTFLOW_ADMIN_TOKEN: '' });
  try {
    const r = await api(t2, '/admin/v1/projects', { headers: { authorization: 'Bearer anything' } });
    assert.equal(r.status, 404);
    assert.equal(r.body.error.type, 'not_found_error');
  } finally {
    await t2.close();
  }
});

test('per-key rate limit answers 429 with Retry-After', async () => {
  const t3 = await startTestApp({ SIGHTFLOW_RATE_LIMIT_RPS: '0.5', SIGHTFLOW_RATE_LIMIT_BURST: '2' });
  try {
    assert.equal((await api(t3, '/v1/project')).status, 200);
    assert.equal((await api(t3, '/v1/project')).status, 200);
    const r = await api(t3, '/v1/project');
    assert.equal(r.status, 429);
    assert.equal(r.headers.get('retry-after'), '2');
    assert.deepEqual(r.body, {
      error: {
        type: 'rate_limit_error',
        code: 'rate_limit_exceeded',
        message: 'Rate limit exceeded; retry after 2 s',
        param: null,
      },
    });
  } finally {
    await t3.close();
  }
});

// The clock is the `now` each request passes in (the time it arrived), stepped here an eighth of the cache's
// time at a step; the lookups are the real key store's, each awaited before the next step.
test('a key in steady use is looked up ahead of its cache entry running out: no request waits, a disable still counts', async () => {
  const ttl = 1000;
  const step = ttl / 8;
  const projects = t.app.services.projects;
  const lookups: Promise<unknown>[] = [];
  const store = {
    keyByHash: (hash: Buffer) => {
      const p = projects.keyByHash(hash);
      lookups.push(p);
      return p;
    },
    touchKey: (id: string) => projects.touchKey(id),
  };
  const settled = async () => {
    await Promise.allSettled(lookups);
    await new Promise((r) => setImmediate(r));
  };
  const created = await admin(t, `/admin/v1/projects/${t.projectId}/keys`, {
    method: 'POST',
    json: { name: 'steady' },
  });
  assert.equal(created.status, 201);
  const header = `Bearer ${created.body.key}`;
  const a = new Authenticator(store, ttl);

  const t0 = performance.now();
  assert.equal(a.cached(header, t0), undefined, 'the first request looks the key up');
  const principal = await a.authenticate(header);
  assert.equal(lookups.length, 1);
  // Ten entries' time of requests every eighth of it: every one answered from the cache; the key looked up
  // again in each entry's last quarter, so once every six steps (three quarters of the entry's time).
  let now = t0;
  for (let i = 1; i <= 80; i++) {
    now = t0 + i * step;
    assert.deepEqual(a.cached(header, now), principal, `step ${i}: answered without waiting on a lookup`);
    await settled();
  }
  assert.ok(lookups.length >= 13 && lookups.length <= 15, `${lookups.length} lookups in ten entries' time`);

  // Disabled while in use: refused within the entry's time of the disable.
  const off = await admin(t, `/admin/v1/projects/${t.projectId}/keys/${created.body.id}/disable`, { method: 'POST' });
  assert.equal(off.status, 200);
  const disabledAt = now;
  let refusedAt: number | undefined;
  for (let i = 1; i <= 16 && refusedAt === undefined; i++) {
    now = disabledAt + i * step;
    try {
      a.cached(header, now);
    } catch (e) {
      assert.equal((e as { code?: string }).code, 'disabled_api_key');
      refusedAt = now;
    }
    await settled();
  }
  assert.ok(refusedAt !== undefined && refusedAt - disabledAt <= ttl, `refused ${refusedAt! - disabledAt} ms after`);

  // An unknown key's entry is not looked up ahead: it is refused until its entry runs out, then looked up again.
  // Its entry's time starts between u0 and u1 (the lookup's own clock), so the steps are inside it and u1 + ttl
  // is past it, however long the lookup took.
  const unknown = `Bearer ${generateKey()}`;
  const u0 = performance.now();
  await assert.rejects(a.authenticate(unknown));
  const u1 = performance.now();
  const before = lookups.length;
  for (let i = 1; i < 8; i++) assert.throws(() => a.cached(unknown, u0 + i * step));
  await settled();
  assert.equal(lookups.length, before);
  assert.equal(a.cached(unknown, u1 + ttl + 1), undefined);
});
