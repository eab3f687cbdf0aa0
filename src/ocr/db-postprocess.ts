// DB (Differentiable Binarization) post-processing as PP-OCR does it: binarise the probability map, take
// each connected region, score its min-area box on the map, grow ("unclip") the box back to the full text
// extent (the model is trained to predict a shrunk kernel), and keep a rotated rectangle.
import { type Point, type RotatedRect, insideConvex, minAreaRect, rectCorners } from './geometry.js';
import { LoopSlice } from '../base/loop-slice.js';

export interface DbParams {
  /** Probability above which a pixel is text. */
  threshold: number;
  /** Mean probability inside a box below which the box is dropped. */
  boxThreshold: number;
  /** Area * ratio / perimeter is how far a box grows on every side. */
  unclipRatio: number;
  /** Shorter side (map pixels) below which a box is noise. */
  minSize: number;
  maxCandidates: number;
}

export const DB_DEFAULTS: DbParams = {
  threshold: 0.3,
  boxThreshold: 0.6,
  unclipRatio: 1.5,
  minSize: 3,
  maxCandidates: 1000,
};

export interface TextQuad {
  /** tl, tr, br, bl in map pixels (continuous coordinates). */
  corners: Point[];
  score: number;
}

/** Async only to give the event loop a turn between regions (a page map is ~1M pixels, tens of ms of work). */
export async function dbPostprocess(
  prob: Float32Array,
  width: number,
  height: number,
  params: DbParams = DB_DEFAULTS,
): Promise<TextQuad[]> {
  const slice = new LoopSlice();
  const labels = new Int32Array(width * height);
  const stack: number[] = [];
  const quads: TextQuad[] = [];
  let regions = 0;
  for (let start = 0; start < labels.length && regions < params.maxCandidates; start++) {
    if (labels[start] !== 0 || prob[start] <= params.threshold) continue;
    await slice.maybeYield();
    regions++;
    // 8-connected flood fill; the region's boundary pixels are enough for its hull.
    const boundary: Point[] = [];
    labels[start] = regions;
    stack.push(start);
    while (stack.length > 0) {
      const i = stack.pop()!;
      const x = i % width;
      const y = (i - x) / width;
      let edge = false;
      for (let dy = -1; dy <= 1; dy++) {
        const ny = y + dy;
        if (ny < 0 || ny >= height) {
          edge = true;
          continue;
        }
        for (let dx = -1; dx <= 1; dx++) {
          if (dx === 0 && dy === 0) continue;
          const nx = x + dx;
          if (nx < 0 || nx >= width) {
            edge = true;
            continue;
          }
          const j = ny * width + nx;
          if (prob[j] <= params.threshold) {
            edge = true;
            continue;
          }
          if (labels[j] === 0) {
            labels[j] = regions;
            stack.push(j);
          }
        }
      }
      if (edge) boundary.push([x + 0.5, y + 0.5]);
    }
    const quad = regionToQuad(boundary, prob, width, height, params);
    if (quad) quads.push(quad);
  }
  return quads;
}

function regionToQuad(
  boundary: Point[],
  prob: Float32Array,
  width: number,
  height: number,
  p: DbParams,
): TextQuad | null {
  if (boundary.length < 2) return null;
  const rect = minAreaRect(boundary);
  if (Math.min(rect.width, rect.height) < p.minSize) return null;
  const corners = rectCorners(rect);
  const score = boxScore(prob, width, height, corners);
  if (score < p.boxThreshold) return null;
  const grown = unclip(rect, p.unclipRatio);
  if (Math.min(grown.width, grown.height) < p.minSize + 2) return null;
  const clipped = rectCorners(grown).map(
    ([x, y]): Point => [Math.min(Math.max(x, 0), width), Math.min(Math.max(y, 0), height)],
  );
  return { corners: clipped, score };
}

/** Mean probability of the pixels whose centres fall inside the box ("fast" score of PP-OCR). */
function boxScore(prob: Float32Array, width: number, height: number, corners: Point[]): number {
  let x1 = Infinity,
    y1 = Infinity,
    x2 = -Infinity,
    y2 = -Infinity;
  for (const [x, y] of corners) {
    x1 = Math.min(x1, x);
    y1 = Math.min(y1, y);
    x2 = Math.max(x2, x);
    y2 = Math.max(y2, y);
  }
  const xa = Math.max(0, Math.floor(x1)),
    xb = Math.min(width - 1, Math.ceil(x2));
  const ya = Math.max(0, Math.floor(y1)),
    yb = Math.min(height - 1, Math.ceil(y2));
  let sum = 0,
    n = 0;
  for (let y = ya; y <= yb; y++) {
    for (let x = xa; x <= xb; x++) {
      if (!insideConvex(corners, x + 0.5, y + 0.5)) continue;
      sum += prob[y * width + x];
      n++;
    }
  }
  // A box one pixel thin may contain no centre; its centre pixel stands in.
  if (n === 0) {
    const cx = Math.min(width - 1, Math.max(0, Math.floor((x1 + x2) / 2)));
    const cy = Math.min(height - 1, Math.max(0, Math.floor((y1 + y2) / 2)));
    return prob[cy * width + cx];
  }
  return sum / n;
}

/**
 * Offsetting a w x h rectangle outward by d (pyclipper, round joins) and taking the min-area rectangle of
 * the result gives exactly (w + 2d) x (h + 2d), so the polygon clipper is not needed for rectangles.
 */
function unclip(rect: RotatedRect, ratio: number): RotatedRect {
  const perimeter = 2 * (rect.width + rect.height);
  const d = perimeter > 0 ? (rect.width * rect.height * ratio) / perimeter : 0;
  return { ...rect, width: rect.width + 2 * d, height: rect.height + 2 * d };
}
