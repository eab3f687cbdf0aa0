// Colour names: the hue/saturation/value rules on known pixels, and a box's most common name (ties go to the
// name sampled first), as detect's attributes.color, describe and the multimodal embedder use them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { colorName, dominantColor } from '../../src/media/colour.js';

test('colorName: the first rule a pixel meets names it', () => {
  const cases: [number, number, number, string][] = [
    [0, 0, 0, 'black'],
    [40, 40, 45, 'black'],
    [255, 255, 255, 'white'],
    [230, 225, 220, 'white'],
    [128, 128, 128, 'gray'],
    [200, 190, 185, 'gray'],
    [120, 70, 20, 'brown'],
    [255, 0, 0, 'red'],
    [250, 10, 60, 'red'],
    [255, 140, 0, 'orange'],
    [255, 230, 0, 'yellow'],
    [0, 200, 0, 'green'],
    [0, 200, 200, 'blue'],
    [0, 0, 255, 'blue'],
    [128, 0, 255, 'purple'],
    [255, 0, 200, 'pink'],
  ];
  for (const [r, g, b, name] of cases) assert.equal(colorName(r, g, b), name, `${r},${g},${b}`);
});

const image = (w: number, h: number, px: (x: number, y: number) => [number, number, number]) => {
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) data.set(px(x, y), (y * w + x) * 3);
  return { width: w, height: h, channels: 3 as const, data };
};

test('dominantColor: the most common name in the middle of the box; a tie goes to the name sampled first', () => {
  const red: [number, number, number] = [255, 0, 0];
  const blue: [number, number, number] = [0, 0, 255];
  // Left half red, right half blue: the middle 60% of the whole box is an even split, sampled row by row from
  // the left, so red is seen first.
  const halves = image(100, 100, (x) => (x < 50 ? red : blue));
  assert.equal(dominantColor(halves, [0, 0, 100, 100]), 'red');
  // Mirrored, blue is seen first.
  assert.equal(
    dominantColor(
      image(100, 100, (x) => (x < 50 ? blue : red)),
      [0, 0, 100, 100],
    ),
    'blue',
  );
  // A box mostly over the blue half.
  assert.equal(dominantColor(halves, [30, 0, 100, 100]), 'blue');
  // Too small a box has no colour.
  assert.equal(dominantColor(halves, [10, 10, 11, 50]), undefined);
});

/** The rules as written (colour.ts's comment), pixel by pixel: what its tables and shortcuts must give. */
function byTheRules(r: number, g: number, b: number): string {
  const max = Math.max(r, g, b) / 255;
  const min = Math.min(r, g, b) / 255;
  const v = max;
  const s = max === 0 ? 0 : (max - min) / max;
  let h = 0;
  if (max !== min) {
    const [rn, gn, bn, dlt] = [r / 255, g / 255, b / 255, max - min];
    if (max === rn) h = 60 * (((gn - bn) / dlt) % 6);
    else if (max === gn) h = 60 * ((bn - rn) / dlt + 2);
    else h = 60 * ((rn - gn) / dlt + 4);
    if (h < 0) h += 360;
  }
  if (v < 0.18) return 'black';
  if (s < 0.15 && v > 0.8) return 'white';
  if (s < 0.18) return 'gray';
  if (h >= 10 && h < 45 && v < 0.55 && s > 0.25) return 'brown';
  if (h < 12 || h >= 340) return 'red';
  if (h < 40) return 'orange';
  if (h < 68) return 'yellow';
  if (h < 165) return 'green';
  if (h < 255) return 'blue';
  if (h < 295) return 'purple';
  return 'pink';
}

test('colorName gives every one of the 2^24 colours the name the rules give it', () => {
  let wrong = 0;
  let first = '';
  for (let r = 0; r < 256; r++)
    for (let g = 0; g < 256; g++)
      for (let b = 0; b < 256; b++) {
        const want = byTheRules(r, g, b);
        const got = colorName(r, g, b);
        if (got !== want && wrong++ === 0) first = `${r},${g},${b}: ${got}, the rules say ${want}`;
      }
  assert.equal(wrong, 0, `${wrong} colours named otherwise, the first ${first}`);
});
