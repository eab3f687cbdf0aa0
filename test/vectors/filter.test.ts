// Search filters without a server: the grammar's checks, one item's match, the metadata columns agreeing with
// it over random metadata and filters (also after items change and go, cached answers included), the cache of
// filter answers (canonical keys, dropped by every change, least recently used evicted), the JSON merge patch of PATCH, and the
// addon's filtered and key-restricted searches returning only allowed keys, as many as asked when enough are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  filterCacheKey,
  matchesFilter,
  parseFilter,
  MAX_IN_VALUES,
  type FilterNode,
} from '../../src/vectors/filter.js';
import { keysOf, MetadataColumns } from '../../src/vectors/metadata-columns.js';
import { mergePatch } from '../../src/vectors/merge-patch.js';
import { exactSearchMaxMatches, searchFilteredCandidates } from '../../src/vectors/index-manager.js';
import { newIndex } from '../../src/vectors/vector-index.js';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

const param = (fn: () => unknown) => {
  try {
    fn();
  } catch (e) {
    return (e as { param?: string }).param;
  }
  return 'no error';
};

test('the grammar: scalars, operators, $and/$or; {} is no filter; errors name the offending path', () => {
  assert.equal(parseFilter({}), null);
  assert.deepEqual(parseFilter({ a: 1 }), { op: 'eq', key: 'a', value: 1 });
  assert.deepEqual(parseFilter({ a: { $gt: 1, $lte: 5 } }), {
    op: 'and',
    nodes: [
      { op: 'cmp', key: 'a', cmp: 'gt', value: 1 },
      { op: 'cmp', key: 'a', cmp: 'lte', value: 5 },
    ],
  });
  assert.deepEqual(parseFilter({ $or: [{ a: 'x' }, { b: { $in: [true, 2] } }] }), {
    op: 'or',
    nodes: [
      { op: 'eq', key: 'a', value: 'x' },
      { op: 'in', key: 'b', values: new Set([true, 2]) },
    ],
  });
  assert.equal(
    param(() => parseFilter({ a: { $regex: 'x' } })),
    'filter.a.$regex',
  );
  assert.equal(
    param(() => parseFilter({ a: { $lt: 'x' } })),
    'filter.a.$lt',
  );
  assert.equal(
    param(() => parseFilter({ a: { $lt: Infinity } })),
    'filter.a.$lt',
  );
  assert.equal(
    param(() => parseFilter({ a: { $eq: null } })),
    'filter.a.$eq',
  );
  assert.equal(
    param(() => parseFilter({ a: { $in: Array(MAX_IN_VALUES + 1).fill(1) } })),
    'filter.a.$in',
  );
  assert.equal(
    param(() => parseFilter({ $and: [{ $or: [{ $and: [{ $or: [{ a: 1 }] }] }] }] })),
    'no error',
  );
  assert.equal(
    param(() => parseFilter({ $and: [{ $or: [{ $and: [{ $or: [{ $or: [{ a: 1 }] }] }] }] }] })),
    'filter.$and[0].$or[0].$and[0].$or[0].$or',
  );
  assert.equal(
    param(() => parseFilter({ $nor: [{ a: 1 }] })),
    'filter.$nor',
  );
  assert.equal(
    param(() => parseFilter({ ['k'.repeat(257)]: 1 })),
    'filter',
  );
  assert.equal(
    param(() => parseFilter({ $or: Array.from({ length: 65 }, () => ({ a: 1 })) })),
    'filter.$or',
  );
  assert.equal(
    param(() => parseFilter({ $and: Array.from({ length: 40 }, (_, i) => ({ a: i, b: i })) })),
    'filter.$and[32].a',
  );
});

test('one item: strict equality, numbers only for ranges, a missing key or an object value matches nothing', () => {
  const m = { s: 'x', n: 5, b: true, o: { s: 'x' }, arr: [1], z: null };
  const yes = (f: unknown) => matchesFilter(parseFilter(f)!, m);
  assert.ok(yes({ s: 'x', n: 5, b: true }));
  assert.ok(!yes({ n: '5' }));
  assert.ok(!yes({ b: 1 }));
  assert.ok(yes({ n: { $gte: 5, $lt: 6 } }));
  assert.ok(!yes({ s: { $gt: 0 } }));
  assert.ok(!yes({ missing: { $lt: 100 } }));
  assert.ok(!yes({ o: 'x' }));
  assert.ok(!yes({ arr: 1 }));
  assert.ok(yes({ s: { $in: ['y', 'x'] } }));
  assert.ok(yes({ $or: [{ s: 'no' }, { n: { $in: [4, 5] } }] }));
  assert.ok(!yes({ $and: [{ s: 'x' }, { n: 4 }] }));
  assert.ok(!matchesFilter(parseFilter({ toString: 'x' })!, {}), 'inherited properties are not metadata');
});

/** Random metadata over a few keys and value types, and random filters over them. */
function randomMeta(r: () => number): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  if (r() < 0.8) m.n = Math.floor(r() * 20) - 5;
  if (r() < 0.7) m.s = ['a', 'b', 'c', '1'][Math.floor(r() * 4)];
  if (r() < 0.5) m.b = r() < 0.5;
  if (r() < 0.2) m.mixed = [1, '1', true, { x: 1 }, null, 2.5][Math.floor(r() * 6)];
  return m;
}

function randomFilter(r: () => number, depth = 0): Record<string, unknown> {
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)]!;
  const leaf = (): Record<string, unknown> =>
    pick([
      () => ({ n: Math.floor(r() * 20) - 5 }),
      () => ({ n: { [pick(['$gt', '$gte', '$lt', '$lte'])]: Math.floor(r() * 20) - 5 } }),
      () => ({ s: pick(['a', 'b', 'z', '1']) }),
      () => ({ s: { $in: [pick(['a', 'b']), pick(['c', 1, '1'])] } }),
      () => ({ b: pick([true, false]) }),
      () => ({ mixed: pick([1, '1', true, 2.5]) }),
      () => ({ mixed: { $in: [1, true] } }),
      () => ({ n: { $eq: 3 }, s: 'a' }),
    ])();
  if (depth < 3 && r() < 0.4)
    return {
      [pick(['$and', '$or'])]: Array.from({ length: 1 + Math.floor(r() * 3) }, () => randomFilter(r, depth + 1)),
    };
  return leaf();
}

test('metadata columns agree with the one-item match over random metadata and filters, through changes and deletions', () => {
  const r = rng(11);
  const cols = new MetadataColumns();
  const truth = new Map<number, Record<string, unknown>>();
  const check = (f: FilterNode) => {
    const expected = [...truth]
      .filter(([, meta]) => matchesFilter(f, meta))
      .map(([k]) => k)
      .sort((a, b) => a - b);
    // Uncached, cached (first and repeated) and after the changes below: the same answer as the one-item match.
    for (const m of [cols.evaluate(f), cols.evaluate(f, filterCacheKey(f)), cols.evaluate(f, filterCacheKey(f))]) {
      assert.deepEqual([...keysOf(m.bits, m.count)].map(Number), expected);
    }
  };
  for (let k = 1; k <= 3000; k++) {
    const meta = randomMeta(r);
    cols.set(BigInt(k), meta);
    truth.set(k, meta);
  }
  for (let round = 0; round < 3; round++) {
    for (let i = 0; i < 60; i++) check(parseFilter(randomFilter(r)) ?? ({ op: 'and', nodes: [] } as never));
    // Changes (a patch), deletions and new keys far past the current ones (the columns grow).
    for (let i = 0; i < 500; i++) {
      const k = 1 + Math.floor(r() * 3000);
      if (r() < 0.5) {
        cols.delete(BigInt(k));
        truth.delete(k);
      } else {
        const meta = randomMeta(r);
        cols.set(BigInt(k), meta);
        truth.set(k, meta);
      }
    }
    const far = 5000 + round * 4000;
    const meta = randomMeta(r);
    cols.set(BigInt(far), meta);
    truth.set(far, meta);
  }
  assert.equal(cols.size, truth.size);
});

test('cached filter answers: canonical keys, reused until any change, least recently used dropped past 32', () => {
  const key = (raw: unknown) => filterCacheKey(parseFilter(raw)!);
  // Clause order, $in order and a one-clause $and do not matter; value types and operators do.
  assert.equal(key({ a: 1, b: 'x' }), key({ $and: [{ b: 'x' }, { a: 1 }] }));
  assert.equal(key({ a: { $in: [1, 'x', true] } }), key({ a: { $in: [true, 1, 'x'] } }));
  assert.equal(key({ $or: [{ a: 1 }] }), key({ a: 1 }));
  const distinct = [
    { a: 1 },
    { a: '1' },
    { a: true },
    { b: 1 },
    { a: { $gt: 1 } },
    { a: { $gte: 1 } },
    { a: { $in: [1] } },
    { $or: [{ a: 1 }, { b: 1 }] },
    { a: 1, b: 1 },
    { 'a,b': 1 },
    { a: ',b' },
  ];
  assert.equal(new Set(distinct.map(key)).size, distinct.length);

  const cols = new MetadataColumns();
  for (let k = 1; k <= 100; k++) cols.set(BigInt(k), { g: k % 10 });
  const f = parseFilter({ g: 3 })!;
  const first = cols.evaluate(f, filterCacheKey(f));
  assert.equal(cols.evaluate(f, filterCacheKey(f)), first, 'the same answer object while nothing changes');
  assert.equal(first.count, 10);
  // Every kind of change drops it: an add, a patch, a deletion.
  const gen = cols.generation;
  cols.set(101n, { g: 3 });
  const afterAdd = cols.evaluate(f, filterCacheKey(f));
  assert.notEqual(afterAdd, first);
  assert.equal(afterAdd.count, 11);
  cols.set(3n, { g: 4 });
  assert.equal(cols.evaluate(f, filterCacheKey(f)).count, 10);
  cols.delete(13n);
  assert.equal(cols.evaluate(f, filterCacheKey(f)).count, 9);
  assert.equal(cols.generation, gen + 3);
  // 33 filters: the least recently used one (g: 0, not looked up since) is evaluated again, the others are not.
  const answers = new Map<number, unknown>();
  for (let v = 0; v < 33; v++) {
    const g = parseFilter({ g: v })!;
    answers.set(v, cols.evaluate(g, filterCacheKey(g)));
  }
  for (let v = 32; v >= 1; v--) {
    const g = parseFilter({ g: v })!;
    assert.equal(cols.evaluate(g, filterCacheKey(g)), answers.get(v), `g: ${v} still cached`);
  }
  const g0 = parseFilter({ g: 0 })!;
  assert.notEqual(cols.evaluate(g0, filterCacheKey(g0)), answers.get(0));
});

test('JSON merge patch: null removes, objects merge recursively, everything else replaces; inputs untouched', () => {
  const target = { a: 1, b: { c: 2, d: 3 }, e: [1, 2], f: 'x' };
  const patch = { a: null, b: { c: null, g: 4 }, e: [3], f: { h: 1 }, i: null, j: false };
  assert.deepEqual(mergePatch(target, patch), { b: { d: 3, g: 4 }, e: [3], f: { h: 1 }, j: false });
  assert.deepEqual(target, { a: 1, b: { c: 2, d: 3 }, e: [1, 2], f: 'x' });
  const proto = mergePatch({}, JSON.parse('{"__proto__": {"polluted": 1}}'));
  assert.deepEqual(Object.keys(proto), ['__proto__']);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('the index: filtered and key-restricted searches return only allowed keys, as many as asked when enough are', () => {
  const dims = 24;
  const r = rng(5);
  const n = 4000;
  const data = new Float32Array(n * dims).map(() => r() - 0.5);
  const index = newIndex(dims);
  index.add(
    BigUint64Array.from({ length: n }, (_, i) => BigInt(i + 1)),
    data,
  );
  const cols = new MetadataColumns();
  for (let i = 1; i <= n; i++) cols.set(BigInt(i), { g: i % 50 });
  const exactTop = (q: Float32Array, allowed: (k: number) => boolean, k: number) => {
    const scored: Array<[number, number]> = [];
    for (let i = 1; i <= n; i++) {
      if (!allowed(i)) continue;
      let dot = 0,
        nn = 0,
        qq = 0;
      for (let d = 0; d < dims; d++) {
        const v = data[(i - 1) * dims + d]!;
        dot += v * q[d]!;
        nn += v * v;
        qq += q[d]! * q[d]!;
      }
      scored.push([dot / Math.sqrt(nn * qq), i]);
    }
    return scored
      .sort((a, b) => b[0] - a[0])
      .slice(0, k)
      .map(([, i]) => i);
  };
  let hits = 0,
    total = 0;
  for (const [filter, allowed] of [
    [{ g: { $lt: 40 } }, (k: number) => k % 50 < 40],
    [{ g: 7 }, (k: number) => k % 50 === 7],
    [{ g: { $in: [1, 2, 3] } }, (k: number) => [1, 2, 3].includes(k % 50)],
  ] as const) {
    const match = cols.evaluate(parseFilter(filter)!);
    assert.equal(match.count, [...Array(n)].filter((_, i) => allowed(i + 1)).length);
    for (let qi = 0; qi < 20; qi++) {
      const q = data.slice(qi * 97 * dims, (qi * 97 + 1) * dims);
      const graph = index.search(q, 18, 0, new Uint8Array(match.bits.buffer));
      const exact = index.searchKeys(q, 18, keysOf(match.bits, match.count));
      const planned = searchFilteredCandidates(index, q, 10, match);
      for (const keys of [graph, exact, planned]) {
        assert.equal(keys.length, Math.min(18, match.count));
        for (const k of keys) assert.ok(allowed(Number(k)), `key ${k} allowed by ${JSON.stringify(filter)}`);
      }
      const truth = new Set(exactTop(q, allowed, 10));
      for (const k of [...graph].slice(0, 10)) hits += truth.has(Number(k)) ? 1 : 0;
      total += 10;
    }
  }
  assert.ok(hits / total >= 0.9, `filtered graph recall@10 ${hits / total}`);
  // Bits past the bitmap's end allow nothing; an empty bitmap and an empty key list answer nothing.
  assert.equal(index.search(data.slice(0, dims), 10, 0, new Uint8Array(0)).length, 0);
  assert.equal(index.searchKeys(data.slice(0, dims), 10, new BigUint64Array(0)).length, 0);
  assert.deepEqual([...index.searchKeys(data.slice(0, dims), 10, BigUint64Array.from([1n, 999999n]))], [1n]);
  assert.ok(exactSearchMaxMatches(100_000) > exactSearchMaxMatches(10_000));
});
