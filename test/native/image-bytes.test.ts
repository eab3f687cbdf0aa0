// The letterbox and stretch written as bytes (for a model that normalises its input in its graph), through the
// real addon: the same geometry as the float tensors, each byte the unnormalised float value rounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RgbImage } from '../../src/media/rgb-image.js';
import { letterboxAsync, letterboxBytesAsync, stretchAsync, stretchBytesAsync } from '../../src/native/image.js';
import { ApiError } from '../../src/base/errors.js';

/** Bytes from a fixed-seed generator, so a failure reproduces. */
function noise(width: number, height: number, seed: number): RgbImage {
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < data.length; i++) {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    data[i] = seed >>> 24;
  }
  return { data, width, height, channels: 3 };
}

/** Differences from the float path's values rounded to whole bytes (halves up). */
function mismatches(bytes: Uint8Array, floats: Float32Array): number {
  assert.equal(bytes.length, floats.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) if (bytes[i] !== Math.min(255, Math.max(0, Math.round(floats[i]!)))) n++;
  return n;
}

test('letterbox bytes: the float letterbox geometry, its unnormalised values rounded, padding included', async () => {
  for (const [w, h, W, H, center] of [
    [1280, 720, 640, 640, true],
    [300, 500, 512, 384, false],
    [33, 17, 64, 64, true],
  ] as const) {
    const img = noise(w, h, w * h);
    const f = await letterboxAsync(img, { width: W, height: H, layout: 'nhwc', scale: 1, pad: [114, 0, 255], center });
    const out = new Uint8Array(new SharedArrayBuffer(3 * W * H));
    const b = await letterboxBytesAsync(img, { width: W, height: H, pad: [114, 0, 255], center, out });
    assert.equal(b.bytes.buffer, out.buffer, 'written into the memory given');
    assert.deepEqual(b.dims, [1, H, W, 3]);
    assert.deepEqual(
      [b.scale, b.padX, b.padY, b.contentWidth, b.contentHeight],
      [f.scale, f.padX, f.padY, f.contentWidth, f.contentHeight],
    );
    assert.equal(mismatches(b.bytes, f.tensor), 0, `${w}x${h} -> ${W}x${H}`);
  }
});

test('stretch bytes: the float stretch, direct and after the box shrinks, rounded', async () => {
  const img = noise(1920, 1080, 5);
  for (const [shrinkX, shrinkY] of [
    [1, 1],
    [2, 1],
    [3, 2],
  ] as const) {
    const f = await stretchAsync(img, { width: 512, height: 512, layout: 'nhwc', scale: 1, shrinkX, shrinkY });
    const b = await stretchBytesAsync(img, { width: 512, height: 512, shrinkX, shrinkY });
    assert.deepEqual(b.dims, [1, 512, 512, 3]);
    assert.equal(mismatches(b.bytes, f.tensor), 0, `shrink ${shrinkX}x${shrinkY}`);
  }
});

test('byte outputs refuse memory too small, as a catalogue error', async () => {
  const img = noise(64, 48, 1);
  await assert.rejects(
    () => letterboxBytesAsync(img, { width: 32, height: 32, out: new Uint8Array(10) }),
    (e) => e instanceof ApiError && /at least 3072 bytes/.test(e.message),
  );
  await assert.rejects(
    () => stretchBytesAsync(img, { width: 32, height: 32, shrinkX: 0 }),
    (e) => e instanceof ApiError,
  );
});
