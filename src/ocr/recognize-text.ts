// PP-OCRv4 recognition of detected lines: each quad is rectified to a 48-pixel-high strip (tall strips are
// turned to horizontal), optionally turned half a turn by the angle classifier, batched with strips of
// similar aspect, and CTC-decoded. Character positions are kept as fractions of the strip's width.
import { Tensor } from '../inference/runtime.js';
import { type DecodedChar, ctcGreedy } from './ctc-decode.js';
import type { Point } from './geometry.js';
import type { OcrSession } from './ocr-models.js';
import { type StripInk, stripInk } from './ink-gaps.js';
import type { RgbImage } from '../media/rgb-image.js';
import { rotate180, warpQuad } from './resample.js';
import { LoopSlice } from '../base/loop-slice.js';

export const REC_HEIGHT = 48;
/**
 * PaddleOCR pads every batch to 320 px. Short strips read as well with less padding (same SROIE recall and
 * CER in `eval ocr`) and cost far less: the recogniser's time grows with the padded width.
 */
const REC_MIN_WIDTH = 64;
const REC_MAX_WIDTH = 3200;
const REC_BATCH = 8;
/**
 * Most input columns (strips x padded width) in one recognition run. The recogniser's CPU time per column
 * grows with the batch's size once its attention and activations outgrow the caches, so wide strips run in
 * small batches and a long line alone (docs/capacity.md, "OCR pages and batches").
 */
const REC_BATCH_COLUMNS = 1024;
/** Recognition runs of one page in flight at once (the runtime runs them on separate sessions). */
const REC_IN_FLIGHT = 2;
/** Widest / narrowest strip allowed in one batch. */
const REC_BATCH_SPREAD = 1.3;
const ANGLE_WIDTH = 192;
const ANGLE_BATCH = 16;
/** The classifier must be this sure before a line is turned over. */
const ANGLE_THRESHOLD = 0.9;
/** A line the classifier turned over is read the other way too when it reads worse than this. */
const RETRY_CONFIDENCE = 0.9;

export interface LineChar {
  text: string;
  /** Centre of the character along the line, 0 = the line's start, 1 = its end. */
  at: number;
  prob: number;
}

export interface RecognizedLine {
  /** tl, tr, br, bl in source pixels, oriented so that text runs from tl to tr. */
  corners: Point[];
  chars: LineChar[];
  /** Width / height of the rectified strip; character spacing is measured against it. */
  aspect: number;
  /** Blank column runs of the strip, to find word gaps the recogniser did not mark. */
  ink: StripInk;
  confidence: number;
  detScore: number;
  /** Turned half a turn by the angle classifier. */
  flipped: boolean;
}

export interface RecognizeOptions {
  useAngleClassifier: boolean;
  allowed: Uint8Array | null;
}

interface Strip {
  corners: Point[];
  image: RgbImage;
  detScore: number;
  flipped: boolean;
}

const dist = (a: Point, b: Point) => Math.hypot(a[0] - b[0], a[1] - b[1]);

/** Rectifies one quad to REC_HEIGHT x proportional width; tall quads are read as rotated 90 degrees. */
export function rectify(image: RgbImage, corners: Point[]): { corners: Point[]; image: RgbImage } {
  let [tl, tr, br, bl] = corners;
  let w = Math.max(dist(tl, tr), dist(bl, br));
  let h = Math.max(dist(tl, bl), dist(tr, br));
  if (h >= 1.5 * w) {
    // As np.rot90 in PaddleOCR: the right edge becomes the top.
    [tl, tr, br, bl] = [tr, br, bl, tl];
    [w, h] = [h, w];
  }
  const outW = Math.min(REC_MAX_WIDTH, Math.max(8, Math.ceil((REC_HEIGHT * w) / Math.max(h, 1))));
  const quad = [tl, tr, br, bl];
  return { corners: quad, image: warpQuad(image, quad, outW, REC_HEIGHT) };
}

/**
 * Writes columns [x0, x0 + width) of a strip into an NCHW batch slot, BGR, scaled to [-1, 1]; the rest of
 * the slot stays 0 (padding).
 */
function fillSlot(dst: Float32Array, slot: number, batchW: number, img: RgbImage, x0 = 0, width = img.width): void {
  const plane = REC_HEIGHT * batchW;
  const base = slot * 3 * plane;
  for (let y = 0; y < REC_HEIGHT; y++) {
    for (let x = 0; x < width; x++) {
      const src = (y * img.width + x0 + x) * 3;
      for (let c = 0; c < 3; c++) dst[base + c * plane + y * batchW + x] = img.data[src + 2 - c] / 127.5 - 1;
    }
  }
}

/**
 * The classifier was trained on strips squashed to 48 x 192, but squashing a long line makes it guess; a
 * line has one orientation throughout, so up to three unsquashed 192-px windows of it vote instead.
 */
async function classifyAngles(session: OcrSession, strips: Strip[]): Promise<void> {
  const windows: { strip: number; x0: number; width: number }[] = [];
  strips.forEach((st, i) => {
    const w = st.image.width;
    if (w <= ANGLE_WIDTH) windows.push({ strip: i, x0: 0, width: w });
    else {
      const n = Math.min(3, Math.floor(w / ANGLE_WIDTH));
      for (let k = 0; k < n; k++)
        windows.push({ strip: i, x0: Math.round(((w - ANGLE_WIDTH) * (k + 0.5)) / n), width: ANGLE_WIDTH });
    }
  });
  const votes = new Float32Array(strips.length);
  const counts = new Uint8Array(strips.length);
  for (let s = 0; s < windows.length; s += ANGLE_BATCH) {
    const batch = windows.slice(s, s + ANGLE_BATCH);
    const input = new Float32Array(batch.length * 3 * REC_HEIGHT * ANGLE_WIDTH);
    batch.forEach((w, i) => fillSlot(input, i, ANGLE_WIDTH, strips[w.strip].image, w.x0, w.width));
    const out = await session.run({
      [session.inputNames[0]]: new Tensor('float32', input, [batch.length, 3, REC_HEIGHT, ANGLE_WIDTH]),
    });
    const probs = out[session.outputNames[0]].data as Float32Array;
    batch.forEach((w, i) => {
      votes[w.strip] += probs[i * 2 + 1];
      counts[w.strip]++;
    });
  }
  strips.forEach((st, i) => {
    if (counts[i] > 0 && votes[i] / counts[i] > ANGLE_THRESHOLD) {
      st.image = rotate180(st.image);
      st.flipped = true;
      const [tl, tr, br, bl] = st.corners;
      st.corners = [br, bl, tl, tr];
    }
  });
}

async function recognizeStrips(
  rec: OcrSession,
  charset: string[],
  strips: Strip[],
  allowed: Uint8Array | null,
): Promise<RecognizedLine[]> {
  // Similar aspects share a batch, so little of each batch is padding.
  const order = strips.map((_, i) => i).sort((a, b) => strips[a].image.width - strips[b].image.width);
  const results: RecognizedLine[] = new Array(strips.length);
  const batches: number[][] = [];
  for (let s = 0; s < order.length; ) {
    // A batch ends at REC_BATCH strips, where the next strip is much wider (its padding would dominate), or
    // at REC_BATCH_COLUMNS.
    let e = s + 1;
    while (
      e < order.length &&
      e - s < REC_BATCH &&
      strips[order[e]].image.width <= REC_BATCH_SPREAD * strips[order[s]].image.width &&
      (e - s + 1) * Math.max(REC_MIN_WIDTH, strips[order[e]].image.width) <= REC_BATCH_COLUMNS
    )
      e++;
    batches.push(order.slice(s, e));
    s = e;
  }
  const slice = new LoopSlice();
  const runBatch = async (idx: number[]) => {
    const maxW = Math.max(...idx.map((i) => strips[i].image.width));
    const batchW = Math.ceil(Math.max(REC_MIN_WIDTH, maxW) / 8) * 8;
    const input = new Float32Array(idx.length * 3 * REC_HEIGHT * batchW);
    idx.forEach((i, slot) => fillSlot(input, slot, batchW, strips[i].image));
    const out = await rec.run({
      [rec.inputNames[0]]: new Tensor('float32', input, [idx.length, 3, REC_HEIGHT, batchW]),
    });
    const t = out[rec.outputNames[0]];
    const [, steps, classes] = t.dims as number[];
    const data = t.data as Float32Array;
    await slice.maybeYield();
    idx.forEach((i, slot) => {
      const strip = strips[i];
      const decoded = ctcGreedy(data, slot * steps * classes, steps, classes, charset, allowed);
      // A time step covers batchW / steps input columns; positions are relative to the strip's own width.
      const stepW = batchW / steps;
      const chars = decoded.map(
        (d: DecodedChar): LineChar => ({
          text: d.text,
          at: Math.min(1, (((d.first + d.last) / 2 + 0.5) * stepW) / strip.image.width),
          prob: d.prob,
        }),
      );
      const confidence = chars.length > 0 ? chars.reduce((a, c) => a + c.prob, 0) / chars.length : 0;
      results[i] = {
        corners: strip.corners,
        chars,
        aspect: strip.image.width / REC_HEIGHT,
        ink: stripInk(strip.image),
        confidence,
        detScore: strip.detScore,
        flipped: strip.flipped,
      };
    });
  };
  // Widest first (the longest runs start early), REC_IN_FLIGHT at a time: the runtime runs them on as many
  // sessions side by side, and one page never fills the model's queue.
  let next = batches.length - 1;
  await Promise.all(
    Array.from({ length: Math.min(REC_IN_FLIGHT, batches.length) }, async () => {
      while (next >= 0) await runBatch(batches[next--]);
    }),
  );
  return results;
}

export async function recognizeLines(
  sessions: { recognition: OcrSession; angle: OcrSession },
  charset: string[],
  image: RgbImage,
  lines: { corners: Point[]; score: number }[],
  opts: RecognizeOptions,
): Promise<RecognizedLine[]> {
  // Rectifying every line of a page in one go held the event loop for a long stretch on a receipt
  // (docs/capacity.md, "OCR pages and batches"); other requests get a turn every SLICE_MS.
  const strips: Strip[] = [];
  const slice = new LoopSlice();
  for (const l of lines) {
    const r = rectify(image, l.corners);
    strips.push({ corners: r.corners, image: r.image, detScore: l.score, flipped: false });
    await slice.maybeYield();
  }
  if (opts.useAngleClassifier && strips.length > 0) await classifyAngles(sessions.angle, strips);
  const results = await recognizeStrips(sessions.recognition, charset, strips, opts.allowed);
  // The classifier is sometimes sure and wrong; a turned line that reads poorly is read the other way too,
  // and the more confident reading wins.
  const doubtful = strips.map((_, i) => i).filter((i) => strips[i].flipped && results[i].confidence < RETRY_CONFIDENCE);
  if (doubtful.length > 0) {
    const unturned = doubtful.map((i): Strip => {
      const [tl, tr, br, bl] = strips[i].corners;
      return { ...strips[i], image: rotate180(strips[i].image), corners: [br, bl, tl, tr], flipped: false };
    });
    const again = await recognizeStrips(sessions.recognition, charset, unturned, opts.allowed);
    doubtful.forEach((i, k) => {
      if (again[k].confidence > results[i].confidence) results[i] = again[k];
    });
  }
  return results;
}
