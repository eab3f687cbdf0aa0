// Colour names for pixels: the named colour of one RGB value (hue, saturation and value rules) and the most
// common named colour in the middle of a box. Detection's `attributes.color`, describe's main colours and the
// multimodal embedder's colour words all use these, so one object gets one colour name everywhere.
import type { RgbImage } from './rgb-image.js';

const clampTo = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

const NAMED: { name: string; test: (h: number, s: number, v: number) => boolean }[] = [
  { name: 'black', test: (_h, _s, v) => v < 0.18 },
  { name: 'white', test: (_h, s, v) => s < 0.15 && v > 0.8 },
  { name: 'gray', test: (_h, s) => s < 0.18 },
  { name: 'brown', test: (h, s, v) => h >= 10 && h < 45 && v < 0.55 && s > 0.25 },
  { name: 'red', test: (h) => h < 12 || h >= 340 },
  { name: 'orange', test: (h) => h < 40 },
  { name: 'yellow', test: (h) => h < 68 },
  { name: 'green', test: (h) => h < 165 },
  { name: 'blue', test: (h) => h < 255 },
  { name: 'purple', test: (h) => h < 295 },
  { name: 'pink', test: () => true },
];

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
  const votes = new Map<string, number>();
  const d = image.data;
  for (let y = ay; y < by; y += step) {
    for (let x = ax; x < bx; x += step) {
      const o = (y * image.width + x) * 3;
      const name = colorName(d[o], d[o + 1], d[o + 2]);
      votes.set(name, (votes.get(name) ?? 0) + 1);
    }
  }
  let best: string | undefined;
  let most = 0;
  for (const [k, v] of votes) if (v > most) { most = v; best = k; }
  return best;
}

export function colorName(r: number, g: number, b: number): string {
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
  return NAMED.find((c) => c.test(h, s, v))!.name;
}
