import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError, type ErrorBody } from '../../src/base/errors.js';
import { BlobStore } from '../../src/store/blobs.js';
import { resolveFileRequest, parseRange, type FileResponse } from '../../src/files/file-serving.js';
import { loadOrCreateSigningSecret, presign, verify } from '../../src/store/presign.js';

const SECRET = 'test-secret-0123456789';
const NOW = Date.UTC(2026, 0, 1, 12, 0, 0); // 1767268800 s
const NOW_S = NOW / 1000;
let dataDir: string;
let store: BlobStore;
const content = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sightflow-presign-'));
  store = BlobStore.forDataDir(dataDir);
  await store.put('col_1/item_1.jpg', content, 'image/jpeg');
});
after(() => rm(dataDir, { recursive: true, force: true }));

/** Splits a presigned link the way the HTTP layer will: key from the path, the query as URLSearchParams. */
function split(link: string): { key: string; query: URLSearchParams } {
  const url = new URL(link, 'http://sightflow.test');
  assert.ok(url.pathname.startsWith('/v1/files/'));
  return { key: decodeURIComponent(url.pathname.slice('/v1/files/'.length)), query: url.searchParams };
}

async function resolve(
  link: string,
  opts: { rangeHeader?: string; now?: number; key?: string } = {},
): Promise<FileResponse> {
  const { key, query } = split(link);
  return resolveFileRequest(store, {
    key: opts.key ?? key,
    query,
    rangeHeader: opts.rangeHeader,
    secret: SECRET,
    now: opts.now ?? NOW,
  });
}

async function forbidden(p: Promise<unknown>, message: string) {
  await assert.rejects(p, (e) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 403);
    assert.deepEqual(e.toBody(), {
      error: { type: 'permission_error', code: 'invalid_signature', message, param: null },
    } satisfies ErrorBody);
    return true;
  });
}

test('presign makes a one-hour link that verifies', () => {
  const link = presign('col_1/item_1.jpg', { secret: SECRET, now: NOW });
  assert.match(link, new RegExp(`^/v1/files/col_1/item_1\\.jpg\\?expires=${NOW_S + 3600}&sig=[0-9a-f]{64}$`));
  const { key, query } = split(link);
  assert.deepEqual(verify(key, query.get('expires'), query.get('sig'), SECRET, NOW), {
    ok: true,
    expires: NOW_S + 3600,
  });
  assert.deepEqual(verify(key, query.get('expires'), query.get('sig'), 'other-secret', NOW), {
    ok: false,
    reason: 'mismatch',
  });
  assert.equal(
    split(presign('k', { secret: SECRET, now: NOW, expiresInS: 60 })).query.get('expires'),
    String(NOW_S + 60),
  );
});

test('a valid link serves the whole file with its headers', async () => {
  const res = await resolve(presign('col_1/item_1.jpg', { secret: SECRET, now: NOW }));
  const info = await stat(join(dataDir, 'blobs', 'col_1/item_1.jpg'));
  assert.deepEqual(res, {
    status: 200,
    start: 0,
    end: 999,
    size: 1000,
    path: join(dataDir, 'blobs', 'col_1/item_1.jpg'),
    headers: {
      'Accept-Ranges': 'bytes',
      'Cache-Control': 'private, max-age=3600',
      'Last-Modified': info.mtime.toUTCString(),
      'X-Content-Type-Options': 'nosniff',
      'Content-Type': 'image/jpeg',
      'Content-Length': '1000',
    },
  });
});

test('tampered links are 403', async () => {
  const link = presign('col_1/item_1.jpg', { secret: SECRET, now: NOW });
  const { query } = split(link);
  const sig = query.get('sig')!;
  const flipped = (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1);
  const mismatch = 'The file link signature does not match';
  await forbidden(resolve(link.replace(sig, flipped)), mismatch);
  await forbidden(resolve(link, { key: 'col_1/item_2.jpg' }), mismatch); // same signature, another key
  await forbidden(resolve(link.replace(`expires=${NOW_S + 3600}`, `expires=${NOW_S + 999999}`)), mismatch); // extended expiry
  await forbidden(resolve(link.replace(sig, 'zz')), mismatch);
  await forbidden(resolve(link.replace(/&sig=.*$/, '')), 'The file link is missing its expires or sig parameter');
  await forbidden(resolve('/v1/files/col_1/item_1.jpg'), 'The file link is missing its expires or sig parameter');
  // A link signed with another server's secret.
  await forbidden(resolve(presign('col_1/item_1.jpg', { secret: 'another', now: NOW })), mismatch);
});

test('expired links are 403; the expiry second itself is still valid', async () => {
  const link = presign('col_1/item_1.jpg', { secret: SECRET, now: NOW, expiresInS: 60 });
  assert.equal((await resolve(link, { now: NOW + 60_999 })).status, 200);
  await forbidden(
    resolve(link, { now: NOW + 61_000 }),
    `The file link expired at ${new Date(NOW + 60_000).toISOString()}`,
  );
});

test('a valid link to a missing blob is 404', async () => {
  await assert.rejects(resolve(presign('col_1/gone.jpg', { secret: SECRET, now: NOW })), (e) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 404);
    assert.deepEqual(e.toBody(), {
      error: { type: 'not_found_error', code: 'not_found', message: 'No such file', param: null },
    });
    return true;
  });
  // A signed key the store would refuse (it cannot hold such a blob) is 404 as well, never a 500.
  const traversal = new URLSearchParams(presign('../etc/passwd', { secret: SECRET, now: NOW }).split('?')[1]);
  await assert.rejects(
    resolveFileRequest(store, { key: '../etc/passwd', query: traversal, secret: SECRET, now: NOW }),
    (e) => e instanceof ApiError && e.status === 404,
  );
});

test('Range: 206 with Content-Range, suffix and open ranges, 416 when unsatisfiable', async () => {
  const link = presign('col_1/item_1.jpg', { secret: SECRET, now: NOW });
  const r = await resolve(link, { rangeHeader: 'bytes=100-199' });
  assert.deepEqual(
    [r.status, r.start, r.end, r.headers['Content-Range'], r.headers['Content-Length'], r.headers['Content-Type']],
    [206, 100, 199, 'bytes 100-199/1000', '100', 'image/jpeg'],
  );
  assert.deepEqual(await store.read('col_1/item_1.jpg', r), content.subarray(100, 200));

  const cases: Array<[string, number, number, number]> = [
    ['bytes=900-', 206, 900, 999],
    ['bytes=-10', 206, 990, 999],
    ['bytes=-5000', 206, 0, 999],
    ['bytes=990-5000', 206, 990, 999],
    ['bytes=0-0', 206, 0, 0],
    ['bytes=0-10,20-30', 200, 0, 999], // multi-range: ignored, whole file
    ['items=0-10', 200, 0, 999],
    ['bytes=20-10', 200, 0, 999],
  ];
  for (const [header, status, start, end] of cases) {
    const res = await resolve(link, { rangeHeader: header });
    assert.deepEqual([res.status, res.start, res.end], [status, start, end], header);
  }
  for (const header of ['bytes=1000-', 'bytes=5000-6000', 'bytes=-0']) {
    const res = await resolve(link, { rangeHeader: header });
    assert.deepEqual(
      [res.status, res.headers['Content-Range'], res.headers['Content-Length'], res.end - res.start + 1],
      [416, 'bytes */1000', '0', 0],
      header,
    );
  }
  assert.equal(parseRange('bytes=0-', 0), 'unsatisfiable');
});

// Over HTTP against the real server: test/files/files.both-db.test.ts.

test('the signing secret is created once, persisted with mode 0600, and agreed on by racing callers', async () => {
  const dir = join(dataDir, 'secret-test');
  const secrets = await Promise.all(Array.from({ length: 6 }, () => loadOrCreateSigningSecret(dir)));
  assert.equal(new Set(secrets).size, 1);
  assert.match(secrets[0], /^[0-9a-f]{64}$/);
  assert.equal(await loadOrCreateSigningSecret(dir), secrets[0]);
  assert.equal((await stat(join(dir, 'signing-secret'))).mode & 0o777, 0o600);
});
