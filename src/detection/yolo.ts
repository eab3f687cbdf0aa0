// Decoder for bring-your-own YOLO-family ONNX detectors, plus the unletterbox mapping and NMS they need.
// Output layouts (B = 1):
//   yolov5       [1, N, 5+C]  cx, cy, w, h, objectness, C class scores (score = obj * cls)
//   yolov8       [1, 4+C, N]  cx, cy, w, h, C class scores (YOLOv8 / YOLOv11; channels first)
//   yolov8-t     [1, N, 4+C]  the same, transposed by some exporters
//   xyxy-score-class [1, N, 6] end-to-end exports with NMS inside (YOLOv10, YOLO26 end2end, CenterNet)
//   yolox        [1, N, 5+C]  YOLOX's raw grid: per cell of every stride (8, 16, 32 by default), x, y offsets in
//                             cells, log w, log h, objectness, C class scores; N = the number of cells
//   rtdetr       [1, N, 4+C]  DETR-style queries: cx, cy, w, h normalised to 0..1, C class logits (or
//                             probabilities; told apart by their range); N queries, not a grid
// yolov5 and yolox share a shape, as do yolov8-t and rtdetr: the input size tells them apart (a grid of one
// box per cell is YOLOX, three per cell YOLOv5; a count that is no grid at all is a query set).
// Boxes come out in model-input pixels; unletterbox() maps them back to the source image.

export type YoloLayout = 'yolov5' | 'yolov8' | 'yolov8-t' | 'xyxy-score-class' | 'yolox' | 'rtdetr';
export const YOLO_LAYOUTS: readonly YoloLayout[] = [
  'yolov5',
  'yolov8',
  'yolov8-t',
  'xyxy-score-class',
  'yolox',
  'rtdetr',
];
export const DEFAULT_STRIDES: readonly number[] = [8, 16, 32];

/** The model input's size, which grid layouts need to place their cells and DETR layouts to scale boxes. */
export interface InputSize {
  width: number;
  height: number;
}

/** Cells of a feature pyramid over the input: sum over strides of (H / s) * (W / s). */
export function gridCells(input: InputSize, strides: readonly number[] = DEFAULT_STRIDES): number {
  return strides.reduce((n, s) => n + Math.ceil(input.height / s) * Math.ceil(input.width / s), 0);
}

export interface RawBox {
  /** [x1, y1, x2, y2] */
  box: [number, number, number, number];
  score: number;
  classId: number;
}

/** Where the source sits in the model input (for letterbox, what src/native/image.ts's letterbox reports). */
export interface Letterbox {
  /** Model-input pixels per source pixel. */
  scale: number;
  padX: number;
  padY: number;
  /** Size of the resized image inside the model input. */
  width: number;
  height: number;
}

/** Model-input box -> source-image box, clipped to the image. */
export function unletterbox(
  b: [number, number, number, number],
  lb: Letterbox,
  srcW: number,
  srcH: number,
): [number, number, number, number] {
  const sx = lb.width / srcW;
  const sy = lb.height / srcH;
  return [
    clamp((b[0] - lb.padX) / sx, 0, srcW),
    clamp((b[1] - lb.padY) / sy, 0, srcH),
    clamp((b[2] - lb.padX) / sx, 0, srcW),
    clamp((b[3] - lb.padY) / sy, 0, srcH),
  ];
}

export function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

/**
 * Picks the layout from the output shape and the class count (ambiguous square shapes need the manifest).
 * With the input size, [1, N, 5+C] is YOLOX when N is one box per grid cell, and [1, N, 4+C] is a DETR query
 * set when N is no grid count; without it they are read as YOLOv5 and transposed YOLOv8.
 */
export function detectLayout(
  dims: readonly number[],
  numClasses: number,
  input?: InputSize,
  strides: readonly number[] = DEFAULT_STRIDES,
): YoloLayout {
  if (dims.length !== 3) throw new Error(`expected a [1, a, b] detector output, got [${dims.join(', ')}]`);
  const [, a, b] = dims;
  if (b === 6 && numClasses !== 2 && a !== 6) return 'xyxy-score-class';
  if (a === 4 + numClasses && b !== 4 + numClasses) return 'yolov8';
  const cells = input ? gridCells(input, strides) : undefined;
  if (b === 5 + numClasses) return cells !== undefined && a === cells ? 'yolox' : 'yolov5';
  if (b === 4 + numClasses) return cells !== undefined && a !== cells && a !== 3 * cells ? 'rtdetr' : 'yolov8-t';
  throw new Error(`output [${dims.join(', ')}] matches no YOLO layout for ${numClasses} classes`);
}

/**
 * The class count an output implies when nothing names the classes: channels-first [1, 4+C, N] when the
 * feature axis is the shorter, an end-to-end [1, N, 6] says nothing (undefined), rows [1, N, F] are 5+C for a
 * grid of one or three boxes per cell and 4+C otherwise.
 */
export function impliedClassCount(
  dims: readonly (number | string | null)[],
  input?: InputSize,
  strides: readonly number[] = DEFAULT_STRIDES,
): number | undefined {
  if (dims.length !== 3 || typeof dims[1] !== 'number' || typeof dims[2] !== 'number') return undefined;
  const [, a, b] = dims as number[];
  if (a < b) return a > 4 ? a - 4 : undefined;
  if (b === 6) return undefined;
  const cells = input ? gridCells(input, strides) : undefined;
  if (cells !== undefined && (a === cells || a === 3 * cells)) return b > 5 ? b - 5 : undefined;
  return b > 4 ? b - 4 : undefined;
}

/** The tensor a session worker answers with when it decoded the output itself (RunOptions.decode): one row of
 * x1, y1, x2, y2, score, class id per box, as float64 so every value is the one decodeYolo computed. */
export const DECODED_BOXES = 'sightflow:decoded-boxes';

export function packBoxes(boxes: RawBox[]): Float64Array {
  const out = new Float64Array(boxes.length * 6);
  boxes.forEach((b, i) => {
    out.set(b.box, i * 6);
    out[i * 6 + 4] = b.score;
    out[i * 6 + 5] = b.classId;
  });
  return out;
}

export function unpackBoxes(data: Float64Array): RawBox[] {
  const out: RawBox[] = [];
  for (let o = 0; o + 6 <= data.length; o += 6)
    out.push({ box: [data[o]!, data[o + 1]!, data[o + 2]!, data[o + 3]!], score: data[o + 4]!, classId: data[o + 5]! });
  return out;
}

export interface DecodeOptions {
  layout: YoloLayout | 'auto';
  numClasses: number;
  /** Candidates below this score are dropped before NMS. */
  minScore: number;
  /** IoU above which the weaker of two same-class boxes is suppressed; 0 or less disables NMS. */
  iouThreshold: number;
  classAgnostic?: boolean;
  maxDetections?: number;
  /** The model input's size: needed by yolox (cell positions) and rtdetr (normalised boxes), and by 'auto'. */
  input?: InputSize;
  /** yolox's strides; default 8, 16, 32. */
  strides?: readonly number[];
  /** rtdetr's class scores: logits (sigmoid applied), probabilities, or 'auto' (logits when any is outside 0..1). */
  scores?: 'logits' | 'probabilities' | 'auto';
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

export function decodeYolo(data: Float32Array, dims: readonly number[], opts: DecodeOptions): RawBox[] {
  const layout = opts.layout === 'auto' ? detectLayout(dims, opts.numClasses, opts.input, opts.strides) : opts.layout;
  const C = opts.numClasses;
  const out: RawBox[] = [];
  const xywh = (cx: number, cy: number, w: number, h: number): [number, number, number, number] => [
    cx - w / 2,
    cy - h / 2,
    cx + w / 2,
    cy + h / 2,
  ];
  if (layout === 'yolov8') {
    const n = dims[2];
    const { score, classId } = bestClasses(data, n, C, opts.minScore);
    for (let i = 0; i < n; i++) {
      if (score[i]! < opts.minScore) continue;
      out.push({
        box: xywh(data[i], data[n + i], data[2 * n + i], data[3 * n + i]),
        score: score[i]!,
        classId: classId[i]!,
      });
    }
  } else if (layout === 'yolov5' || layout === 'yolov8-t') {
    const n = dims[1];
    const stride = dims[2];
    const first = layout === 'yolov5' ? 5 : 4;
    for (let i = 0; i < n; i++) {
      const o = i * stride;
      const obj = layout === 'yolov5' ? data[o + 4] : 1;
      if (obj < opts.minScore) continue;
      let best = -1,
        cls = -Infinity;
      for (let c = 0; c < C; c++) {
        const s = data[o + first + c];
        if (s > cls) {
          cls = s;
          best = c;
        }
      }
      const score = obj * cls;
      if (score < opts.minScore) continue;
      out.push({ box: xywh(data[o], data[o + 1], data[o + 2], data[o + 3]), score, classId: best });
    }
  } else if (layout === 'yolox') {
    decodeYolox(data, dims, opts, out);
  } else if (layout === 'rtdetr') {
    decodeDetr(data, dims, opts, out);
  } else {
    const n = dims[1];
    for (let i = 0; i < n; i++) {
      const o = i * 6;
      const score = data[o + 4];
      if (score < opts.minScore) continue;
      out.push({ box: [data[o], data[o + 1], data[o + 2], data[o + 3]], score, classId: Math.round(data[o + 5]) });
    }
  }
  return suppressed(out, opts);
}

/** The candidates after NMS (or sorted by score without it), at most maxDetections of them. */
function suppressed(out: RawBox[], opts: DecodeOptions): RawBox[] {
  const kept =
    opts.iouThreshold > 0
      ? nms(out, opts.iouThreshold, opts.classAgnostic ?? false, opts.maxDetections || Infinity)
      : out.sort((a, b) => b.score - a.score);
  return opts.maxDetections ? kept.slice(0, opts.maxDetections) : kept;
}

/**
 * What decodeYolo gives for a yolov8, yolov5 or yolox output, from that output reduced in the graph
 * (src/inference/best-class.ts): [1, 6, A] for a channels-first yolov8 one (the box, the best class's score,
 * that class), [1, A, 7] for a yolov5 or yolox one (the box, or YOLOX's offsets and log sizes, the objectness,
 * the best class's score, that class), told apart by `opts.layout` (yolox) and the shape.
 */
export function decodeYoloBest(data: Float32Array, dims: readonly number[], opts: DecodeOptions): RawBox[] {
  const out: RawBox[] = [];
  const push = (cx: number, cy: number, w: number, h: number, score: number, classId: number) =>
    out.push({ box: [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], score, classId });
  if (dims.length === 3 && dims[1] === 6) {
    const n = dims[2]!;
    for (let i = 0; i < n; i++) {
      const score = data[4 * n + i]!;
      // Not negated: a NaN score is no candidate, as in the scan over every class.
      if (!(score >= opts.minScore)) continue;
      push(data[i]!, data[n + i]!, data[2 * n + i]!, data[3 * n + i]!, score, data[5 * n + i]!);
    }
  } else if (dims.length === 3 && dims[2] === 7 && opts.layout === 'yolox') {
    decodeYolox(data, dims, opts, out, true);
  } else if (dims.length === 3 && dims[2] === 7) {
    const n = dims[1]!;
    for (let o = 0; o < n * 7; o += 7) {
      const obj = data[o + 4]!;
      if (obj < opts.minScore) continue;
      // The product in double precision, as the scan over every class computes it.
      const score = obj * data[o + 5]!;
      if (score < opts.minScore) continue;
      push(data[o]!, data[o + 1]!, data[o + 2]!, data[o + 3]!, score, data[o + 6]!);
    }
  } else throw new Error(`expected a reduced output [1, 6, n] or [1, n, 7], got [${dims.join(', ')}]`);
  return suppressed(out, opts);
}

let bestScore = new Float32Array(0);
let bestClass = new Int32Array(0);

/**
 * Each column's highest class score and its class (the first on a tie) for a channels-first [4 + C, n] output,
 * where that score is at least minScore; -Infinity elsewhere. Only a score at or above minScore is compared
 * with the column's best, so the branch that is almost never taken is the cheap one (compared with every score,
 * the best changed a few times a column in an order the processor could not predict). Read class row by class
 * row, along memory. Scratch arrays reused call to call.
 */
function bestClasses(
  data: Float32Array,
  n: number,
  C: number,
  minScore: number,
): { score: Float32Array; classId: Int32Array } {
  if (bestScore.length < n) {
    bestScore = new Float32Array(n);
    bestClass = new Int32Array(n);
  }
  const score = bestScore.subarray(0, n).fill(-Infinity);
  const classId = bestClass.subarray(0, n).fill(-1);
  for (let c = 0; c < C; c++) {
    const row = (4 + c) * n;
    for (let i = 0; i < n; i++) {
      const v = data[row + i]!;
      if (v >= minScore && v > score[i]!) {
        score[i] = v;
        classId[i] = c;
      }
    }
  }
  return { score, classId };
}

/**
 * YOLOX's grid: from its whole output ([1, cells, 5 + C]), or (`reduced`) from the twin the graph reduced it to
 * ([1, cells, 7]: the row's first five values, then its best class's score and that class).
 */
function decodeYolox(
  data: Float32Array,
  dims: readonly number[],
  opts: DecodeOptions,
  out: RawBox[],
  reduced = false,
): void {
  if (!opts.input) throw new Error('the yolox layout needs the model input size');
  const strides = opts.strides ?? DEFAULT_STRIDES;
  const [, n, F] = dims;
  if (n !== gridCells(opts.input, strides)) {
    throw new Error(
      `yolox output has ${n} rows but a ${opts.input.width}x${opts.input.height} input at strides ${strides.join(', ')} has ${gridCells(opts.input, strides)} cells`,
    );
  }
  const C = opts.numClasses;
  let i = 0;
  for (const s of strides) {
    const gh = Math.ceil(opts.input.height / s);
    const gw = Math.ceil(opts.input.width / s);
    for (let gy = 0; gy < gh; gy++) {
      for (let gx = 0; gx < gw; gx++, i++) {
        const o = i * F;
        const obj = data[o + 4];
        if (obj < opts.minScore) continue;
        let best = -1,
          cls = -Infinity;
        if (reduced) {
          cls = data[o + 5]!;
          best = data[o + 6]!;
        } else
          for (let c = 0; c < C; c++) {
            const v = data[o + 5 + c];
            if (v > cls) {
              cls = v;
              best = c;
            }
          }
        const score = obj * cls;
        if (score < opts.minScore) continue;
        const cx = (data[o] + gx) * s;
        const cy = (data[o + 1] + gy) * s;
        const w = Math.exp(data[o + 2]) * s;
        const h = Math.exp(data[o + 3]) * s;
        out.push({ box: [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], score, classId: best });
      }
    }
  }
}

function decodeDetr(data: Float32Array, dims: readonly number[], opts: DecodeOptions, out: RawBox[]): void {
  if (!opts.input) throw new Error('the rtdetr layout needs the model input size');
  const [, n, F] = dims;
  const C = opts.numClasses;
  let logits = opts.scores === 'logits';
  if ((opts.scores ?? 'auto') === 'auto') {
    outer: for (let i = 0; i < n; i++) {
      for (let c = 0; c < C; c++) {
        const v = data[i * F + 4 + c];
        if (v < 0 || v > 1) {
          logits = true;
          break outer;
        }
      }
    }
  }
  const { width: W, height: H } = opts.input;
  for (let i = 0; i < n; i++) {
    const o = i * F;
    let best = -1,
      raw = -Infinity;
    for (let c = 0; c < C; c++) {
      const v = data[o + 4 + c];
      if (v > raw) {
        raw = v;
        best = c;
      }
    }
    const score = logits ? sigmoid(raw) : raw;
    if (score < opts.minScore) continue;
    const cx = data[o] * W,
      cy = data[o + 1] * H,
      w = data[o + 2] * W,
      h = data[o + 3] * H;
    out.push({ box: [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2], score, classId: best });
  }
}

export function iou(a: readonly number[], b: readonly number[]): number {
  const iw = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const ih = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  const union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return union > 0 ? inter / union : 0;
}

/**
 * Greedy non-maximum suppression, per class unless classAgnostic. Returns the kept boxes by score, at most
 * `limit` of them: a box's fate depends only on the boxes ranked above it, so the first `limit` kept are the
 * same whether or not the rest are looked at (at a low minimum score the rest are thousands).
 */
export function nms<T extends RawBox>(boxes: T[], iouThreshold: number, classAgnostic = false, limit = Infinity): T[] {
  const sorted = [...boxes].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  for (const b of sorted) {
    if (kept.length >= limit) break;
    if (kept.every((k) => (!classAgnostic && k.classId !== b.classId) || iou(k.box, b.box) <= iouThreshold))
      kept.push(b);
  }
  return kept;
}
