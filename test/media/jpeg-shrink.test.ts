// A JPEG decoded smaller for a caller that resizes it down anyway (detect): the decoder's own shrink (1/2, 1/4,
// 1/8 while decoding), the rule that picks it from the caller's resize, and loadImage's answer (the pixels at
// the smaller size, the file's own size beside them, pooled memory of the smaller size).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { ApiError } from '../../src/base/errors.js';
import { decodeShrink } from '../../src/media/image-decode.js';
import { CHECK_ONLY, loadImage, wholeImage, type ImageInput } from '../../src/media/image-input.js';
import { PixelPool } from '../../src/media/pixel-pool.js';
import { decodeJpeg, shrink } from '../../src/native/image.js';

const b64 = (bytes: Buffer) => ({ kind: 'base64', bytes, param: 'image_base64' }) as ImageInput;

/** A photo-like image: smooth gradients, a few hard-edged shapes; odd sides so the last block is partial. */
async function scene(width: number, height: number, opts: { cmyk?: boolean; format?: 'png' } = {}): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="#2a6"/><stop offset="1" stop-color="#e83"/></linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>
    <rect x="${width * 0.1}" y="${height * 0.2}" width="${width * 0.3}" height="${height * 0.4}" fill="#135"/>
    <circle cx="${width * 0.7}" cy="${height * 0.6}" r="${height * 0.25}" fill="#fd4"/></svg>`;
  let img = sharp(Buffer.from(svg));
  if (opts.format === 'png') return img.png().toBuffer();
  if (opts.cmyk) img = img.toColourspace('cmyk');
  return img.jpeg({ quality: 92, chromaSubsampling: '4:2:0' }).toBuffer();
}

/** Mean absolute difference of two equal-sized RGB images, per channel value. */
function meanDiff(a: Uint8Array, b: Uint8Array): number {
  assert.equal(a.length, b.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!);
  return sum / a.length;
}

test('the decoder shrinks 2, 4 and 8 times while decoding: ceil of each side, each pixel the average of those it covers', async () => {
  const bytes = await scene(1001, 757);
  const full = (await decodeJpeg(bytes, 1e7))!;
  assert.deepEqual([full.width, full.height], [1001, 757]);
  for (const d of [2, 4, 8] as const) {
    const small = (await decodeJpeg(bytes, 1e7, undefined, d))!;
    assert.deepEqual([small.width, small.height], [Math.ceil(1001 / d), Math.ceil(757 / d)], `1/${d}`);
    assert.equal(small.data.length, small.width * small.height * 3);
    // The whole d x d blocks of the full decode, averaged: the scaled inverse DCT gives the same within rounding
    // and the ringing at hard edges (on photos 0.2-0.6 of a level on average).
    const box = shrink(full, d, d);
    const cropped = Buffer.alloc(box.width * box.height * 3);
    for (let y = 0; y < box.height; y++)
      small.data.copy(cropped, y * box.width * 3, y * small.width * 3, y * small.width * 3 + box.width * 3);
    const diff = meanDiff(cropped, box.data);
    assert.ok(diff < 1.5, `1/${d}: ${diff.toFixed(2)} levels from the box average on average`);
  }
  // Pooled memory of the smaller size is written in place.
  const into = Buffer.alloc(501 * 379 * 3 + 10, 7);
  const pooled = (await decodeJpeg(bytes, 1e7, into, 2))!;
  assert.equal(pooled.data.buffer, into.buffer);
  assert.equal(into[501 * 379 * 3], 7, 'nothing past the image is touched');
  // The pixel limit is the file's own size: a shrink does not let a larger file in.
  await assert.rejects(decodeJpeg(bytes, 1001 * 757 - 1, undefined, 8), { code: 'ERR_SIGHTFLOW_IMAGE_FAILED' });
  for (const bad of [0, 3, 16, 1.5, '2'])
    await assert.rejects(decodeJpeg(bytes, 1e7, undefined, bad as never), ApiError, `shrink ${String(bad)}`);
});

test('the shrink leaves the image at least as large as the resize makes it, on each axis', () => {
  const contain = { width: 640, height: 640, fit: 'contain' } as const;
  const fill = { width: 512, height: 512, fit: 'fill' } as const;
  // Letterbox: the longer side decides (the content is 640 on it).
  assert.equal(decodeShrink(640, 480, contain), 1);
  assert.equal(decodeShrink(1279, 720, contain), 1);
  assert.equal(decodeShrink(1280, 720, contain), 2);
  assert.equal(decodeShrink(1920, 1080, contain), 2);
  assert.equal(decodeShrink(4032, 3024, contain), 4);
  assert.equal(decodeShrink(8000, 6000, contain), 8);
  assert.equal(decodeShrink(100_000, 2000, contain), 8, 'never more than the decoder makes');
  assert.equal(decodeShrink(480, 1920, contain), 2, 'portrait');
  // Stretch: each axis must stay at least the input's, so the shorter side decides.
  assert.equal(decodeShrink(1920, 1080, fill), 2);
  assert.equal(decodeShrink(4032, 1000, fill), 1);
  assert.equal(decodeShrink(4032, 3024, fill), 4);
  assert.equal(decodeShrink(300, 200, fill), 1, 'smaller than the input: decoded whole');
  for (const [w, h, t] of [
    [1920, 1080, contain],
    [4032, 3024, contain],
    [3001, 2001, fill],
    [6000, 600, contain],
  ] as const) {
    const d = decodeShrink(w, h, t);
    const s = t.fit === 'contain' ? Math.min(t.width / w, t.height / h) : undefined;
    const [needW, needH] = s ? [w * s, h * s] : [t.width, t.height];
    assert.ok(Math.ceil(w / d) >= needW && Math.ceil(h / d) >= needH, `${w}x${h} at 1/${d}`);
    assert.ok(d === 8 || Math.ceil(w / (2 * d)) < needW || Math.ceil(h / (2 * d)) < needH, `${w}x${h}: the largest`);
  }
});

test('loadImage for a resize: a large plain JPEG comes back smaller with its own size beside it; others whole', async () => {
  const target = { width: 240, height: 240, fit: 'contain' } as const;
  const bytes = await scene(1001, 757);
  const pool = new PixelPool(4 << 20, 8 << 20);
  const img = await loadImage(b64(bytes), { decodeFor: target, pixels: pool });
  assert.deepEqual([img.width, img.height], [251, 190]);
  assert.deepEqual(img.shrunk, { shrink: 4, width: 1001, height: 757, offsetX: 0, offsetY: 0 });
  assert.equal(img.data.length, 251 * 190 * 3);
  img.release!();
  assert.deepEqual(pool.idle, { buffers: 1, bytes: 251 * 190 * 3 }, 'the pool lent the smaller size');
  // Without decodeFor, or when the image is not twice the resize, it is decoded whole.
  const whole = await loadImage(b64(bytes));
  assert.deepEqual([whole.width, whole.height, whole.shrunk], [1001, 757, undefined]);
  const near = await loadImage(b64(bytes), { decodeFor: { width: 640, height: 640, fit: 'contain' } });
  assert.deepEqual([near.width, near.height, near.shrunk], [1001, 757, undefined]);
  // What the native decoder does not read (PNG, CMYK, a profile to apply) is decoded whole through sharp.
  const p3 = await sharp(await scene(1001, 757))
    .withIccProfile('p3')
    .jpeg({ quality: 92 })
    .toBuffer();
  for (const other of [await scene(1001, 757, { format: 'png' }), await scene(1001, 757, { cmyk: true }), p3]) {
    const o = await loadImage(b64(other), { decodeFor: target });
    assert.deepEqual([o.width, o.height, o.shrunk], [1001, 757, undefined]);
  }
});

test('a check-only load decodes at 1/8 and still refuses a corrupt file; wholeImage decodes it again in full', async () => {
  const bytes = await scene(1001, 757);
  const small = await loadImage(b64(bytes), { decodeFor: CHECK_ONLY });
  assert.deepEqual(
    [small.width, small.height, small.shrunk],
    [126, 95, { shrink: 8, width: 1001, height: 757, offsetX: 0, offsetY: 0 }],
  );
  const whole = await wholeImage(small, 'image_base64');
  assert.deepEqual([whole.width, whole.height, whole.shrunk, whole.format], [1001, 757, undefined, 'jpeg']);
  assert.ok(whole.data.equals((await loadImage(b64(bytes))).data), 'the pixels of a plain full decode');
  assert.equal(await wholeImage(whole, 'image_base64'), whole, 'a whole image is itself');
  // The entropy decoding reads every byte at any shrink: a cut-off file is the same 400.
  await assert.rejects(
    loadImage(b64(bytes.subarray(0, bytes.length - 500)), { decodeFor: CHECK_ONLY }),
    (e: ApiError) => e.status === 400 && e.code === 'invalid_image' && /premature end/.test(e.message),
  );
});
