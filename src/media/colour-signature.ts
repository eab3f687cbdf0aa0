// A person's colours as a small histogram, for telling two people apart where their boxes overlap (the
// tracker's appearance term, native/core/track/tracker.h): the upper body and the legs separately (a red
// coat over blue jeans is not blue over red), each a 4x4x4 RGB histogram of the middle of its part of the box,
// together SIGNATURE_DIM values summing to 1. Sampled on a grid of at most 12 x 12 pixels a part, so a frame
// of crowded people costs little next to its detection.
import type { RgbImage } from './rgb-image.js';

export const SIGNATURE_DIM = 128;
const PART = 64;
const GRID = 12;

/** Writes the signature of `box` ([x1, y1, x2, y2] in pixels) into out[offset, offset + SIGNATURE_DIM). */
export function colourSignature(image: RgbImage, box: readonly number[], out: Float32Array, offset = 0): void {
  out.fill(0, offset, offset + SIGNATURE_DIM);
  const [x1, y1, x2, y2] = box;
  const w = x2 - x1,
    h = y2 - y1;
  // The middle three fifths of the width (less background); the upper body from a tenth of the height to
  // half of it, the legs from half to nine tenths.
  const ax = Math.max(0, x1 + 0.2 * w),
    bx = Math.min(image.width, x2 - 0.2 * w);
  const parts = [
    [y1 + 0.1 * h, y1 + 0.5 * h],
    [y1 + 0.5 * h, y1 + 0.9 * h],
  ] as const;
  const d = image.data,
    iw = image.width;
  for (let p = 0; p < 2; p++) {
    const ay = Math.max(0, parts[p][0]),
      by = Math.min(image.height, parts[p][1]);
    const base = offset + p * PART;
    let n = 0;
    if (bx - ax >= 1 && by - ay >= 1) {
      const sx = (bx - ax) / GRID,
        sy = (by - ay) / GRID;
      for (let j = 0; j < GRID; j++) {
        const y = Math.min(image.height - 1, Math.floor(ay + (j + 0.5) * sy));
        for (let i = 0; i < GRID; i++) {
          const x = Math.min(iw - 1, Math.floor(ax + (i + 0.5) * sx));
          const o = (y * iw + x) * 3;
          out[base + (((d[o]! >> 6) << 4) | ((d[o + 1]! >> 6) << 2) | (d[o + 2]! >> 6))]! += 1;
          n++;
        }
      }
    }
    // Each part weighs half; a part outside the image spreads its half evenly (it tells nothing).
    if (n === 0) out.fill(0.5 / PART, base, base + PART);
    else for (let k = base; k < base + PART; k++) out[k] = out[k]! * (0.5 / n);
  }
}
