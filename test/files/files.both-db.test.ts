// Presigned links through the real server: valid, tampered, expired; Range -> 206 with the right bytes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { startTestApp, api, fetchChecked, type TestApp } from '../helpers/app.js';
import { presign } from '../../src/store/presign.js';

let t: TestApp;
const bytes = randomBytes(3 * 1024 * 1024 + 17);
before(async () => {
  t = await startTestApp();
  await t.app.services.blobs.put('videos/test/clip.mp4', bytes, 'video/mp4');
});
after(async () => {
  await t?.close();
});

const get = (path: string, headers: Record<string, string> = {}) => fetchChecked(t, path, { headers });

test('a valid link serves the whole file with its content type, without an API key', async () => {
  const link = t.app.services.presign('videos/test/clip.mp4');
  assert.match(link, /^\/v1\/files\/videos\/test\/clip\.mp4\?expires=\d+&sig=[0-9a-f]{64}$/);
  const r = await get(link);
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('content-type'), 'video/mp4');
  assert.equal(r.headers.get('accept-ranges'), 'bytes');
  assert.ok(Buffer.from(await r.arrayBuffer()).equals(bytes));
});

test('Range requests return 206 with exactly the requested bytes', async () => {
  const link = t.app.services.presign('videos/test/clip.mp4');
  const r = await get(link, { range: 'bytes=1000-2999' });
  assert.equal(r.status, 206);
  assert.equal(r.headers.get('content-range'), `bytes 1000-2999/${bytes.length}`);
  assert.ok(Buffer.from(await r.arrayBuffer()).equals(bytes.subarray(1000, 3000)));
  const tail = await get(link, { range: 'bytes=-100' });
  assert.equal(tail.status, 206);
  assert.ok(Buffer.from(await tail.arrayBuffer()).equals(bytes.subarray(bytes.length - 100)));
  const bad = await get(link, { range: `bytes=${bytes.length + 10}-` });
  assert.equal(bad.status, 416);
  assert.equal(bad.headers.get('content-range'), `bytes */${bytes.length}`);
  assert.equal(((await bad.json()) as { error: { code: string } }).error.code, 'range_not_satisfiable');
});

test('tampered, expired and unsigned links are 403', async () => {
  const link = t.app.services.presign('videos/test/clip.mp4');
  const tampered = link.replace(/sig=([0-9a-f])/, (_m, c: string) => `sig=${c === '0' ? '1' : '0'}`);
  const forbidden = (message: string) => ({
    error: { type: 'permission_error', code: 'invalid_signature', message, param: null },
  });
  const r1 = await get(tampered);
  assert.equal(r1.status, 403);
  assert.deepEqual(await r1.json(), forbidden('The file link signature does not match'));
  const otherKey = link.replace('clip.mp4', 'other.mp4');
  assert.equal((await get(otherKey)).status, 403);
  const expired = presign('videos/test/clip.mp4', {
    secret: t.app.services.signingSecret,
    expiresInS: 60,
    now: Date.now() - 3_600_000,
  });
  const r2 = await get(expired);
  assert.equal(r2.status, 403);
  assert.match(((await r2.json()) as { error: { message: string } }).error.message, /^The file link expired at /);
  const r3 = await get('/v1/files/videos/test/clip.mp4');
  assert.equal(r3.status, 403);
  // A valid signature for a blob that does not exist is a plain 404.
  const missing = await get(t.app.services.presign('videos/none.mp4'));
  assert.equal(missing.status, 404);
  // The API still answers after all of that.
  assert.equal((await api(t, '/v1/project')).status, 200);
});
