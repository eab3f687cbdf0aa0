import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pairedOrder, pairedVerdict } from '../../../bench/mqtt-verdict.js';

test('pairedOrder: one round of each mode a pair, the first drawn', () => {
  const draws = [0.1, 0.9, 0.4];
  let i = 0;
  assert.deepEqual(
    pairedOrder(3, 'on', 'off', () => draws[i++]!),
    ['on', 'off', 'off', 'on', 'on', 'off'],
  );
});

test('pairedVerdict: every pair worse with MQTT on gives the smallest p the pairs allow', () => {
  const v = pairedVerdict([110, 120, 130, 140, 150, 160], [100, 100, 100, 100, 100, 100]);
  assert.equal(v.p, 1 / 64);
  assert.equal(v.within, false);
  assert.ok(v.ratio > 1.3 && v.ratio < 1.4);
});

test('pairedVerdict: no difference, or better with MQTT on, is within noise', () => {
  assert.equal(pairedVerdict([100, 100, 100], [100, 100, 100]).p, 1);
  const better = pairedVerdict([80, 90, 70, 85, 95, 60], [100, 100, 100, 100, 100, 100]);
  assert.equal(better.within, true);
  assert.equal(better.p, 1);
});

test('pairedVerdict: a cost seen in most pairs but undone by one is judged by its size, not by the count', () => {
  // Five pairs 10% worse, one 60% better: the mean log ratio is below 0.
  const v = pairedVerdict([110, 110, 110, 110, 110, 40], [100, 100, 100, 100, 100, 100]);
  assert.equal(v.within, true);
  // Five pairs 30% worse, one 5% better: flagged (p = 2/64).
  const w = pairedVerdict([130, 130, 130, 130, 130, 95], [100, 100, 100, 100, 100, 100]);
  assert.equal(w.p, 2 / 64);
  assert.equal(w.within, false);
});

test('pairedVerdict: with 4 pairs the test cannot flag anything at 0.05', () => {
  const v = pairedVerdict([200, 200, 200, 200], [100, 100, 100, 100]);
  assert.equal(v.p_min, 1 / 16);
  assert.equal(v.within, true);
});
