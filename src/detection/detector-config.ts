// How a detector is fed and read, resolved once per model from three sources: the ONNX file's own metadata
// (exporters such as Ultralytics write imgsz, names, stride, task and end2end into metadata_props), the graph's
// declared input and output shapes, and the manifest. A standard export dropped in with a bare manifest
// (id, task, format, source) therefore needs no other field. Precedence: a static input shape is a fact the
// model cannot run without, so it decides the size; otherwise the metadata decides when it says something,
// the manifest when it does not. The output layout is the manifest's when it names one, else the metadata's
// end2end flag, else the output shape (yolo.ts); pixel format defaults follow the layout's family (Ultralytics:
// RGB / 255, centred grey letterbox; YOLOX: BGR 0-255, top-left letterbox; DETR: RGB / 255 stretched).
import type { ModelManifest } from '../inference/manifest.js';
import type { OnnxModelInfo } from '../inference/onnx-metadata.js';
import { COCO_CLASSES } from './coco-classes.js';
import { DEFAULT_STRIDES, detectLayout, impliedClassCount, YOLO_LAYOUTS, type YoloLayout } from './yolo.js';

type Triple = [number, number, number];

/** How an image becomes the model input. */
export interface ModelInputSpec {
  resize: 'stretch' | 'letterbox';
  width: number;
  height: number;
  layout: 'nhwc' | 'nchw';
  /** Pixel multiplier, applied before mean and std. */
  scale: number;
  inputName: string;
  channelOrder: 'rgb' | 'bgr';
  /** Letterbox: centre the content (Ultralytics) or put it at the top-left (YOLOX). */
  center: boolean;
  mean?: Triple;
  std?: Triple;
}

export interface PostSpec {
  type: 'centernet' | 'yolo';
  output?: string;
  /** 'auto' when the output shape was not declared: decided on the first run. */
  layout: YoloLayout | 'auto';
  /** Same-class duplicates above this IoU are merged (0: none; DETR-style outputs need none). */
  nmsIou: number;
  strides: readonly number[];
  scores: 'logits' | 'probabilities' | 'auto';
}

export interface DetectorConfig {
  labels: string[];
  pre: ModelInputSpec;
  post: PostSpec;
  /** Where the labels and input size came from (for GET /v1/models and logs). */
  origin: { labels: 'metadata' | 'manifest' | 'coco' | 'indices'; size: 'model' | 'metadata' | 'manifest' | 'default' };
}

/** Ultralytics tasks whose first 4 + C output channels are a detector's (the rest: mask or keypoint terms). */
const DETECT_LIKE_TASKS = ['detect', 'segment', 'pose'];

export function resolveDetectorConfig(
  manifest: ModelManifest,
  onnx: OnnxModelInfo | null,
  manifestLabels: string[],
): DetectorConfig {
  const p = manifest.preprocess as Record<string, unknown>;
  const q = manifest.postprocess as Record<string, unknown>;
  const meta = onnx?.metadata ?? {};
  const task = meta.task?.trim();
  if (task && !DETECT_LIKE_TASKS.includes(task)) {
    throw new Error(
      `model ${manifest.id} is an Ultralytics ${task} export; detect, segment and pose exports can detect`,
    );
  }

  // Input tensor: name, layout, size.
  const mIn = manifest.inputs[0];
  const oIn = onnx?.inputs[0];
  const inputName = mIn?.name ?? oIn?.name ?? 'images';
  const oShape = oIn?.shape ?? [];
  const shapeLayout =
    oShape.length === 4 ? (oShape[1] === 3 ? 'nchw' : oShape[3] === 3 ? 'nhwc' : undefined) : undefined;
  const layout = (p.layout as 'nhwc' | 'nchw' | undefined) ?? mIn?.layout ?? shapeLayout ?? 'nchw';
  const [oh, ow] = layout === 'nhwc' ? [oShape[1], oShape[2]] : [oShape[2], oShape[3]];
  const mDims = mIn?.shape ?? [];
  const [mh, mw] = layout === 'nhwc' ? [mDims[1], mDims[2]] : [mDims[2], mDims[3]];
  const imgsz = parseImgsz(meta.imgsz);
  let size: { width: number; height: number };
  let sizeOrigin: DetectorConfig['origin']['size'];
  if (typeof ow === 'number' && typeof oh === 'number' && ow > 0 && oh > 0) {
    size = { width: ow, height: oh };
    sizeOrigin = 'model';
  } else if (imgsz) {
    size = imgsz;
    sizeOrigin = 'metadata';
  } else if (p.width !== undefined || p.height !== undefined) {
    size = { width: Number(p.width ?? p.height), height: Number(p.height ?? p.width) };
    sizeOrigin = 'manifest';
  } else if (typeof mw === 'number' && typeof mh === 'number' && mw > 0 && mh > 0) {
    size = { width: mw, height: mh };
    sizeOrigin = 'manifest';
  } else {
    size = { width: 640, height: 640 };
    sizeOrigin = 'default';
  }

  // Output: which tensor, its declared shape, the strides of a grid layout.
  const output = (q.output as string | undefined) ?? onnx?.outputs[0]?.name;
  const outShape = (onnx?.outputs.find((o) => o.name === output) ?? onnx?.outputs[0])?.shape ?? [];
  const strides = parseStrides(q.strides, meta.stride);

  // Labels: the metadata's names, else the manifest's, else COCO when the output has 80 classes, else indices.
  const metaNames = parseNames(meta.names ?? meta.labels ?? meta.classes);
  let labels: string[];
  let labelsOrigin: DetectorConfig['origin']['labels'];
  if (metaNames.length) {
    labels = metaNames;
    labelsOrigin = 'metadata';
  } else if (manifestLabels.length) {
    labels = manifestLabels;
    labelsOrigin = 'manifest';
  } else {
    const c = impliedClassCount(outShape, size, strides);
    if (c === undefined || c === COCO_CLASSES.length) {
      labels = [...COCO_CLASSES];
      labelsOrigin = 'coco';
    } else {
      labels = Array.from({ length: c }, (_, i) => String(i));
      labelsOrigin = 'indices';
    }
  }

  const type = (q.type as 'centernet' | 'yolo' | undefined) ?? 'yolo';
  let postLayout: YoloLayout | 'auto';
  const asked = q.layout as string | undefined;
  if (asked && asked !== 'auto') {
    if (!YOLO_LAYOUTS.includes(asked as YoloLayout))
      throw new Error(
        `model ${manifest.id}: postprocess.layout ${asked} is not one of auto, ${YOLO_LAYOUTS.join(', ')}`,
      );
    postLayout = asked as YoloLayout;
  } else if (type === 'centernet' || /^true$/i.test(meta.end2end ?? '')) postLayout = 'xyxy-score-class';
  else if (outShape.length === 3 && typeof outShape[1] === 'number' && typeof outShape[2] === 'number') {
    // (The batch axis may be symbolic: only the other two matter.)
    const dims = [1, outShape[1], outShape[2]];
    // Segment and pose exports carry extra channels after the classes: channels first, like YOLOv8.
    postLayout =
      task && task !== 'detect' && dims[1] > 4 + labels.length && dims[1] < dims[2]
        ? 'yolov8'
        : detectLayout(dims, labels.length, size, strides);
  } else postLayout = 'auto';

  const family = postLayout === 'yolox' ? 'yolox' : postLayout === 'rtdetr' ? 'detr' : 'ultralytics';
  const pre: ModelInputSpec = {
    resize: (p.resize as 'stretch' | 'letterbox' | undefined) ?? (family === 'detr' ? 'stretch' : 'letterbox'),
    width: size.width,
    height: size.height,
    layout,
    scale: Number(p.scale ?? (family === 'yolox' ? 1 : 1 / 255)),
    inputName,
    channelOrder: (p.color as 'rgb' | 'bgr' | undefined) ?? (family === 'yolox' ? 'bgr' : 'rgb'),
    center: (p.center as boolean | undefined) ?? family !== 'yolox',
    mean: triple(p.mean),
    std: triple(p.std),
  };
  const post: PostSpec = {
    type,
    output,
    layout: postLayout,
    nmsIou: Number(q.nmsIou ?? (type === 'centernet' ? 0.7 : postLayout === 'rtdetr' ? 0 : 0.45)),
    strides,
    scores: (q.scores as PostSpec['scores'] | undefined) ?? 'auto',
  };
  return { labels, pre, post, origin: { labels: labelsOrigin, size: sizeOrigin } };
}

/** Ultralytics' imgsz: "[640, 640]" (height, width), "640", or a JSON list. */
export function parseImgsz(v: string | undefined): { width: number; height: number } | undefined {
  if (!v) return undefined;
  const nums = (v.match(/\d+/g) ?? []).map(Number).filter((n) => n > 0);
  if (nums.length === 1) return { width: nums[0], height: nums[0] };
  if (nums.length >= 2) return { width: nums[1], height: nums[0] };
  return undefined;
}

/**
 * Class names from a metadata value: a Python dict repr ("{0: 'person', 1: \"o'clock\"}", what Ultralytics
 * writes), a JSON object of index -> name, or a JSON / Python list of names.
 */
export function parseNames(v: string | undefined): string[] {
  if (!v) return [];
  const out: string[] = [];
  for (const m of v.matchAll(/['"]?(\d+)['"]?\s*:\s*(['"])((?:\\.|(?!\2).)*)\2/g)) out[Number(m[1])] = unescape(m[3]);
  if (out.length) return Array.from(out, (n, i) => n ?? String(i));
  const t = v.trim();
  if (t.startsWith('[')) {
    const items = [...t.matchAll(/(['"])((?:\\.|(?!\1).)*)\1/g)].map((m) => unescape(m[2]));
    if (items.length) return items;
  }
  return [];
}

const unescape = (s: string) => s.replace(/\\(.)/g, '$1');

/** Grid strides: the manifest's list, else 8 and 16 up to the metadata's largest stride (32 -> 8, 16, 32). */
function parseStrides(manifest: unknown, meta: string | undefined): readonly number[] {
  if (Array.isArray(manifest) && manifest.every((s) => typeof s === 'number' && s > 0)) return manifest as number[];
  const nums = (meta?.match(/\d+/g) ?? []).map(Number).filter((n) => n > 0);
  if (nums.length > 1) return nums;
  const max = nums[0];
  if (!max || max < 8) return DEFAULT_STRIDES;
  const out: number[] = [];
  for (let s = 8; s <= max; s *= 2) out.push(s);
  return out;
}

function triple(v: unknown): Triple | undefined {
  return Array.isArray(v) && v.length === 3 && v.every((x) => typeof x === 'number') ? (v as Triple) : undefined;
}
