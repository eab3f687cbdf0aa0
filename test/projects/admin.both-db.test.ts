// Admin API: projects, keys (the key only in the creation response), disable, daily usage totals.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, admin, api, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

test('projects: create and list', async () => {
  const c = await admin(t, '/admin/v1/projects', { method: 'POST', json: { name: 'acme' } });
  assert.equal(c.status, 201);
  assert.deepEqual(Object.keys(c.body).sort(), ['created_at', 'id', 'name']);
  assert.match(c.body.id, /^proj_[0-9a-z]{20}$/);
  const l = await admin(t, '/admin/v1/projects');
  assert.equal(l.body.object, 'list');
  assert.deepEqual(
    l.body.data.map((p: { name: string }) => p.name),
    ['default', 'acme'],
  );
});

test('keys: full key once, hints after; disable', async () => {
  const p = (await admin(t, '/admin/v1/projects', { method: 'POST', json: { name: 'keys-project' } })).body;
  const k = await admin(t, `/admin/v1/projects/${p.id}/keys`, { method: 'POST', json: { name: 'ci' } });
  assert.equal(k.status, 201);
  assert.match(k.body.key, /^sk_sf_[A-Za-z0-9_-]{43}$/);
  assert.equal(k.body.hint, `sk_sf_...${k.body.key.slice(-4)}`);
  assert.equal(k.body.status, 'active');
  const list = await admin(t, `/admin/v1/projects/${p.id}/keys`);
  assert.equal(list.body.data.length, 1);
  assert.equal(list.body.data[0].key, undefined, 'the full key never appears again');
  assert.ok(!JSON.stringify(list.body).includes(k.body.key));
  assert.equal((await api(t, '/v1/project', { key: k.body.key })).body.id, p.id);
  const d = await admin(t, `/admin/v1/projects/${p.id}/keys/${k.body.id}/disable`, { method: 'POST' });
  assert.equal(d.body.status, 'disabled');
  assert.ok(d.body.disabled_at);
  // A key of another project cannot be disabled through this one.
  const other = await admin(t, `/admin/v1/projects/${t.projectId}/keys/${k.body.id}/disable`, { method: 'POST' });
  assert.equal(other.status, 404);
});

test('usage: daily totals from the ledger', async () => {
  const ledger = t.app.services.usage;
  await ledger.record({
    projectId: t.projectId,
    endpoint: '/v1/vision/detect',
    model: 'm',
    inputTokens: 85,
    outputTokens: 10,
    ms: 12,
  });
  await ledger.record({
    projectId: t.projectId,
    endpoint: '/v1/vision/ocr',
    model: 'm',
    inputTokens: 255,
    outputTokens: 3,
    ms: 30,
  });
  await ledger.record({ projectId: t.projectId, endpoint: '/v1/video/process', model: 'm', frames: 40, ms: 900 });
  const r = await admin(t, `/admin/v1/projects/${t.projectId}/usage`);
  assert.equal(r.status, 200);
  const today = new Date().toISOString().slice(0, 10);
  assert.deepEqual(r.body.data, [
    { day: today, requests: 3, input_tokens: 340, output_tokens: 13, frames: 40, ms: 942 },
  ]);
  const past = await admin(t, `/admin/v1/projects/${t.projectId}/usage?from=2020-01-01&to=2020-02-01`);
  assert.deepEqual(past.body.data, []);
});
