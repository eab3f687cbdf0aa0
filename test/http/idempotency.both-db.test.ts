// Idempotency-Key on the creating POSTs: concurrent and repeated requests with one key create one thing and
// all get its response; another request with the key is a 409; a malformed key is a 400; a key is free
// again once its record is older than 24 hours; an error response does not bind the key. Runs on PGlite and
// PostgreSQL (where the claim row is what serialises nodes too).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, type TestApp } from '../helpers/app.js';
import { startVideoApp, body, warmKey } from '../helpers/video-tasks.js';
import { sql } from '../helpers/idempotency.sql.js';
import { IDEMPOTENCY_TTL_MS } from '../../src/http/idempotency.js';

let t: TestApp;
before(async () => {
  t = await startVideoApp();
});
after(async () => {
  await t?.close();
});

const process = (key: string | undefined, json: unknown) =>
  api(t, '/v1/video/process', { method: 'POST', json, headers: key === undefined ? {} : { 'idempotency-key': key } });

async function taskCount(): Promise<number> {
  const r = await api(t, '/v1/video/tasks?limit=100');
  assert.equal(r.status, 200, r.text);
  return r.body.data.length;
}

test('20 concurrent identical requests with one key create one task; another body is 409; after 24 h the key is free', async () => {
  const before = await taskCount();
  const key = `k-${Date.now()}`;
  const rs = await Promise.all(Array.from({ length: 20 }, () => process(key, body())));
  for (const r of rs) assert.equal(r.status, 202, r.text);
  const ids = new Set(rs.map((r) => r.body.id));
  assert.equal(ids.size, 1, 'one task id in all 20 responses');
  assert.equal(await taskCount(), before + 1, 'one task created');
  assert.equal(
    rs.filter((r) => r.headers.get('idempotent-replayed') === 'true').length,
    19,
    'all but the first are replays',
  );
  const first = rs.find((r) => r.headers.get('idempotent-replayed') === null)!;
  for (const r of rs) assert.equal(r.text, first.text, 'the same body, byte for byte');

  const again = await process(key, body());
  assert.equal(again.status, 202);
  assert.equal(again.body.id, first.body.id);

  const other = await process(key, body('http://127.0.0.1:9/other.mp4'));
  assert.equal(other.status, 409, other.text);
  assert.equal(other.body.error.code, 'idempotency_conflict');
  assert.equal(other.body.error.type, 'conflict_error');

  await t.app.services.db.query(sql.age, [t.projectId, IDEMPOTENCY_TTL_MS + 60_000]);
  const later = await process(key, body('http://127.0.0.1:9/other.mp4'));
  assert.equal(later.status, 202, later.text);
  assert.notEqual(later.body.id, first.body.id, 'a new task once the key expired');
  assert.equal(later.headers.get('idempotent-replayed'), null);
  assert.equal(await taskCount(), before + 2);
});

test('without a key every request creates; malformed keys are 400', async () => {
  const a = await process(undefined, body());
  const b = await process(undefined, body());
  assert.notEqual(a.body.id, b.body.id);
  for (const bad of ['x'.repeat(256), 'tab\there']) {
    const r = await process(bad, body());
    assert.equal(r.status, 400, `${JSON.stringify(bad.slice(0, 20))}: ${r.text}`);
    assert.equal(r.body.error.param, 'Idempotency-Key');
  }
  assert.equal((await process('x'.repeat(255), body())).status, 202);
});

test('an error response leaves the key unbound; a created collection is replayed, not a 409', async () => {
  const key = `c-${Date.now()}`;
  const create = (name: string) =>
    api(t, '/v1/vectors/collections', { method: 'POST', json: { name }, headers: { 'idempotency-key': key } });
  await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'taken' } });
  const taken = await create('taken');
  assert.equal(taken.status, 409);
  assert.equal(taken.body.error.code, 'collection_exists', "the first request's own error");
  const c1 = await create('fresh');
  assert.equal(c1.status, 201, c1.text);
  const c2 = await create('fresh');
  assert.equal(c2.status, 201, c2.text);
  assert.equal(c2.body.id, c1.body.id);
  assert.equal(c2.headers.get('idempotent-replayed'), 'true');
});

test('keys are per project', async () => {
  const key = `p-${Date.now()}`;
  const mine = await process(key, body());
  assert.equal(mine.status, 202);
  const { projects } = t.app.services;
  const other = await projects.create(`other-${Date.now()}`);
  const { key: otherKey } = await projects.createKey(other.id, 'test');
  await warmKey(t, otherKey);
  const theirs = await api(t, '/v1/video/process', {
    method: 'POST',
    json: body('http://127.0.0.1:9/theirs.mp4'),
    key: otherKey,
    headers: { 'idempotency-key': key },
  });
  assert.equal(theirs.status, 202, theirs.text);
  assert.notEqual(theirs.body.id, mine.body.id);
});

test('the OpenAPI document lists the Idempotency-Key header on the creating POSTs', async () => {
  const doc = (await api(t, '/openapi.json', { key: null })).body;
  for (const path of ['/v1/video/process', '/v1/vectors/collections', '/v1/vectors/collections/{id}/index']) {
    const p = doc.paths[path].post.parameters.find((x: any) => x.in === 'header' && x.name === 'Idempotency-Key');
    assert.ok(p, path);
    assert.equal(p.required, false);
    assert.equal(p.schema.maxLength, 255);
  }
  assert.equal(
    doc.paths['/v1/video/tasks/{id}/cancel'].post.parameters.some((x: any) => x.in === 'header'),
    false,
  );
});
