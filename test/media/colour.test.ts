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
