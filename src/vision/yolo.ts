// Decoder for bring-your-own YOLO-family ONNX detectors, plus the unletterbox mapping and NMS they need.
// Output layouts (B = 1):
//   yolov5       [1, N, 5+C]  cx, cy, w, h, objectness, C class scores (score = obj * cls)
//   yolov8       [1, 4+C, N]  cx, cy, w, h, C class scores (YOLOv8 / YOLOv11; channels first)
//   yolov8-t     [1, N, 4+C]  the same, transposed by some exporters
//   xyxy-score-class [1, N, 6] end-to-end exports with NMS inside (YOLOv10, CenterNet)
// Boxes come out in model-input pixels; unletterbox() maps them back to the source image.

export type YoloLayout = 'yolov5' | 'yolov8' | 'yolov8-t' | 'xyxy-score-class';

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
export function unletterbox(b: [number, number, number, number], lb: Letterbox, srcW: number, srcH: number): [number, number, number, number] {
  const sx = lb.width / srcW;
  const sy = lb.height / srcH;
  return [
    clamp((b[0] - lb.padX) / sx, 0, srcW), clamp((b[1] - lb.padY) / sy, 0, srcH),
    clamp((b[2] - lb.padX) / sx, 0, srcW), clamp((b[3] - lb.padY) / sy, 0, srcH),
  ];
}

export function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

/** Picks the layout from the output shape and the class count (ambiguous square shapes need the manifest). */
export function detectLayout(dims: readonly number[], numClasses: number): YoloLayout {
  if (dims.length !== 3) throw new Error(`expected a [1, a, b] detector output, got [${dims.join(', ')}]`);
  const [, a, b] = dims;
  if (b === 6 && numClasses !== 2 && a !== 6) return 'xyxy-score-class';
  if (a === 4 + numClasses && b !== 4 + numClasses) return 'yolov8';
  if (b === 5 + numClasses) return 'yolov5';
  if (b === 4 + numClasses) return 'yolov8-t';
  throw new Error(`output [${dims.join(', ')}] matches no YOLO layout for ${numClasses} classes`);
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
}

export function decodeYolo(data: Float32Array, dims: readonly number[], opts: DecodeOptions): RawBox[] {
  const layout = opts.layout === 'auto' ? detectLayout(dims, opts.numClasses) : opts.layout;
  const C = opts.numClasses;
  const out: RawBox[] = [];
  const xywh = (cx: number, cy: number, w: number, h: number): [number, number, number, number] =>
    [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2];
  if (layout === 'yolov8') {
    const n = dims[2];
    for (let i = 0; i < n; i++) {
      let best = -1, score = -Infinity;
      for (let c = 0; c < C; c++) { const s = data[(4 + c) * n + i]; if (s > score) { score = s; best = c; } }
      if (score < opts.minScore) continue;
      out.push({ box: xywh(data[i], data[n + i], data[2 * n + i], data[3 * n + i]), score, classId: best });
    }
  } else if (layout === 'yolov5' || layout === 'yolov8-t') {
    const n = dims[1];
    const stride = dims[2];
    const first = layout === 'yolov5' ? 5 : 4;
    for (let i = 0; i < n; i++) {
      const o = i * stride;
      const obj = layout === 'yolov5' ? data[o + 4] : 1;
      if (obj < opts.minScore) continue;
      let best = -1, cls = -Infinity;
      for (let c = 0; c < C; c++) { const s = data[o + first + c]; if (s > cls) { cls = s; best = c; } }
      const score = obj * cls;
      if (score < opts.minScore) continue;
      out.push({ box: xywh(data[o], data[o + 1], data[o + 2], data[o + 3]), score, classId: best });
    }
  } else {
    const n = dims[1];
    for (let i = 0; i < n; i++) {
      const o = i * 6;
      const score = data[o + 4];
      if (score < opts.minScore) continue;
      out.push({ box: [data[o], data[o + 1], data[o + 2], data[o + 3]], score, classId: Math.round(data[o + 5]) });
    }
  }
  const kept = opts.iouThreshold > 0 ? nms(out, opts.iouThreshold, opts.classAgnostic ?? false) : out.sort((a, b) => b.score - a.score);
  return opts.maxDetections ? kept.slice(0, opts.maxDetections) : kept;
}

export function iou(a: readonly number[], b: readonly number[]): number {
  const iw = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const ih = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  const union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return union > 0 ? inter / union : 0;
}

/** Greedy non-maximum suppression, per class unless classAgnostic. Returns the kept boxes by score. */
export function nms<T extends RawBox>(boxes: T[], iouThreshold: number, classAgnostic = false): T[] {
  const sorted = [...boxes].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  for (const b of sorted) {
    if (kept.every((k) => (!classAgnostic && k.classId !== b.classId) || iou(k.box, b.box) <= iouThreshold)) kept.push(b);
  }
  return kept;
}
