import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { ApiError } from '../../src/base/errors.js';
import { BlobStore, isValidBlobKey } from '../../src/store/blobs.js';

let dataDir: string;
let store: BlobStore;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sightflow-blobs-'));
  store = BlobStore.forDataDir(dataDir);
});
after(() => rm(dataDir, { recursive: true, force: true }));

test('keys: safe characters only, no traversal, no absolute paths, no reserved names', () => {
  for (const ok of ['a', 'col_1/item_2.jpg', 'a-b/c.d/e_f', 'x'.repeat(512)]) assert.ok(isValidBlobKey(ok), ok);
  for (const bad of [
    '',
    '../x',
    'a/../b',
    '/abs',
    'a//b',
    'a/',
    './a',
    '.hidden',
    'a/.tmp',
    'a b',
    'a\\b',
    'é',
    'x.meta.json',
    'x'.repeat(513),
    'a\nb',
  ])
    assert.ok(!isValidBlobKey(bad), JSON.stringify(bad));
  assert.throws(() => store.pathOf('../etc/passwd'), TypeError);
});

test('put a buffer, stat, read whole and ranges, overwrite', async () => {
  const bytes = Buffer.from('0123456789abcdef');
  const info = await store.put('col_1/a.bin', bytes, 'application/x-test');
  assert.deepEqual(
    [info.key, info.size, info.contentType, info.path],
    ['col_1/a.bin', 16, 'application/x-test', join(dataDir, 'blobs', 'col_1/a.bin')],
  );
  assert.deepEqual(await store.read('col_1/a.bin'), bytes);
  assert.deepEqual(await store.read('col_1/a.bin', { start: 3, end: 6 }), Buffer.from('3456'));
  assert.deepEqual(await store.read('col_1/a.bin', { start: 14, end: 40 }), Buffer.from('ef'));
  const streamed: Buffer[] = [];
  for await (const c of store.createReadStream('col_1/a.bin', { start: 10, end: 15 })) streamed.push(c as Buffer);
  assert.equal(Buffer.concat(streamed).toString(), 'abcdef');

  await store.put('col_1/a.bin', Buffer.from('new'), 'text/plain');
  const again = await store.stat('col_1/a.bin');
  assert.deepEqual([again?.size, again?.contentType], [3, 'text/plain']);
  // No temp files are left behind.
  assert.deepEqual((await readdir(join(dataDir, 'blobs', 'col_1'))).sort(), ['a.bin', 'a.bin.meta.json']);
});

test('put a stream, and a stream over maxBytes fails with 413 leaving nothing', async () => {
  async function* chunks(n: number) {
    for (let i = 0; i < n; i++) yield Buffer.alloc(1000, i);
  }
  const info = await store.put('s/ok.bin', chunks(5), 'application/octet-stream', { maxBytes: 5000 });
  assert.equal(info.size, 5000);
  await assert.rejects(
    store.put('s/big.bin', Readable.from(chunks(6)), 'application/octet-stream', { maxBytes: 5000 }),
    (e) => {
      assert.ok(e instanceof ApiError);
      assert.equal(e.status, 413);
      assert.deepEqual(e.toBody(), {
        error: {
          type: 'invalid_request_error',
          code: 'payload_too_large',
          message: 'The file is larger than the limit of 5000 bytes',
          param: null,
        },
      });
      return true;
    },
  );
  assert.equal(await store.stat('s/big.bin'), null);
  assert.deepEqual(await readdir(join(dataDir, 'blobs', 's')), ['ok.bin', 'ok.bin.meta.json']);
});

test('missing blobs: stat null, read 404, delete false', async () => {
  assert.equal(await store.stat('nope/x'), null);
  await assert.rejects(
    store.read('nope/x'),
    (e) => e instanceof ApiError && e.status === 404 && e.toBody().error.code === 'not_found',
  );
  assert.equal(await store.delete('nope/x'), false);
});

test('delete removes the blob, its sidecar and empty directories', async () => {
  await store.put('d/e/f.txt', Buffer.from('x'), 'text/plain');
  assert.equal(await store.delete('d/e/f.txt'), true);
  assert.equal(await store.stat('d/e/f.txt'), null);
  await assert.rejects(stat(join(dataDir, 'blobs', 'd')), { code: 'ENOENT' });
});

test('deletePrefix removes only matching keys and counts blobs, not sidecars', async () => {
  for (const k of ['p/col_1/a', 'p/col_1/b/c', 'p/col_10/a', 'p/col_2/a', 'p/col_1.txt'])
    await store.put(k, Buffer.from(k), 'text/plain');
  assert.equal(await store.deletePrefix('p/col_1/'), 2);
  assert.deepEqual([await store.stat('p/col_1/a'), await store.stat('p/col_1/b/c')], [null, null]);
  assert.ok(await store.stat('p/col_10/a'));
  assert.equal(await store.deletePrefix('p/col_1'), 2, 'a bare prefix matches col_10/ and col_1.txt');
  assert.ok(await store.stat('p/col_2/a'));
  assert.equal(await store.deletePrefix('nothing/here/'), 0);
  for (const bad of ['', '../', '/p', 'p/../']) await assert.rejects(store.deletePrefix(bad), TypeError, bad);
});

test('concurrent writers of one key leave one whole version', async () => {
  const versions = Array.from({ length: 8 }, (_, i) => Buffer.alloc(64 * 1024, i));
  await Promise.all(versions.map((v, i) => store.put('race/k', v, `application/v${i}`)));
  const got = await store.read('race/k');
  assert.equal(got.length, 64 * 1024);
  assert.ok(
    got.every((b) => b === got[0]),
    'one writer won entirely',
  );
  assert.deepEqual(await readdir(join(dataDir, 'blobs', 'race')).then((l) => l.sort()), ['k', 'k.meta.json']);
});
