// The pool of decoded-pixel memory: sizes, reuse of the smallest buffer that fits, the idle bound, and that it
// takes back only what it lent, once; releaseAfter gives pixels back only when the work on them has settled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allSettled, PixelPool, releaseAfter } from '../../src/media/pixel-pool.js';

test('take gives exactly the bytes asked for and reuses the smallest idle buffer that holds them', () => {
  const pool = new PixelPool(1000, 4000);
  const a = pool.take(600)!,
    b = pool.take(300)!;
  assert.deepEqual([a.length, b.length], [600, 300]);
  assert.notEqual(a.buffer, b.buffer);
  pool.give(a);
  pool.give(b);
  assert.deepEqual(pool.idle, { buffers: 2, bytes: 900 });
  const c = pool.take(250)!;
  assert.equal(c.buffer, b.buffer, 'the 300-byte buffer, not the 600');
  assert.equal(c.length, 250);
  const d = pool.take(500)!;
  assert.equal(d.buffer, a.buffer);
  assert.deepEqual(pool.idle, { buffers: 0, bytes: 0 });
  const e = pool.take(700)!;
  assert.ok(e.buffer !== a.buffer && e.buffer !== b.buffer, 'none idle that fits: new memory');
});

test('sizes it does not keep: none over the largest buffer, and nothing for zero or nonsense', () => {
  const pool = new PixelPool(1000, 4000);
  assert.equal(pool.take(1001), undefined);
  for (const n of [0, -1, Number.NaN]) assert.equal(pool.take(n), undefined);
});

test('it takes back only memory it lent, and each buffer once', () => {
  const pool = new PixelPool(1000, 4000);
  pool.give(Buffer.alloc(100));
  pool.give(new Uint8Array(100));
  assert.deepEqual(pool.idle, { buffers: 0, bytes: 0 }, 'foreign memory is ignored');
  const a = pool.take(100)!;
  pool.give(a);
  pool.give(a);
  pool.give(a.subarray(10));
  assert.deepEqual(pool.idle, { buffers: 1, bytes: 100 }, 'a second give of the same memory is ignored');
  const b = pool.take(100)!;
  assert.equal(b.buffer, a.buffer);
  const c = pool.take(100)!;
  assert.notEqual(c.buffer, b.buffer, 'memory lent out is not lent twice');
});

test('idle memory stays under its bound; the smaller buffers leave first', () => {
  const pool = new PixelPool(1000, 1500);
  const [a, b, c] = [pool.take(400)!, pool.take(1000)!, pool.take(700)!];
  pool.give(a);
  pool.give(b);
  assert.deepEqual(pool.idle, { buffers: 2, bytes: 1400 });
  pool.give(c); // 2100 > 1500: the 400 goes, then 1700 > 1500 and the 700 is not kept over the 1000
  assert.deepEqual(pool.idle, { buffers: 1, bytes: 1000 });
  assert.equal(pool.take(900)!.buffer, b.buffer);
});

test('releaseAfter gives the pixels back when the work settles, resolved or rejected, not before', async () => {
  for (const outcome of ['resolve', 'reject'] as const) {
    let released = 0;
    let settle!: () => void;
    const work = new Promise<string>((res, rej) => {
      settle = () => (outcome === 'resolve' ? res('done') : rej(new Error('failed')));
    });
    const returned = releaseAfter(
      {
        release: () => {
          released++;
        },
      },
      work,
    );
    assert.equal(returned, work);
    await new Promise((r) => setImmediate(r));
    assert.equal(released, 0, `${outcome}: not while the work runs`);
    settle();
    await returned.catch(() => {});
    await new Promise((r) => setImmediate(r));
    assert.equal(released, 1, `${outcome}: once it settled`);
  }
  // An image that is not the pool's: nothing to give back.
  assert.equal(await releaseAfter({}, Promise.resolve(3)), 3);
});

test('allSettled waits for every branch, then gives the first failure in order or every value', async () => {
  assert.deepEqual(await allSettled([Promise.resolve(1), Promise.resolve('two')] as const), [1, 'two']);
  let slowDone = false;
  const slow = new Promise<number>((r) =>
    setTimeout(() => {
      slowDone = true;
      r(1);
    }, 30),
  );
  await assert.rejects(
    allSettled([slow, Promise.reject(new Error('first')), Promise.reject(new Error('second'))] as const),
    /first/,
  );
  assert.ok(slowDone, 'the failure came only after the slow branch ended');
});
