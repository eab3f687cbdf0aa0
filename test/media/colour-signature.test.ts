// Colour signatures (the tracker's appearance term): two halves of a box as RGB histograms summing to 1, a
// red coat over blue jeans unlike blue over red, and nothing read outside the image.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { colourSignature, SIGNATURE_DIM } from '../../src/media/colour-signature.js';
import type { RgbImage } from '../../src/media/rgb-image.js';

/** A 100x200 image: the top half one colour, the bottom half another. */
function twoTone(top: [number, number, number], bottom: [number, number, number]): RgbImage {
  const data = new Uint8Array(100 * 200 * 3);
  for (let y = 0; y < 200; y++) for (let x = 0; x < 100; x++) data.set(y < 100 ? top : bottom, (y * 100 + x) * 3);
  return { data, width: 100, height: 200, channels: 3 };
}

const sig = (img: RgbImage, box: number[]) => {
  const out = new Float32Array(SIGNATURE_DIM);
  colourSignature(img, box, out);
  return out;
};
const intersection = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + Math.min(v, b[i]), 0);

test('a signature sums to 1, half per part; the same person matches fully, the swapped colours do not', () => {
  const red: [number, number, number] = [220, 20, 20],
    blue: [number, number, number] = [20, 20, 220];
  const a = sig(twoTone(red, blue), [0, 0, 100, 200]);
  assert.ok(Math.abs(a.reduce((s, v) => s + v, 0) - 1) < 1e-5);
  assert.ok(Math.abs(a.slice(0, 64).reduce((s, v) => s + v, 0) - 0.5) < 1e-5);
  assert.ok(Math.abs(intersection(a, sig(twoTone(red, blue), [0, 0, 100, 200])) - 1) < 1e-5);
  assert.ok(intersection(a, sig(twoTone(blue, red), [0, 0, 100, 200])) < 0.01);
});

test('a box partly or wholly outside the image reads only pixels inside it', () => {
  const img = twoTone([200, 200, 200], [10, 10, 10]);
  const half = sig(img, [50, 100, 150, 300]); // the upper part inside, the legs below the image
  assert.ok(Math.abs(half.reduce((s, v) => s + v, 0) - 1) < 1e-5);
  assert.ok(half.slice(64).every((v) => Math.abs(v - 0.5 / 64) < 1e-6));
  const out = sig(img, [500, 500, 600, 700]);
  assert.ok(out.every((v) => Math.abs(v - 1 / 128) < 1e-6));
  // Writes only its own slice.
  const many = new Float32Array(3 * SIGNATURE_DIM).fill(-1);
  colourSignature(img, [0, 0, 100, 200], many, SIGNATURE_DIM);
  assert.ok(
    many.slice(0, SIGNATURE_DIM).every((v) => v === -1) && many.slice(2 * SIGNATURE_DIM).every((v) => v === -1),
  );
});
