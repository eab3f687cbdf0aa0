// Shared by the inference tests: temp data dirs, photos as RGB, and tiny detector ONNX models whose
// weights are chosen so the expected boxes are known.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { DataType, OnnxGraphBuilder } from '../../src/inference/tfjs-import/onnx-builder.js';
import { Tensor } from '../../src/inference/runtime.js';
import type { ProviderLog } from '../../src/inference/execution-providers.js';
import type { RgbImage } from '../../src/media/rgb-image.js';

export async function tempDataDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'sightflow-models-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export async function loadRgb(path: string): Promise<RgbImage> {
  const { data, info } = await sharp(path)
    .rotate()
    .removeAlpha()
    .toColourspace('srgb')
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: 3 };
}

/** A logger that keeps what it is told, for asserting on warnings. */
export function collectingLog(): ProviderLog & { lines: { level: string; msg: string; obj: object }[] } {
  const lines: { level: string; msg: string; obj: object }[] = [];
  return {
    lines,
    info: (obj, msg) => {
      lines.push({ level: 'info', msg, obj });
    },
    warn: (obj, msg) => {
      lines.push({ level: 'warn', msg, obj });
    },
  };
}

export interface TinyBox {
  cx: number;
  cy: number;
  w: number;
  h: number;
  cls: number;
  score: number;
}

/**
 * A detector with input images [n,3,S,S] whose output is the boxes given, each with its score multiplied
 * by the mean brightness of the image (0..1 after /255): a white image yields the boxes at their scores,
 * a black one yields nothing. Built as GlobalAveragePool -> mean over channels -> x * W + B, reshaped into
 * the requested YOLO layout, so the ONNX graph really computes from its input.
 */
export function tinyYoloOnnx(
  layout: 'yolov8' | 'yolov5',
  boxes: TinyBox[],
  numClasses: number,
  size: number,
): Uint8Array {
  const b = new OnnxGraphBuilder();
  const C = numClasses;
  const N = boxes.length;
  const F = layout === 'yolov8' ? 4 + C : 5 + C; // features per box
  // Row-major values of one [F, N] (v8) or [N, F] (v5) output; W scales with brightness, B is constant.
  const W = new Float32Array(F * N);
  const B = new Float32Array(F * N);
  const at = (f: number, i: number) => (layout === 'yolov8' ? f * N + i : i * F + f);
  boxes.forEach((bx, i) => {
    B[at(0, i)] = bx.cx;
    B[at(1, i)] = bx.cy;
    B[at(2, i)] = bx.w;
    B[at(3, i)] = bx.h;
    if (layout === 'yolov5') {
      W[at(4, i)] = 1; // objectness = brightness
      W[at(5 + bx.cls, i)] = bx.score;
    } else {
      W[at(4 + bx.cls, i)] = bx.score;
    }
  });
  const pooled = b.op('GlobalAveragePool', ['images']); // [n,3,1,1]
  const bright = b.op('ReduceMean', [pooled], { axes: [1, 2, 3], keepdims: 0 }); // [n]
  const col = b.op('Unsqueeze', [bright, b.int64Init('axes', [1], [1])]); // [n,1]
  const scaled = b.op('Mul', [col, b.floatInit('W', [1, F * N], W)]); // [n, F*N]
  const flat = b.op('Add', [scaled, b.floatInit('B', [1, F * N], B)]);
  const shape = layout === 'yolov8' ? [-1, F, N] : [-1, N, F];
  b.node('Reshape', [flat, b.int64Init('shape', [3], shape)], ['output0']);
  return b.encode({
    name: `tiny_${layout}`,
    inputs: [{ name: 'images', elemType: DataType.FLOAT, shape: ['batch', 3, size, size] }],
    outputs: [{ name: 'output0', elemType: DataType.FLOAT, shape: ['batch', ...shape.slice(1)] }],
  });
}

/** A solid-colour RGB image. */
export function solidImage(width: number, height: number, rgb: [number, number, number]): RgbImage {
  const data = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) data.set(rgb, i * 3);
  return { data, width, height, channels: 3 };
}

/**
 * A detector-shaped ONNX whose output is `values` (dims `outDims`) whatever the image, with a free batch axis
 * and the given metadata_props: for the decoders of layouts that need no brightness trick (YOLOX, DETR) and for
 * metadata-driven configuration. The input is [batch, 3, size, size] (or nhwc); the output ignores it.
 */
export function fixedOutputOnnx(
  values: Float32Array,
  outDims: [number, number],
  inputShape: (number | string)[],
  metadata: Record<string, string> = {},
): Uint8Array {
  const b = new OnnxGraphBuilder();
  const pooled = b.op('ReduceMean', ['images'], { axes: [1, 2, 3], keepdims: 0 }); // [n]
  const col = b.op('Unsqueeze', [pooled, b.int64Init('axes', [1], [1])]); // [n,1]
  const zero = b.op('Mul', [col, b.floatInit('zero', [1], new Float32Array([0]))]);
  const flat = b.op('Add', [zero, b.floatInit('B', [1, values.length], values)]); // [n, F*N]
  b.node('Reshape', [flat, b.int64Init('shape', [3], [-1, outDims[0], outDims[1]])], ['output0']);
  return b.encode({
    name: 'fixed_output',
    inputs: [{ name: 'images', elemType: DataType.FLOAT, shape: inputShape }],
    outputs: [{ name: 'output0', elemType: DataType.FLOAT, shape: ['batch', outDims[0], outDims[1]] }],
    metadata,
  });
}

/**
 * A models dir of a test's own with the prepared built-in models (setup made them in data/models) linked in,
 * so a server or service starts without converting anything and what a test adds stays out of the shared dir.
 */
export async function modelsDirWithBuiltins(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const { existsSync, symlinkSync } = await import('node:fs');
  const { projectRoot } = await import('../../src/base/paths.js');
  const shared = process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models');
  const dir = await tempDataDir(t);
  for (const m of ['centernet-coco', 'ppocr-det', 'ppocr-rec', 'ppocr-cls', 'multimodal-embedding-v1']) {
    if (existsSync(join(shared, m))) symlinkSync(join(shared, m), join(dir, m));
  }
  return dir;
}

/** y = x * 2 + 1 over [batch, 4]: a model with a free batch axis. */
export function affineModel(): Uint8Array {
  const b = new OnnxGraphBuilder();
  const m = b.op('Mul', ['x', b.floatInit('two', [], [2])]);
  b.node('Add', [m, b.floatInit('one', [], [1])], ['y']);
  return b.encode({
    name: 'affine',
    inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: ['batch', 4] }],
    outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: ['batch', 4] }],
  });
}

/** One row of affineModel's input: v, v+1, v+2, v+3. */
export const affineRow = (v: number) => ({
  x: new Tensor('float32', Float32Array.from([v, v + 1, v + 2, v + 3]), [1, 4]),
});
