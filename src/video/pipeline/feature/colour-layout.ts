// The feature step's descriptor until the vectors module's embedding models exist: "colour-layout-v1", a
// real appearance vector computed from the target's pixels, cheap enough for every target of every frame.
//
// Each region is cropped and stretched to 32 x 64 (w x h, people are tall) in one native batch
// (src/native/image.ts cropResize), then:
//  - layout (96 values): the mean RGB of each 8 x 8 cell, a 4 x 8 grid, so "dark legs under a red coat"
//    differs from "red legs under a dark coat"; L2-normalised.
//  - colour (64 values): a joint RGB histogram with 4 levels per channel over all 2048 samples, square-
//    rooted (Hellinger form: the square roots of a distribution already have unit L2 norm).
// Both halves are scaled by 1/sqrt(2) and concatenated: a unit vector of 160 dims, so the cosine of two
// descriptors is their dot product, as with the embedding models later. A track's digest is
// `dim=160;norm=<|mean vector|>`: 1.0 when the target looked the same in every frame, lower as it varies.
import type { RgbImage } from '../../../media/rgb-image.js';
import { cropResize } from '../../../native/image.js';

export const DESCRIPTOR_MODEL = 'colour-layout-v1';
export const DESCRIPTOR_DIM = 160;

const W = 32;
const H = 64;
const CELL = 8;
const LAYOUT = (W / CELL) * (H / CELL) * 3; // 96
const LEVELS = 4;

/** One descriptor per box ([x1, y1, x2, y2] source pixels; boxes past the frame edge repeat edge pixels). */
export function describeRegions(image: RgbImage, boxes: ReadonlyArray<readonly number[]>): Float32Array[] {
  const usable = boxes.map((b) => (b[2] > b[0] && b[3] > b[1] ? b : [b[0], b[1], b[0] + 1, b[1] + 1]));
  if (usable.length === 0) return [];
  // NHWC keeps each pixel's three channels together, which is what both halves read.
  const { tensor } = cropResize(image, usable, { width: W, height: H, layout: 'nhwc', scale: 1 / 255 });
  const per = W * H * 3;
  const out: Float32Array[] = [];
  for (let n = 0; n < usable.length; n++) {
    const px = tensor.subarray(n * per, (n + 1) * per);
    const v = new Float32Array(DESCRIPTOR_DIM);
    const hist = new Float32Array(LEVELS ** 3);
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const o = (y * W + x) * 3;
        const r = px[o],
          g = px[o + 1],
          b = px[o + 2];
        const cell = (Math.floor(y / CELL) * (W / CELL) + Math.floor(x / CELL)) * 3;
        v[cell] += r;
        v[cell + 1] += g;
        v[cell + 2] += b;
        const q = (c: number) => Math.min(LEVELS - 1, Math.floor(c * LEVELS));
        hist[(q(r) * LEVELS + q(g)) * LEVELS + q(b)] += 1;
      }
    }
    let layoutNorm = 0;
    for (let i = 0; i < LAYOUT; i++) {
      v[i] /= CELL * CELL;
      layoutNorm += v[i] * v[i];
    }
    layoutNorm = Math.sqrt(layoutNorm);
    const half = Math.SQRT1_2;
    // An all-black crop has no layout direction; its layout half stays zero and the histogram carries it.
    for (let i = 0; i < LAYOUT; i++) v[i] = layoutNorm > 0 ? (v[i] / layoutNorm) * half : 0;
    for (let i = 0; i < hist.length; i++) v[LAYOUT + i] = Math.sqrt(hist[i] / (W * H)) * half;
    out.push(v);
  }
  return out;
}

export function vectorNorm(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += v[i] * v[i];
  return Math.sqrt(s);
}

/** `dim=<int>;norm=<decimal>`: the vector's length and its L2 norm to 4 decimals. */
export function featureDigest(v: ArrayLike<number>): string {
  return `dim=${v.length};norm=${vectorNorm(v).toFixed(4)}`;
}
