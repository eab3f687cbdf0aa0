// The addon's copy of the colour rules (native/core/image/colour_names.cc), which names a detect's objects on
// the libuv pool: every one of the 2^24 colours gets the name colour.ts gives it, and dominantColors answers
// what dominantColor answers, box by box, on a photo and made images (ties, thin, edge, degenerate and non-finite boxes
// included). A grid outside the image is refused by the addon itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { COLOUR_NAMES, colorName, dominantColor, dominantColors } from '../../src/media/colour.js';
import { colourIndices, dominantColourIndicesAsync } from '../../src/native/image.js';
import { projectRoot } from '../../src/base/paths.js';
import { loadRgb } from '../helpers/inference.js';

test('the addon names every one of the 2^24 colours as colour.ts does', () => {
  const all = new Uint8Array(3 << 24);
  for (let i = 0; i < 1 << 24; i++) {
    all[3 * i] = i >> 16;
    all[3 * i + 1] = (i >> 8) & 255;
    all[3 * i + 2] = i & 255;
  }
  const native = colourIndices(all);
  assert.equal(native.length, 1 << 24);
  let wrong = 0;
  let first = '';
  for (let i = 0; i < 1 << 24; i++) {
    const r = i >> 16;
    const g = (i >> 8) & 255;
    const b = i & 255;
    const want = colorName(r, g, b);
    if (COLOUR_NAMES[native[i]!] !== want && wrong++ === 0)
      first = `${r},${g},${b}: ${COLOUR_NAMES[native[i]!]}, colour.ts says ${want}`;
  }
  assert.equal(wrong, 0, `${wrong} colours named otherwise, the first ${first}`);
});

test('dominantColors (on the pool) answers what dominantColor answers, box by box', async () => {
  let seed = 7;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  // The photo, and two made here: noise (every name, no ties to speak of) and a hue-by-value gradient.
  const photo = await loadRgb(join(projectRoot, 'assets', 'astronaut.jpg'));
  const made = (w: number, h: number, px: (x: number, y: number) => number[]) => {
    const data = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.set(px(x, y), (y * w + x) * 3);
    return { data, width: w, height: h, channels: 3 as const };
  };
  const noise = made(333, 217, () => [random() * 256, random() * 256, random() * 256]);
  const gradient = made(640, 360, (x, y) => [(x * 255) / 639, (y * 255) / 359, (x + y) % 256]);
  for (const [name, image] of Object.entries({ photo, noise, gradient })) {
    const { width: W, height: H } = image;
    const boxes: number[][] = [
      [0, 0, W, H],
      [0, 0, 1, 1],
      [10, 10, 11.9, 40],
      [W - 3, H - 3, W + 50, H + 50],
      [-40, -40, 5, 5],
      [NaN, 0, 10, 10],
      [0, 0, Infinity, 10],
      [5, 5, 5 + 2, 5 + 2],
    ];
    for (let i = 0; i < 200; i++) {
      const x = random() * W;
      const y = random() * H;
      boxes.push([x, y, x + 2 + random() * (W - x), y + 2 + random() * (H - y)]);
    }
    const got = await dominantColors(image, boxes);
    assert.deepEqual(
      got,
      boxes.map((b) => dominantColor(image, b)),
      name,
    );
    assert.ok(got.filter((c) => c !== undefined).length >= 200, `${name}: boxes with a colour`);
  }
  // A tie goes to the name sampled first, as in JavaScript: left half red, right half blue.
  const data = new Uint8Array(100 * 100 * 3);
  for (let y = 0; y < 100; y++)
    for (let x = 0; x < 100; x++) data.set(x < 50 ? [255, 0, 0] : [0, 0, 255], (y * 100 + x) * 3);
  const halves = { data, width: 100, height: 100, channels: 3 as const };
  assert.deepEqual(await dominantColors(halves, [[0, 0, 100, 100]]), ['red']);
  assert.deepEqual(await dominantColors(halves, []), []);
});

test('the addon refuses a grid that is not inside the image', async () => {
  const image = { data: new Uint8Array(10 * 10 * 3), width: 10, height: 10, channels: 3 as const };
  for (const grid of [
    { x0: 0, x1: 11, y0: 0, y1: 10, step: 1 },
    { x0: -1, x1: 5, y0: 0, y1: 10, step: 1 },
    { x0: 0, x1: 5, y0: 6, y1: 5, step: 1 },
    { x0: 0, x1: 5, y0: 0, y1: 5, step: 0 },
  ])
    await assert.rejects(dominantColourIndicesAsync(image, [grid]), (e: Error & { code?: string }) => {
      assert.match(String(e.code), /INVALID_ARG/);
      return true;
    });
  assert.deepEqual([...(await dominantColourIndicesAsync(image, [{ x0: 3, x1: 3, y0: 0, y1: 10, step: 1 }]))], [255]);
});
