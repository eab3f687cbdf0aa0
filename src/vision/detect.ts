// Object detection: decoded RGB pixels -> detect's objects in source-image pixels. The built-in model is
// CenterNet (COCO 80); a bring-your-own YOLO ONNX works through the same class by manifest
// (postprocess.type "yolo"). detectRaw() is the model-output path the video pipeline runs on frames.
import sharp from 'sharp';
import { errors } from '../errors.js';
import type { ModelRegistry } from '../inference/registry.js';
import { Tensor, type InferenceRuntime, type ModelHandle } from '../inference/runtime.js';
import type { RgbImage } from '../media/rgb-image.js';
import { COCO_CLASSES } from './coco-classes.js';
import { letterboxAsync } from '../native/image.js';
import { dominantColor } from '../media/colour.js';
import { clamp, decodeYolo, unletterbox, type Letterbox, type RawBox, type YoloLayout } from './yolo.js';

export interface DetectOptions {
  classes?: string[];
  confidence_threshold?: number;
}

export interface DetectedObject {
  class: string;
  confidence: number;
  bbox: [number, number, number, number];
  attributes: { color?: string };
}

/** One detection in source pixels, before class names, thresholds or attributes. */
export interface RawDetection extends RawBox {}

export const DEFAULT_DETECT_MODEL = 'centernet-coco';

/** How an image becomes the model input (from the manifest's preprocess block). */
export interface ModelInputSpec { resize: 'stretch' | 'letterbox'; width: number; height: number; layout: 'nhwc' | 'nchw'; scale: number; inputName: string }
interface Post {
  type: 'centernet' | 'yolo';
  output?: string;
  layout: YoloLayout | 'auto';
  boxSpace?: number;
  /** Same-class duplicates above this IoU are merged (CenterNet peaks rarely overlap; YOLO always needs it). */
  nmsIou: number;
}

export class Detector {
  private constructor(
    readonly modelId: string,
    readonly labels: string[],
    /** The model's runtime handle (queue, session, stats). */
    readonly handle: ModelHandle,
    readonly pre: ModelInputSpec,
    private readonly post: Post,
  ) {}

  /** A detector for a registered model (its prepared ONNX runs through the runtime's queue). */
  static async create(runtime: InferenceRuntime, registry: ModelRegistry, modelId = DEFAULT_DETECT_MODEL): Promise<Detector> {
    const { manifest } = registry.get(modelId);
    if (manifest.task !== 'detect') throw new Error(`model ${modelId} is a ${manifest.task} model, not a detector`);
    const labels = (await registry.labels(modelId));
    const p = manifest.preprocess as Record<string, unknown>;
    const q = manifest.postprocess as Record<string, unknown>;
    const input = manifest.inputs[0];
    const layout = (p.layout as 'nhwc' | 'nchw' | undefined) ?? input?.layout ?? 'nchw';
    const dims = input?.shape ?? [];
    const [h, w] = layout === 'nhwc' ? [dims[1], dims[2]] : [dims[2], dims[3]];
    const pre: ModelInputSpec = {
      resize: (p.resize as 'stretch' | 'letterbox') ?? 'letterbox',
      width: Number(p.width ?? w ?? 640),
      height: Number(p.height ?? h ?? 640),
      layout,
      scale: Number(p.scale ?? 1 / 255),
      inputName: input?.name ?? 'images',
    };
    const type = (q.type as 'centernet' | 'yolo') ?? 'yolo';
    const post: Post = {
      type,
      output: q.output as string | undefined,
      layout: (q.layout as YoloLayout | 'auto') ?? (type === 'centernet' ? 'xyxy-score-class' : 'auto'),
      boxSpace: q.boxSpace as number | undefined,
      nmsIou: Number(q.nmsIou ?? (type === 'centernet' ? 0.7 : 0.45)),
    };
    return new Detector(modelId, labels.length ? labels : [...COCO_CLASSES], runtime.register(registry.spec(modelId)), pre, post);
  }

  /**
   * Runs the model on one image and returns every candidate at or above minScore, boxes in source pixels,
   * after same-class NMS (set nmsIou to 0 to get the graph output as is). For the video pipeline.
   */
  async detectRaw(image: RgbImage, minScore = 0, nmsIou = this.post.nmsIou): Promise<RawDetection[]> {
    const { tensor, letterbox } = await modelInput(image, this.pre);
    const out = await this.handle.run({ [this.pre.inputName]: tensor });
    const t = (this.post.output ? out[this.post.output] : undefined) ?? Object.values(out)[0];
    const boxes = decodeYolo(t.data as Float32Array, t.dims, {
      layout: this.post.layout, numClasses: this.labels.length, minScore, iouThreshold: nmsIou,
    });
    return boxes.map((b) => ({ ...b, box: unletterbox(b.box, letterbox, image.width, image.height) }));
  }

  /** POST /v1/vision/detect's objects. Unknown class names are 400 unknown_class (param "classes"). */
  async detect(image: RgbImage, opts: DetectOptions = {}): Promise<DetectedObject[]> {
    const threshold = opts.confidence_threshold ?? 0.5;
    if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1)) {
      throw errors.invalidParam('confidence_threshold', `Expected a number between 0 and 1 for confidence_threshold but received ${String(threshold)}`);
    }
    const wanted = this.classFilter(opts.classes);
    const raw = await this.detectRaw(image, threshold);
    return raw
      .filter((d) => d.score >= threshold && (!wanted || wanted.has(d.classId)))
      .map((d) => {
        const color = dominantColor(image, d.box);
        return {
          class: this.labels[d.classId] ?? String(d.classId),
          confidence: round(d.score, 4),
          bbox: d.box.map((v) => round(v, 1)) as [number, number, number, number],
          attributes: color ? { color } : {},
        };
      });
  }

  /** Class ids for the requested names; throws the 400 listing the valid names. */
  classFilter(classes: string[] | undefined): Set<number> | undefined {
    if (classes === undefined || classes === null) return undefined;
    if (!Array.isArray(classes)) throw errors.invalidParam('classes', 'Expected classes to be an array of class names');
    const ids = new Set<number>();
    for (const name of classes) {
      const id = typeof name === 'string' ? this.labels.indexOf(name.trim().toLowerCase()) : -1;
      if (id < 0) {
        throw errors.unknownClass('classes', name, this.labels);
      }
      ids.add(id);
    }
    return ids;
  }
}

/**
 * Resizes the image to the model input and lays it out as float32. Letterbox runs in the addon (scale, pad and
 * normalise in one pass on the libuv pool, src/native/image.ts); stretch resizes with sharp.
 */
export async function modelInput(image: RgbImage, pre: ModelInputSpec): Promise<{ tensor: Tensor; letterbox: Letterbox }> {
  const { width: W, height: H } = pre;
  if (pre.resize === 'letterbox') {
    const r = await letterboxAsync(image, { width: W, height: H, layout: pre.layout, scale: pre.scale });
    const lb: Letterbox = { scale: r.scale, padX: r.padX, padY: r.padY, width: r.contentWidth, height: r.contentHeight };
    return { tensor: new Tensor('float32', r.tensor, r.dims), letterbox: lb };
  }
  const lb: Letterbox = { scale: Math.min(W / image.width, H / image.height), padX: 0, padY: 0, width: W, height: H };
  let pixels: Buffer;
  if (W === image.width && H === image.height) {
    pixels = Buffer.from(image.data.buffer, image.data.byteOffset, image.data.byteLength);
  } else {
    pixels = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
      .resize(W, H, { fit: 'fill' }).raw().toBuffer();
  }
  const n = W * H;
  const out = new Float32Array(n * 3);
  const k = pre.scale;
  if (pre.layout === 'nhwc') {
    for (let i = 0; i < n * 3; i++) out[i] = pixels[i] * k;
    return { tensor: new Tensor('float32', out, [1, H, W, 3]), letterbox: lb };
  }
  for (let i = 0; i < n; i++) {
    out[i] = pixels[3 * i] * k;
    out[n + i] = pixels[3 * i + 1] * k;
    out[2 * n + i] = pixels[3 * i + 2] * k;
  }
  return { tensor: new Tensor('float32', out, [1, 3, H, W]), letterbox: lb };
}


function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
