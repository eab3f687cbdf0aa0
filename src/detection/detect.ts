// Object detection: decoded RGB pixels -> detect's objects in source-image pixels. The built-in model is
// CenterNet (COCO 80); a bring-your-own detector ONNX (YOLO family, YOLOX, RT-DETR style) works through the
// same class, configured from its own metadata and the manifest (detector-config.ts). detectRaw() is the
// model-output path the video pipeline runs on frames.
import { readFile } from 'node:fs/promises';
import { errors } from '../base/errors.js';
import type { ModelRegistry } from '../inference/registry.js';
import { Tensor, type InferenceRuntime, type RunContext } from '../inference/runtime.js';
import type { ModelHandle } from '../inference/model-handle.js';
import type { RgbImage } from '../media/rgb-image.js';
import type { DecodedImage, DecodeFor } from '../media/image-decode.js';
import { readOnnxInfo } from '../inference/onnx-metadata.js';
import { LiveHandle } from '../inference/live-handle.js';
import { resolveDetectorConfig, type DetectorConfig, type ModelInputSpec, type PostSpec } from './detector-config.js';
import { letterboxAsync, letterboxBytesAsync, stretchAsync, stretchBytesAsync } from '../native/image.js';
import { dominantColors } from '../media/colour.js';
import {
  DECODED_BOXES,
  decodeYolo,
  unletterbox,
  unpackBoxes,
  type DecodeOptions,
  type Letterbox,
  type RawBox,
} from './yolo.js';

export interface DetectOptions extends RunContext {
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

export type { ModelInputSpec } from './detector-config.js';

export class Detector {
  /**
   * Input tensors of finished runs, for the next ones: shared memory, which the session's thread reads (and
   * copies) itself, so the main thread neither allocates nor copies 3 MB per image. At most one per run in
   * flight (the model's sessions and the one started ahead) is ever made.
   */
  private readonly spareInputs: Float32Array[] = [];
  /** The same for a graph that takes its image as bytes (a quarter of the float input's size). */
  private readonly spareBytes: Uint8Array[] = [];

  private constructor(
    readonly modelId: string,
    readonly labels: string[],
    private readonly live: LiveHandle,
    readonly pre: ModelInputSpec,
    private readonly post: PostSpec,
    /** Where the labels and input size came from. */
    readonly origin: DetectorConfig['origin'],
  ) {}

  /** The model's runtime handle in force (queue, session, stats): a new one after its settings changed. */
  get handle(): ModelHandle {
    return this.live.get();
  }

  /**
   * A detector for a registered model (its prepared ONNX runs through the runtime's queue). Input size,
   * layout and class names come from the ONNX file's metadata and shapes and the manifest (detector-config.ts).
   */
  static async create(
    runtime: InferenceRuntime,
    registry: ModelRegistry,
    modelId = DEFAULT_DETECT_MODEL,
  ): Promise<Detector> {
    const { manifest } = registry.get(modelId);
    if (manifest.task !== 'detect') throw new Error(`model ${modelId} is a ${manifest.task} model, not a detector`);
    const onnx = readOnnxInfo(await readFile(await registry.onnxPath(modelId)));
    const c = resolveDetectorConfig(manifest, onnx, await registry.labels(modelId));
    // Where the runtime gives its graph a bytes input (a GPU provider, or SIGHTFLOW_INFERENCE_UINT8_INPUT=on),
    // the normalisation below moves into the graph and each image crosses as a quarter of the bytes.
    const live = new LiveHandle(runtime, registry, modelId, (h) => h.offerBytesInput(c.pre));
    return new Detector(modelId, c.labels, live, c.pre, c.post, c.origin);
  }

  /** The resize the model's input makes of an image (a photo for detect may be decoded no larger than it needs). */
  get decodeFor(): DecodeFor {
    return {
      width: this.pre.width,
      height: this.pre.height,
      fit: this.pre.resize === 'letterbox' ? 'contain' : 'fill',
    };
  }

  /** The output layout, or 'auto' when the model did not declare its output shape (decided per run). */
  get layout(): PostSpec['layout'] {
    return this.post.layout;
  }

  /**
   * Runs the model on one image and returns every candidate at or above minScore, boxes in source pixels,
   * after same-class NMS (set nmsIou to 0 to get the graph output as is). For the video pipeline.
   */
  async detectRaw(
    image: RgbImage,
    minScore = 0,
    nmsIou = this.post.nmsIou,
    ctx: RunContext = {},
  ): Promise<RawDetection[]> {
    // The input is made when the run starts, into shared memory an earlier run used. Why: a new input buffer
    // per image, held while the run waited its turn, outlived the young generation's collections; with several
    // cameras V8 then fell, in about half the runs, into back-to-back full collections and the frame rate
    // dropped (docs/capacity.md, "The detector's input").
    let letterbox: Letterbox | undefined;
    let buffer: Float32Array | Uint8Array | undefined;
    try {
      const options: DecodeOptions = {
        layout: this.post.layout,
        numClasses: this.labels.length,
        minScore,
        iouThreshold: nmsIou,
        input: { width: this.pre.width, height: this.pre.height },
        strides: this.post.strides,
        scores: this.post.scores,
      };
      // The session's worker decodes the output (its boxes cross to this thread, not the raw tensor).
      const out = await this.handle.run(
        async () => {
          // The graph sessions load says which input it takes (model-handle.ts, ModelHandle.imageInput).
          const size = 3 * this.pre.width * this.pre.height;
          let input: { tensor: Tensor; letterbox: Letterbox };
          if ((await this.handle.imageInput()) === 'uint8') {
            const bytes = this.spareBytes.pop() ?? new Uint8Array(new SharedArrayBuffer(size));
            buffer = bytes;
            input = await modelInputBytes(image, this.pre, bytes);
          } else {
            const floats = this.spareInputs.pop() ?? new Float32Array(new SharedArrayBuffer(size * 4));
            buffer = floats;
            input = await modelInput(image, this.pre, floats);
          }
          letterbox = input.letterbox;
          return { [this.pre.inputName]: input.tensor };
        },
        undefined,
        ctx,
        { decode: { output: this.post.output, options } },
      );
      const decoded = out[DECODED_BOXES];
      const t = (this.post.output ? out[this.post.output] : undefined) ?? Object.values(out)[0];
      const boxes = decoded
        ? unpackBoxes(decoded.data as Float64Array)
        : decodeYolo(t.data as Float32Array, t.dims, options);
      return boxes.map((b) => ({ ...b, box: unletterbox(b.box, letterbox!, image.width, image.height) }));
    } finally {
      if (buffer instanceof Uint8Array) this.spareBytes.push(buffer);
      else if (buffer) this.spareInputs.push(buffer);
    }
  }

  /**
   * POST /v1/vision/detect's objects. Unknown class names are 400 unknown_class (param "classes"). Boxes are in
   * the file's pixels also for an image decoded smaller (DecodedImage.shrunk).
   */
  async detect(image: RgbImage & Pick<DecodedImage, 'shrunk'>, opts: DetectOptions = {}): Promise<DetectedObject[]> {
    const threshold = opts.confidence_threshold ?? 0.5;
    if (typeof threshold !== 'number' || !(threshold >= 0 && threshold <= 1)) {
      throw errors.invalidParam(
        'confidence_threshold',
        `Expected a number between 0 and 1 for confidence_threshold but received ${String(threshold)}`,
      );
    }
    const wanted = this.classFilter(opts.classes);
    const raw = await this.detectRaw(image, threshold, undefined, opts);
    const kept = raw.filter((d) => d.score >= threshold && (!wanted || wanted.has(d.classId)));
    // On the libuv pool: in JavaScript the colours were the serving thread's largest part of a photo with a
    // model that keeps up (docs/capacity.md, "Colour names").
    const colors = await dominantColors(
      image,
      kept.map((d) => d.box),
    );
    const shrunk = image.shrunk;
    return kept.map((d, i) => {
      const color = colors[i];
      const box = shrunk ? toSource(d.box, shrunk) : d.box;
      return {
        class: this.labels[d.classId] ?? String(d.classId),
        confidence: round(d.score, 4),
        bbox: box.map((v) => round(v, 1)) as [number, number, number, number],
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
      const id = classIndex(this.labels, name);
      if (id < 0) {
        throw errors.unknownClass('classes', name, this.labels);
      }
      ids.add(id);
    }
    return ids;
  }
}

/**
 * Bilinear sampling reads every source pixel only up to this shrink; beyond it, source pixels would be
 * skipped (aliasing), so a larger image is first box-shrunk by whole factors on the axes that need it.
 */
const MAX_BILINEAR_SHRINK = 2;

/**
 * Resizes the image to the model input and lays it out as float32. Letterbox runs in the addon (scale, pad and
 * normalise in one pass on the libuv pool, src/native/image.ts); stretch too (one pass on the pool), after a
 * box shrink by whole factors when it shrinks by more than MAX_BILINEAR_SHRINK.
 */
export async function modelInput(
  image: RgbImage,
  pre: ModelInputSpec,
  out?: Float32Array,
): Promise<{ tensor: Tensor; letterbox: Letterbox }> {
  const { width: W, height: H } = pre;
  if (pre.resize === 'letterbox') {
    const r = await letterboxAsync(image, {
      out,
      width: W,
      height: H,
      layout: pre.layout,
      scale: pre.scale,
      channelOrder: pre.channelOrder,
      center: pre.center,
      mean: pre.mean,
      std: pre.std,
    });
    const lb = letterboxOf(r);
    return { tensor: new Tensor('float32', r.tensor, r.dims), letterbox: lb };
  }
  const { lb, fx, fy } = stretchGeometry(image, pre);
  // The 2x1 shrink (a 720p frame to a 512-wide input) is read on the fly by the resize pass itself: the same
  // values in less CPU than a shrink pass and a resize pass. One native pass (bilinear stretch, channel order
  // and normalisation) does what sharp's resize and a JavaScript loop did in a fraction of their CPU, COCO mAP
  // unchanged (eval detect). It runs on the libuv pool, as the letterbox does: on the main thread it was time
  // of every photo and camera frame that the event loop could not spend on requests
  // (docs/capacity.md, "The detector's input resize").
  const r = await stretchAsync(image, {
    out,
    width: W,
    height: H,
    layout: pre.layout,
    scale: pre.scale,
    channelOrder: pre.channelOrder,
    mean: pre.mean,
    std: pre.std,
    shrinkX: fx,
    shrinkY: fy,
  });
  return { tensor: new Tensor('float32', r.tensor, r.dims), letterbox: lb };
}

/** A letterbox's mapping back to the source, from what the native pass answered. */
function letterboxOf(r: {
  scale: number;
  padX: number;
  padY: number;
  contentWidth: number;
  contentHeight: number;
}): Letterbox {
  return { scale: r.scale, padX: r.padX, padY: r.padY, width: r.contentWidth, height: r.contentHeight };
}

/** A stretch's mapping back to the source and its box shrink factors. */
function stretchGeometry(image: RgbImage, pre: ModelInputSpec): { lb: Letterbox; fx: number; fy: number } {
  const { width: W, height: H } = pre;
  const lb: Letterbox = { scale: Math.min(W / image.width, H / image.height), padX: 0, padY: 0, width: W, height: H };
  // Beyond the shrink bilinear sampling handles, a box shrink by the largest whole factor that keeps the axis
  // at least the input's size (each axis on its own: a 720p frame to 512x512 halves its width only) averages
  // every pixel first: about half the CPU of sharp's resize and the pass, with COCO mAP as good on photos
  // enlarged to such factors (eval detect --upscale; docs/capacity.md, "The detector's input resize").
  // The shrink drops the last fx - 1 columns (fy - 1 rows) at most; boxes are still mapped back with the
  // whole image's scale, an error under 0.2% of the side at the factors a frame meets.
  const fx = image.width > MAX_BILINEAR_SHRINK * W ? Math.floor(image.width / W) : 1;
  const fy = image.height > MAX_BILINEAR_SHRINK * H ? Math.floor(image.height / H) : 1;
  return { lb, fx, fy };
}

/**
 * modelInput's resize for a graph that normalises its input itself (src/inference/uint8-input.ts): the same
 * letterbox or stretch (same geometry, padding and box shrink) written as RGB bytes, a uint8 [1, H, W, 3]
 * tensor, whatever layout and channel order the model reads (its graph converts them).
 */
export async function modelInputBytes(
  image: RgbImage,
  pre: ModelInputSpec,
  out?: Uint8Array,
): Promise<{ tensor: Tensor; letterbox: Letterbox }> {
  const { width: W, height: H } = pre;
  if (pre.resize === 'letterbox') {
    const r = await letterboxBytesAsync(image, { out, width: W, height: H, center: pre.center });
    const lb = letterboxOf(r);
    return { tensor: new Tensor('uint8', r.bytes, r.dims), letterbox: lb };
  }
  const { lb, fx, fy } = stretchGeometry(image, pre);
  const r = await stretchBytesAsync(image, { out, width: W, height: H, shrinkX: fx, shrinkY: fy });
  return { tensor: new Tensor('uint8', r.bytes, r.dims), letterbox: lb };
}

/** A box in a shrunk decode's pixels, in the file's: each decoded pixel covers `shrink` of the file's a side. */
function toSource(
  [x0, y0, x1, y1]: readonly number[],
  { shrink, width, height, offsetX, offsetY }: NonNullable<DecodedImage['shrunk']>,
): number[] {
  const x = (v: number) => Math.min(Math.max(v * shrink + offsetX, 0), width);
  const y = (v: number) => Math.min(Math.max(v * shrink + offsetY, 0), height);
  return [x(x0), y(y0), x(x1), y(y1)];
}

/** A class name's index in labels (case and surrounding spaces ignored), or -1. */
export function classIndex(labels: readonly string[], name: unknown): number {
  if (typeof name !== 'string') return -1;
  const want = name.trim().toLowerCase();
  return labels.findIndex((l) => l.toLowerCase() === want);
}

function round(v: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
}
