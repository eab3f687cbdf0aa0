// A detector's graph that takes its image as bytes (uint8 NHWC RGB) and normalises it itself, as a GPU would
// be fed: on COCO photos its outputs equal the original graph's fed the CPU preprocessing of the same bytes
// ((pixel * scale - mean) / std, channel order, layout), for the built-in CenterNet (NHWC, 0..255) and a
// YOLOv8 export (NCHW, /255).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { BYO_MODELS, byoModelsSkip, byoPath } from '../../eval/byo-dir.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { withUint8Input } from '../../src/inference/uint8-input.js';
import { Detector } from '../../src/detection/detect.js';
import type { ModelInputSpec } from '../../src/detection/detector-config.js';
import { letterboxAsync } from '../../src/native/image.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { collectingLog, loadRgb, tempDataDir } from '../helpers/inference.js';

/** The photo resized into the model's input as bytes (the letterbox's own resize, rounded to whole pixels). */
async function bytesFor(photo: string, pre: ModelInputSpec): Promise<Uint8Array> {
  const img = await loadRgb(join(cocoDir(), 'images', `${photo}.jpg`));
  const r = await letterboxAsync(img, {
    width: pre.width,
    height: pre.height,
    layout: 'nhwc',
    scale: 1,
    channelOrder: 'rgb',
    center: pre.center,
  });
  return Uint8Array.from(r.tensor as Float32Array, (v) => Math.max(0, Math.min(255, Math.round(v))));
}

/** The CPU preprocessing of those bytes: (pixel * scale - mean[c]) / std[c] in the model's channel order and layout. */
function cpuTensor(u8: Uint8Array, pre: ModelInputSpec): Float32Array {
  const { width: W, height: H } = pre;
  const mean = pre.mean ?? [0, 0, 0],
    std = pre.std ?? [1, 1, 1];
  const out = new Float32Array(W * H * 3);
  for (let p = 0; p < W * H; p++) {
    for (let c = 0; c < 3; c++) {
      const src = pre.channelOrder === 'bgr' ? 2 - c : c;
      const v = (u8[p * 3 + src]! * pre.scale - mean[c]!) / std[c]!;
      out[pre.layout === 'nhwc' ? p * 3 + c : c * W * H + p] = v;
    }
  }
  return out;
}

async function check(t: Parameters<typeof tempDataDir>[0], id: string, file?: string): Promise<void> {
  const dataDir = await tempDataDir(t);
  if (file) await writeByoManifest(dataDir, { id, task: 'detect', file });
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare(id);
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 2, sessions: 1, log: collectingLog() });
  t.after(() => runtime.release());
  const { pre } = await Detector.create(runtime, registry, id);
  const bytes = new Uint8Array(await readFile(await registry.onnxPath(id)));
  const r = withUint8Input(bytes, pre);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  const original = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 2 });
  const u8graph = await ort.InferenceSession.create(r.bytes, { intraOpNumThreads: 2 });
  t.after(async () => {
    await original.release();
    await u8graph.release();
  });
  const dims = pre.layout === 'nhwc' ? [1, pre.height, pre.width, 3] : [1, 3, pre.height, pre.width];
  for (const photo of ['000000000025', '000000000071']) {
    const u8 = await bytesFor(photo, pre);
    const a = Object.values(
      await original.run({ [pre.inputName]: new ort.Tensor('float32', cpuTensor(u8, pre), dims) }),
    )[0]!;
    const b = Object.values(
      await u8graph.run({ [pre.inputName]: new ort.Tensor('uint8', u8, [1, pre.height, pre.width, 3]) }),
    )[0]!;
    assert.deepEqual(b.dims, a.dims);
    const x = a.data as Float32Array,
      y = b.data as Float32Array;
    let worst = 0,
      top = 0;
    for (let i = 0; i < x.length; i++) {
      worst = Math.max(worst, Math.abs(x[i]! - y[i]!));
      top = Math.max(top, Math.abs(x[i]!));
    }
    assert.ok(worst <= 1e-4 * Math.max(1, top), `${id} ${photo}: outputs differ by up to ${worst} (largest ${top})`);
  }
}

test('the built-in CenterNet fed bytes normalises them in its graph as the CPU does', { skip: cocoSkip }, async (t) => {
  await check(t, 'centernet-coco');
});

test('a YOLOv8 export (NCHW, /255) fed bytes normalises them in its graph as the CPU does', {
  skip: byoModelsSkip(BYO_MODELS['yolov8n-int8']) || cocoSkip,
}, async (t) => {
  await check(t, 'yolov8n-int8', byoPath(BYO_MODELS['yolov8n-int8']));
});
