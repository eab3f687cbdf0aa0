// Colour names for pixels: the named colour of one RGB value (hue, saturation and value rules) and the most
// common named colour in the middle of a box. Detection's `attributes.color`, describe's main colours and the
// multimodal embedder's colour words all use these, so one object gets one colour name everywhere.
import type { RgbImage } from './rgb-image.js';

const clampTo = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

// The names in the order their rules are tried (colourIndex): the first rule a pixel meets names it.
const NAMES = [
  'black',
  'white',
  'gray',
  'brown',
  'red',
  'orange',
  'yellow',
  'green',
  'blue',
  'purple',
  'pink',
] as const;

/**
 * The most common named colour in the central part of a box (the middle 60% of each side, which is
 * mostly object rather than background), sampled on a grid of at most ~1600 pixels.
 */
export function dominantColor(image: RgbImage, box: readonly number[]): string | undefined {
  const [x1, y1, x2, y2] = box;
  const w = x2 - x1;
  const h = y2 - y1;
  if (w < 2 || h < 2) return undefined;
  const ax = Math.floor(clampTo(x1 + 0.2 * w, 0, image.width - 1));
  const bx = Math.ceil(clampTo(x2 - 0.2 * w, ax + 1, image.width));
  const ay = Math.floor(clampTo(y1 + 0.2 * h, 0, image.height - 1));
  const by = Math.ceil(clampTo(y2 - 0.2 * h, ay + 1, image.height));
  const step = Math.max(1, Math.floor(Math.sqrt(((bx - ax) * (by - ay)) / 1600)));
  // Votes per name, and the order names were first seen: a tie goes to the name seen first. Counting in a
  // small array instead of a Map of strings keeps this off a detect or image search's main-thread bill
  // (each box samples up to ~1600 pixels).
  const votes = new Int32Array(NAMES.length);
  const seen: number[] = [];
  const d = image.data;
  for (let y = ay; y < by; y += step) {
    for (let x = ax; x < bx; x += step) {
      const o = (y * image.width + x) * 3;
      const k = colourIndex(d[o]!, d[o + 1]!, d[o + 2]!);
      if (votes[k]++ === 0) seen.push(k);
    }
  }
  let best: string | undefined;
  let most = 0;
  for (const k of seen)
    if (votes[k]! > most) {
      most = votes[k]!;
      best = NAMES[k];
    }
  return best;
}

export function colorName(r: number, g: number, b: number): string {
  return NAMES[colourIndex(r, g, b)];
}

/** Hue, saturation and value rules, tried in NAMES' order. */
function colourIndex(r: number, g: number, b: number): number {
  const max = Math.max(r, g, b) / 255;
  const min = Math.min(r, g, b) / 255;
  const v = max;
  const s = max === 0 ? 0 : (max - min) / max;
  let h = 0;
  if (max !== min) {
    const rn = r / 255,
      gn = g / 255,
      bn = b / 255,
      dlt = max - min;
    if (max === rn) h = 60 * (((gn - bn) / dlt) % 6);
    else if (max === gn) h = 60 * ((bn - rn) / dlt + 2);
    else h = 60 * ((rn - gn) / dlt + 4);
    if (h < 0) h += 360;
  }
  if (v < 0.18) return 0; // black
  if (s < 0.15 && v > 0.8) return 1; // white
  if (s < 0.18) return 2; // gray
  if (h >= 10 && h < 45 && v < 0.55 && s > 0.25) return 3; // brown
  if (h < 12 || h >= 340) return 4; // red
  if (h < 40) return 5; // orange
  if (h < 68) return 6; // yellow
  if (h < 165) return 7; // green
  if (h < 255) return 8; // blue
  if (h < 295) return 9; // purple
  return 10; // pink
}
