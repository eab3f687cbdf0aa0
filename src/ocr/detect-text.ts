// PP-OCRv4 text detection: resize (longest side capped, both sides multiples of 32), normalise as PaddleOCR
// trained it (BGR, ImageNet mean/std), run the DB net, post-process, and map boxes back to source pixels.
import { Tensor } from '../inference/runtime.js';
import { DB_DEFAULTS, type DbParams, dbPostprocess } from './db-postprocess.js';
import type { Point } from './geometry.js';
import type { OcrSession } from './ocr-models.js';
import type { RgbImage } from '../media/rgb-image.js';
import { resizeRgb } from './resample.js';
import { LoopSlice } from '../base/loop-slice.js';

export interface DetectedLine {
  /** tl, tr, br, bl in source pixels. */
  corners: Point[];
  score: number;
}

export interface DetectOptions {
  /** Longest side the detector sees; larger images are scaled down (a multiple of 32). */
  maxSide: number;
  db: DbParams;
}

export const DETECT_DEFAULTS: DetectOptions = { maxSide: 960, db: DB_DEFAULTS };

const MEAN = [0.485, 0.456, 0.406];
const STD = [0.229, 0.224, 0.225];

/**
 * Detector input size as PaddleOCR's: longest side capped at maxSide, never enlarged, each side a multiple of
 * 32. (Keeping a larger short side for tall receipts, or a pixel budget instead of a side cap, read no better
 * in `eval ocr` and cost more.)
 */
export function detectorSize(width: number, height: number, maxSide: number): { width: number; height: number } {
  const ratio = Math.min(1, maxSide / Math.max(width, height));
  const round32 = (v: number) => Math.max(32, Math.round(v / 32) * 32);
  return { width: round32(width * ratio), height: round32(height * ratio) };
}

export async function detectText(
  session: OcrSession,
  image: RgbImage,
  opts: DetectOptions = DETECT_DEFAULTS,
): Promise<DetectedLine[]> {
  const size = detectorSize(image.width, image.height, opts.maxSide);
  const resized = await resizeRgb(image, size.width, size.height);
  const plane = size.width * size.height;
  const input = new Float32Array(3 * plane);
  const px = resized.data;
  const slice = new LoopSlice();
  for (let row = 0; row < size.height; row++) {
    for (let i = row * size.width, end = i + size.width; i < end; i++) {
      // Channel 0 of the tensor is blue: PaddleOCR feeds OpenCV's BGR order.
      for (let c = 0; c < 3; c++) {
        const v = px[i * 3 + (2 - c)] / 255;
        input[c * plane + i] = (v - MEAN[c]) / STD[c];
      }
    }
    await slice.maybeYield();
  }
  const feeds = { [session.inputNames[0]]: new Tensor('float32', input, [1, 3, size.height, size.width]) };
  const out = await session.run(feeds);
  const map = out[session.outputNames[0]];
  const [, , mh, mw] = map.dims as number[];
  const quads = await dbPostprocess(map.data as Float32Array, mw, mh, opts.db);
  const sx = image.width / mw;
  const sy = image.height / mh;
  return quads.map((q) => ({ corners: q.corners.map(([x, y]): Point => [x * sx, y * sy]), score: q.score }));
}
