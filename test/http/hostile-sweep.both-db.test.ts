// The hostile-input sweep with a fixed seed, on whichever database the suite runs (PGlite, then PostgreSQL):
// seeded mutated bodies, path ids, query strings and headers to every route of /openapi.json, with the key
// and the admin token. Zero 5xx, zero hangs, zero dropped connections, every answer as documented, nothing
// stored by a refused request, the server healthy after (test/helpers/fuzz/sweep.ts). `npm run fuzz` runs
// the same sweep for longer and with other seeds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { formatCounts, sweep } from '../helpers/fuzz/sweep.js';

let t: TestApp;
// No video worker: a task the sweep creates stays pending instead of decoding.
before(async () => {
  t = await startTestApp({ SIGHTFLOW_NO_WORKER: 'true' });
});
after(async () => {
  await t?.close();
});

test('hostile-input sweep, seed 29: every route answers 4xx or success, never 5xx, hang or dropped connection', async () => {
  const r = await sweep(t, { seed: 29, requests: 360, timeoutMs: 10_000 });
  const counts = formatCounts(r);
  assert.deepEqual(r.failures, [], `${r.failures.join('\n\n')}\n\n${counts}`);
  assert.equal(r.total, 360);
  // Every route was reached, and the sweep got past validation often enough to mean something.
  for (const [route, c] of Object.entries(r.byRoute))
    assert.ok(Object.values(c).reduce((a, b) => a + b, 0) > 0, `${route} never swept`);
  assert.ok(r.byClass['2xx'] > r.total / 10, counts);
  assert.ok(r.byClass['4xx'] > r.total / 3, counts);
});

test('found by the sweep: an empty or 3-byte raw image body is a 400 unsupported_image_format, not a 500', async () => {
  for (const route of ['detect', 'ocr', 'describe']) {
    for (const bytes of [new Uint8Array(0), new Uint8Array([1, 2, 3])]) {
      const r = await fetch(`${t.url}/v1/vision/${route}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'image/png' },
        body: bytes,
      });
      const body = (await r.json()) as { error: { code: string; param: string } };
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.equal(body.error.code, 'unsupported_image_format');
      assert.equal(body.error.param, 'image_base64');
    }
  }
});

test('found by the sweep: a model source URL whose file name is not valid percent-encoding is a 4xx, not a 500', async () => {
  const r = await fetch(`${t.url}/admin/v1/models`, {
    method: 'POST',
    headers: { authorization: `Bearer ${t.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ source: 'http://127.0.0.1:9/x.jpg%zz', preload: true, sessions: 30, warmup: 'on' }),
  });
  const body = (await r.json()) as { error: { code: string; message: string } };
  assert.ok(r.status >= 400 && r.status < 500, `${r.status} ${JSON.stringify(body)}`);
  assert.ok(body.error.message, JSON.stringify(body));
});
