// The addon's VectorIndex (USearch built from source with prefetching and huge pages): the same file format
// and the same answers as the `usearch` npm binding of the pinned version, typed-array views read at their
// offset, and bad arguments or files are JS errors, never a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import usearch from 'usearch';
import { newIndex, INDEX_SETTINGS } from '../../src/vectors/vector-index.js';

const DIMS = 32;

function unitVectors(n: number, seed: number): Float32Array {
  let s = seed;
  const g = () => ((s = (s * 1664525 + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
  const out = new Float32Array(n * DIMS);
  for (let i = 0; i < n; i++) {
    let norm = 0;
    for (let d = 0; d < DIMS; d++) norm += (out[i * DIMS + d] = g()) ** 2;
    for (let d = 0; d < DIMS; d++) out[i * DIMS + d]! /= Math.sqrt(norm);
  }
  return out;
}

const keysOf = (n: number, from = 0) => BigUint64Array.from({ length: n }, (_, i) => BigInt(from + i));
const npmIndex = () =>
  new usearch.Index({
    dimensions: DIMS,
    metric: usearch.MetricKind.IP,
    quantization: usearch.ScalarKind.I8,
    connectivity: INDEX_SETTINGS.connectivity,
    expansion_add: INDEX_SETTINGS.expansionAdd,
    expansion_search: INDEX_SETTINGS.expansionSearch,
    multi: false,
  });

test('files move both ways between the npm binding and ours, with the same answers', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-vi-'));
  try {
    const data = unitVectors(1500, 3);
    const theirs = npmIndex();
    theirs.add(keysOf(1500), data, 1);
    theirs.save(join(dir, 'theirs.usearch'));
    const ours = newIndex(DIMS);
    ours.load(join(dir, 'theirs.usearch'));
    assert.equal(ours.size(), 1500);
    let same = 0;
    for (let q = 0; q < 50; q++) {
      const query = data.slice(q * 29 * DIMS, (q * 29 + 1) * DIMS);
      const a = [...theirs.search(query, 10, 1).keys];
      const b = [...ours.search(query, 10)];
      assert.equal(b[0], BigInt(q * 29), 'a vector finds itself first');
      same += b.filter((k) => a.includes(k)).length;
    }
    assert.ok(same >= 50 * 10 * 0.97, `same neighbours (${same} of 500)`);
    ours.add(keysOf(10, 5000), unitVectors(10, 4));
    ours.save(join(dir, 'ours.usearch'));
    const back = npmIndex();
    back.load(join(dir, 'ours.usearch'));
    assert.equal(back.size(), 1510);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('views into bigger buffers are read at their offset; per-search ef; remove and contains', () => {
  const data = unitVectors(300, 7);
  const index = newIndex(DIMS);
  // Keys and vectors as views in the middle of larger buffers.
  const keyBuf = keysOf(302);
  const vecBuf = new Float32Array(302 * DIMS);
  vecBuf.set(data, DIMS);
  index.add(keyBuf.subarray(1, 301), vecBuf.subarray(DIMS, 301 * DIMS));
  assert.equal(index.size(), 300);
  assert.deepEqual([...index.contains(BigUint64Array.of(0n, 1n, 300n, 301n))], [0, 1, 1, 0]);
  const query = vecBuf.subarray(10 * DIMS, 11 * DIMS); // item key 10
  assert.equal(index.search(query, 1)[0], 10n);
  assert.equal(index.search(query, 5, 8).length, 5);
  assert.equal(index.search(query, 500, 600).length, 300);
  assert.equal(index.remove(BigUint64Array.of(10n, 9999n)), 1);
  assert.ok(![...index.search(query, 50, 200)].includes(10n), 'removed keys are not found');
  assert.equal(index.size(), 299);
});

test('every vector of a built index finds itself, on one thread, two, four or every core', () => {
  // All of them, not most: USearch's own concurrent inserts orphaned a node now and then (unpatched, 173
  // of 1000 two-thread builds of these 300 vectors left 1-10 of them unfound, and a CI run 20). The patched
  // headers (native/usearch/patch-headers.mjs) keep a node unreachable until its links are complete;
  // measured through this addon, 500 builds for each of threads 1, 2, 4 and 0 (every core, 2 here): all 300
  // found themselves every time. One thread builds the same graph every time; a parallel build interleaves
  // differently each run, hence several builds of each.
  const data = unitVectors(300, 7);
  for (const threads of [1, 2, 4, 0]) {
    for (let build = 0; build < 5; build++) {
      const index = newIndex(DIMS);
      index.add(keysOf(300), data, threads);
      assert.equal(index.size(), 300);
      const lost: number[] = [];
      for (let i = 0; i < 300; i++)
        if (index.search(data.subarray(i * DIMS, (i + 1) * DIMS), 1, 64)[0] !== BigInt(i)) lost.push(i);
      assert.deepEqual(lost, [], `threads ${threads}, build ${build}: these vectors did not find themselves`);
    }
  }
});

test('bad arguments and files are errors, not crashes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-vi-'));
  try {
    const index = newIndex(DIMS);
    const v = unitVectors(2, 1);
    assert.throws(() => index.add([1n, 2n] as never, v), /Expected BigUint64Array for keys but received an array of 2/);
    assert.throws(
      () => index.add(keysOf(3), v),
      /keys.length x dimensions \(96\) values for vectors but received Float32Array\(64\)/,
    );
    assert.throws(() => index.add(keysOf(2), Array.from(v) as never), /Expected Float32Array .* for vectors/);
    index.add(keysOf(2), v);
    assert.throws(() => index.add(keysOf(1), v.subarray(0, DIMS)), /adding key 0/);
    assert.throws(
      () => index.search(new Float32Array(DIMS + 1), 1),
      /Expected Float32Array of dimensions \(32\) values for query/,
    );
    assert.throws(
      () => index.search(v.subarray(0, DIMS), -1),
      /Expected integer between 0 and 1000000 for wanted but received -1/,
    );
    assert.throws(() => index.load(join(dir, 'missing.usearch')), /cannot open/);
    writeFileSync(join(dir, 'junk.usearch'), Buffer.alloc(4096, 0x5a));
    assert.throws(() => index.load(join(dir, 'junk.usearch')), /vector index/);
    assert.throws(() => index.view(join(dir, 'junk.usearch')), /vector index/);
    index.save(join(dir, 'ok.usearch'));
    const whole = readFileSync(join(dir, 'ok.usearch'));
    writeFileSync(join(dir, 'cut.usearch'), whole.subarray(0, whole.length >> 1));
    assert.throws(() => newIndex(DIMS).load(join(dir, 'cut.usearch')), /vector index/);
    assert.throws(() => newIndex(DIMS * 2).load(join(dir, 'ok.usearch')), /expected 64/);
    assert.equal(newIndex(DIMS).size(), 0);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
