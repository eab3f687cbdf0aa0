// CLEAR MOT / IDF1 on hand-made cases whose numbers are known, the devkit's keep-previous-match rule,
// MOT15/MOT17 parsing with distractor handling, and optimality of the assignment solver.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluateMot, linearAssignment, parseMotFile, type MotRow } from '../../eval/lib/mot-metrics.js';

const row = (frame: number, id: number, x: number, y = 0, w = 10, h = 10, extra: Partial<MotRow> = {}): MotRow => ({
  frame,
  id,
  x,
  y,
  w,
  h,
  conf: 1,
  cls: null,
  visibility: null,
  ...extra,
});

test('identical hypotheses score perfectly', () => {
  const gt = [row(1, 1, 0), row(1, 2, 50), row(2, 1, 2), row(2, 2, 48), row(3, 1, 4)];
  const m = evaluateMot(
    gt,
    gt.map((r) => ({ ...r, id: r.id + 100 })),
  );
  assert.equal(m.mota, 1);
  assert.equal(m.idf1, 1);
  assert.equal(m.motp, 1);
  assert.deepEqual([m.fp, m.fn, m.idSwitches, m.matches, m.gtCount], [0, 0, 0, 5, 5]);
});

test('an identity switch halfway: MOTA 0.75, IDF1 0.5', () => {
  const gt = [1, 2, 3, 4].map((f) => row(f, 1, f));
  const hyp = [1, 2, 3, 4].map((f) => row(f, f <= 2 ? 10 : 11, f));
  const m = evaluateMot(gt, hyp);
  assert.equal(m.idSwitches, 1);
  assert.equal(m.mota, 0.75);
  assert.equal(m.idtp, 2);
  assert.equal(m.idf1, 0.5);
});

test('misses, false positives and IoU below 0.5 count as FN + FP', () => {
  const gt = [row(1, 1, 0), row(2, 1, 0), row(3, 1, 0)];
  const hyp = [row(1, 7, 0), row(2, 7, 6) /* IoU 0.25 */, row(3, 8, 100)];
  const m = evaluateMot(gt, hyp);
  assert.deepEqual([m.matches, m.fn, m.fp, m.idSwitches], [1, 2, 2, 0]);
  assert.equal(m.mota, 1 - 4 / 3);
  assert.equal(m.motp, 1);
});

test('a still-valid match from the previous frame is kept even when swapping would fit better', () => {
  const gt = [row(1, 1, 0), row(1, 2, 40), row(2, 1, 0), row(2, 2, 2)];
  const hyp = [row(1, 10, 0), row(1, 20, 40), row(2, 10, 2), row(2, 20, 0)];
  const m = evaluateMot(gt, hyp);
  assert.equal(m.idSwitches, 0); // devkit keeps 1->10 and 2->20 (IoU 0.67 each) instead of a perfect swap
  assert.equal(m.matches, 4);
  assert.ok(Math.abs(m.motp - (1 + 1 + 2 / 3 + 2 / 3) / 4) < 1e-9);
});

test('a gt that reappears with another hypothesis id after a gap is a switch', () => {
  const gt = [row(1, 1, 0), row(2, 1, 0), row(5, 1, 0)];
  const hyp = [row(1, 3, 0), row(2, 3, 0), row(5, 4, 0)];
  assert.equal(evaluateMot(gt, hyp).idSwitches, 1);
});

test('parses MOT15 (no class) and MOT17 (class, visibility) files; conf 0 rows and distractors are not scored', () => {
  const mot15 = parseMotFile('1,9,499,158,31.03,75.17,1,-4.1554,-7.3591,0\n\n2,9,497,158,31,75,0,-1,-1,-1\n');
  assert.equal(mot15.length, 2);
  assert.equal(mot15[0].cls, null);
  assert.equal(mot15[1].conf, 0);
  const mot17 = parseMotFile('1,1,0,0,10,10,1,1,1.0\n1,2,50,0,10,10,1,7,0.5\n1,3,100,0,10,10,0,1,1\n');
  assert.deepEqual(
    mot17.map((r) => r.cls),
    [1, 7, 1],
  );
  assert.equal(mot17[1].visibility, 0.5);
  // Hyp on the static person (class 7) is dropped, hyp on the conf-0 pedestrian is a false positive.
  const m = evaluateMot(mot17, [row(1, 5, 0), row(1, 6, 50), row(1, 7, 100)]);
  assert.deepEqual([m.gtCount, m.hypCount, m.matches, m.fp, m.fn], [1, 2, 1, 1, 0]);
  assert.throws(() => parseMotFile('1,2,3\n'), /line 1/);
});

test('linearAssignment matches brute force on small random matrices', () => {
  let seed = 12345;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const permutations = (k: number, n: number): number[][] =>
    k === 0
      ? [[]]
      : permutations(k - 1, n).flatMap((p) =>
          Array.from({ length: n }, (_, j) => j)
            .filter((j) => !p.includes(j))
            .map((j) => [...p, j]),
        );
  for (let trial = 0; trial < 60; trial++) {
    const rows = 1 + Math.floor(rand() * 4),
      cols = 1 + Math.floor(rand() * 4);
    const cost = Array.from({ length: rows * cols }, () => Math.floor(rand() * 20));
    const pairs = linearAssignment(cost, rows, cols);
    assert.equal(pairs.length, Math.min(rows, cols));
    const got = pairs.reduce((s, [r, c]) => s + cost[r * cols + c], 0);
    let best = Infinity;
    if (rows <= cols)
      for (const p of permutations(rows, cols))
        best = Math.min(
          best,
          p.reduce((s, c, r) => s + cost[r * cols + c], 0),
        );
    else
      for (const p of permutations(cols, rows))
        best = Math.min(
          best,
          p.reduce((s, r, c) => s + cost[r * cols + c], 0),
        );
    assert.equal(got, best, `trial ${trial}`);
  }
});
