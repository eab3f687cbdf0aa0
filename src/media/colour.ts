// Colour names for pixels: the named colour of one RGB value (hue, saturation and value rules) and the most
// common named colour in the middle of a box. Detection's `attributes.color`, describe's main colours and the
// multimodal embedder's colour words all use these, so one object gets one colour name everywhere.
import { dominantColourIndicesAsync, type ColourGrid } from '../native/image.js';
import type { RgbImage } from './rgb-image.js';

const clampTo = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));

// The names in the order their rules are tried (colourIndex): the first rule a pixel meets names it.
export const COLOUR_NAMES = [
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
 * mostly object rather than background), sampled on a grid (colourGrid).
 */
export function dominantColor(image: RgbImage, box: readonly number[]): string | undefined {
  const grid = colourGrid(image, box);
  if (!grid) return undefined;
  // Votes per name, and the order names were first seen: a tie goes to the name seen first. Counting in a
  // small array instead of a Map of strings keeps this off a detect or image search's main-thread bill.
  const votes = new Int32Array(COLOUR_NAMES.length);
  const seen: number[] = [];
  const d = image.data;
  const { x0, x1, y0, y1, step } = grid;
  for (let y = y0; y < y1; y += step) {
    for (let x = x0; x < x1; x += step) {
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
      best = COLOUR_NAMES[k];
    }
  return best;
}

/**
 * dominantColor for many boxes of one image, on the libuv pool (the addon's copy of the rules, the same
 * names): for a detect's objects, whose colours were the largest part of the serving thread's time a photo
 * in JavaScript (docs/capacity.md, "Colour names"). Do not write to the image until it settles.
 */
export async function dominantColors(
  image: RgbImage,
  boxes: readonly (readonly number[])[],
): Promise<(string | undefined)[]> {
  const grids = boxes.map((b) => colourGrid(image, b));
  const sampled = grids.filter((g): g is ColourGrid => g !== undefined);
  if (sampled.length === 0) return boxes.map(() => undefined);
  const names = await dominantColourIndicesAsync(image, sampled);
  let i = 0;
  return grids.map((g) => (g ? COLOUR_NAMES[names[i++]!] : undefined));
}

/**
 * The pixels a box's colour is sampled from: the middle 60% of each side, every step-th column and row, the
 * step chosen for ~1600 pixels (up to four times that: it is a whole number). Undefined for a box under 2
 * pixels a side or not finite.
 */
function colourGrid(image: RgbImage, box: readonly number[]): ColourGrid | undefined {
  const [x1, y1, x2, y2] = box as [number, number, number, number];
  const w = x2 - x1;
  const h = y2 - y1;
  if (!(w >= 2 && h >= 2 && Number.isFinite(w) && Number.isFinite(h))) return undefined;
  const ax = Math.floor(clampTo(x1 + 0.2 * w, 0, image.width - 1));
  const bx = Math.ceil(clampTo(x2 - 0.2 * w, ax + 1, image.width));
  const ay = Math.floor(clampTo(y1 + 0.2 * h, 0, image.height - 1));
  const by = Math.ceil(clampTo(y2 - 0.2 * h, ay + 1, image.height));
  const step = Math.max(1, Math.floor(Math.sqrt(((bx - ax) * (by - ay)) / 1600)));
  // NaN from a box with an infinite side: nothing to sample.
  if (![ax, bx, ay, by, step].every(Number.isFinite)) return undefined;
  return { x0: ax, x1: bx, y0: ay, y1: by, step };
}

export function colorName(r: number, g: number, b: number): string {
  return COLOUR_NAMES[colourIndex(r, g, b)];
}

/** Hue, saturation and value rules, tried in COLOUR_NAMES' order. */
function colourIndex(r: number, g: number, b: number): number {
  const hi = r > g ? (r > b ? r : b) : g > b ? g : b;
  const lo = r < g ? (r < b ? r : b) : g < b ? g : b;
  const sv = BY_VALUE_AND_SATURATION[(hi << 8) | lo]!;
  if (sv < HUE_DECIDES) return sv;
  // The hue, by the same arithmetic as the rules' (max is r's, g's or b's own /255, so the comparisons are
  // the integers'). The red sector's `% 6` of the HSV formula is left out: its argument lies in [-1, 1], where
  // the remainder is the number itself, and it was a slow library call.
  const max = hi / 255;
  const dlt = max - lo / 255;
  let h: number;
  if (hi === r) h = 60 * ((g / 255 - b / 255) / dlt);
  else if (hi === g) h = 60 * ((b / 255 - r / 255) / dlt + 2);
  else h = 60 * ((r / 255 - g / 255) / dlt + 4);
  if (h < 0) h += 360;
  if (sv === HUE_DECIDES_BROWN_POSSIBLE && h >= 10 && h < 45) return 3; // brown
  if (h < 12 || h >= 340) return 4; // red
  if (h < 40) return 5; // orange
  if (h < 68) return 6; // yellow
  if (h < 165) return 7; // green
  if (h < 255) return 8; // blue
  if (h < 295) return 9; // purple
  return 10; // pink
}

/** A saturated pixel: its hue names it; brown is possible (value < 0.55, saturation > 0.25) or not. */
const HUE_DECIDES = 254;
const HUE_DECIDES_BROWN_POSSIBLE = 255;

/**
 * What value and saturation alone decide, by a pixel's largest and smallest channel (`max << 8 | min`):
 * black, white or gray (their COLOUR_NAMES index), else which hue rules apply. The rules in full, per pixel:
 *   v = max / 255, s = (max - min) / 255 / v (0 when v is 0), h the HSV hue in degrees;
 *   black v < 0.18; white s < 0.15 and v > 0.8; gray s < 0.18; brown 10 <= h < 45, v < 0.55 and s > 0.25;
 *   red h < 12 or h >= 340; orange h < 40; yellow h < 68; green h < 165; blue h < 255; purple h < 295; pink.
 * Why a table: describe, the multimodal embedder and the moment index still name pixels on the serving
 * thread (a detect's colours run in the addon), and the value and saturation rules were most of each pixel's
 * cost (docs/capacity.md, "Colour names"). Built with the rules' own arithmetic, so every pixel gets the
 * name the rules give it (test/media/colour.test.ts checks all 2^24).
 */
const BY_VALUE_AND_SATURATION = (() => {
  const t = new Uint8Array(1 << 16);
  for (let hi = 0; hi < 256; hi++)
    for (let lo = 0; lo <= hi; lo++) {
      const max = hi / 255;
      const min = lo / 255;
      const v = max;
      const s = max === 0 ? 0 : (max - min) / max;
      t[(hi << 8) | lo] =
        v < 0.18
          ? 0 // black
          : s < 0.15 && v > 0.8
            ? 1 // white
            : s < 0.18
              ? 2 // gray
              : v < 0.55 && s > 0.25
                ? HUE_DECIDES_BROWN_POSSIBLE
                : HUE_DECIDES;
    }
  return t;
})();
