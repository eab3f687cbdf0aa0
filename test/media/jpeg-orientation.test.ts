// A JPEG stored turned or mirrored (EXIF orientation 2-8, as cameras and phones write them) is decoded by the
// addon and turned upright there: exactly sharp's upright pixels for each of the eight orientations, whole,
// decoded smaller for a resize (upright size, upright box average), and into pooled memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { ApiError } from '../../src/base/errors.js';
import { loadImage, type ImageInput } from '../../src/media/image-input.js';
import { readJpegHeader } from '../../src/media/jpeg-header.js';
import { PixelPool } from '../../src/media/pixel-pool.js';
import { withOrientation } from '../helpers/exif.js';
import { decodeJpeg } from '../../src/native/image.js';

const b64 = (bytes: Buffer) => ({ kind: 'base64', bytes, param: 'image_base64' }) as ImageInput;

/**
 * A JPEG with no profile whose only metadata is its EXIF orientation, as a camera writes it (sharp's own
 * writer adds a profile). 53x37 by default, no two pixels alike in a row or column, so any wrong turn or
 * mirror changes the pixels.
 */
async function stored(orientation: number, width = 53, height = 37): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) raw.set([(x * 4) & 255, (y * 6) & 255, ((x + y) * 3) & 255], (y * width + x) * 3);
  const jpeg = await sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg({ quality: 95, chromaSubsampling: '4:4:4' })
    .toBuffer();
  return withOrientation(jpeg, orientation);
}

/** sharp's upright pixels: what every decode of the file must give. */
async function upright(bytes: Buffer): Promise<{ data: Buffer; width: number; height: number }> {
  const { data, info } = await sharp(bytes).rotate().raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height };
}

test('each of the eight orientations: the addon turns the photo upright to exactly the pixels sharp gives', async () => {
  for (let o = 1; o <= 8; o++) {
    const bytes = await stored(o);
    assert.equal(readJpegHeader(bytes)?.orientation, o);
    const expected = await upright(bytes);
    assert.deepEqual([expected.width, expected.height], o >= 5 ? [37, 53] : [53, 37], `orientation ${o}: sharp's size`);
    const native = (await decodeJpeg(bytes, 1e6, undefined, 1, o))!;
    assert.deepEqual([native.width, native.height], [expected.width, expected.height], `orientation ${o}: size`);
    assert.ok(native.data.equals(expected.data), `orientation ${o}: the addon's pixels`);
    const loaded = await loadImage(b64(bytes));
    assert.ok(loaded.data.equals(expected.data), `orientation ${o}: loadImage's pixels`);
    // Into pooled memory too.
    const pool = new PixelPool(1 << 20, 1 << 20);
    const pooled = await loadImage(b64(bytes), { pixels: pool });
    assert.ok(pooled.data.equals(expected.data) && pooled.release, `orientation ${o}: pooled`);
    pooled.release!();
  }
  await assert.rejects(decodeJpeg(await stored(1), 1e6, undefined, 1, 9), ApiError);
  await assert.rejects(decodeJpeg(await stored(1), 1e6, undefined, 1, 0), ApiError);
});

test('turned and decoded smaller: upright size, the upright image box-averaged where it says, the file size upright', async () => {
  for (let o = 1; o <= 8; o++) {
    const bytes = await stored(o, 1001, 757);
    const whole = await loadImage(b64(bytes));
    const small = await loadImage(b64(bytes), { decodeFor: { width: 240, height: 240, fit: 'contain' } });
    const [w, h] = o >= 5 ? [757, 1001] : [1001, 757];
    assert.deepEqual([whole.width, whole.height], [w, h]);
    const s = small.shrunk!;
    assert.deepEqual([s.shrink, s.width, s.height], [4, w, h], `orientation ${o}`);
    assert.deepEqual([small.width, small.height], [Math.ceil(w / 4), Math.ceil(h / 4)]);
    // Each decoded pixel against the average of the upright pixels it says it covers (the pattern is smooth,
    // so the decoder's average and a box average agree within a level or two; a block off by a pixel or more
    // is several levels away).
    let sum = 0;
    let n = 0;
    for (let y = 1; y < small.height - 1; y++)
      for (let x = 1; x < small.width - 1; x++)
        for (let c = 0; c < 3; c++) {
          let acc = 0;
          for (let dy = 0; dy < 4; dy++)
            for (let dx = 0; dx < 4; dx++)
              acc += whole.data[((y * 4 + s.offsetY + dy) * w + x * 4 + s.offsetX + dx) * 3 + c]!;
          sum += Math.abs(small.data[(y * small.width + x) * 3 + c]! - acc / 16);
          n++;
        }
    assert.ok(sum / n < 1.5, `orientation ${o}: ${(sum / n).toFixed(2)} levels from the box average it names`);
  }
});
