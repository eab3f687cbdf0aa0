// Detectors fed bytes, end to end on the CPU (the runtime's uint8Input 'on', SIGHTFLOW_INFERENCE_UINT8_INPUT):
// the runtime gives the graph its uint8 NHWC RGB input and the detector writes the letterbox or stretch as
// bytes. On COCO photos the detections equal the float path's up to the rounding of the input to whole bytes;
// a batch of bytes inputs answers what runs alone do; a graph the rewrite refuses keeps its float input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { BYO_MODELS, byoModelsSkip, byoPath } from '../../eval/byo-dir.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import type { Uint8InputMode } from '../../src/inference/uint8-input.js';
import { Detector, type RawDetection } from '../../src/detection/detect.js';
import { detectorPreprocess } from '../../src/detection/image-preprocess.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { cpuDetector } from '../helpers/detectors.js';
import { collectingLog, loadRgb, tempDataDir, tinyYoloOnnx } from '../helpers/inference.js';
import { assertSameBoxes, assertTwins, type TwinTolerance } from '../helpers/detection-twins.js';
import { BYTES_VS_FLOAT } from '../helpers/bytes-vs-float.js';

const PHOTOS = ['000000000025', '000000000034', '000000000071', '000000000081', '000000000094', '000000000049'];

const detector = (
  t: Parameters<typeof tempDataDir>[0],
  uint8Input: Uint8InputMode,
  opts: { id?: string; file?: string; batch?: { maxBatch: number; maxWaitMs: number } } = {},
) => cpuDetector(t, { uint8Input, batch: opts.batch ?? { maxBatch: 1, maxWaitMs: 0 } }, opts);

async function sameAsFloat(
  t: Parameters<typeof tempDataDir>[0],
  tol: TwinTolerance,
  id?: string,
  file?: string,
): Promise<void> {
  const floats = await detector(t, 'off', { id, file });
  const bytes = await detector(t, 'on', { id, file });
  assert.equal(await floats.det.handle.imageInput(), 'float32');
  assert.equal(await bytes.det.handle.imageInput(), 'uint8');
  // The session really loaded the graph that takes bytes.
  assert.equal((await bytes.det.handle.session()).inputMetadata?.[0]?.type, 'uint8');
  assert.equal((await floats.det.handle.session()).inputMetadata?.[0]?.type, 'float32');
  const { threshold, margin } = tol;
  let confident = 0;
  for (const p of PHOTOS) {
    const img = await loadRgb(join(cocoDir(), 'images', `${p}.jpg`));
    const a = await floats.det.detectRaw(img, threshold - margin);
    const b = await bytes.det.detectRaw(img, threshold - margin);
    confident += assertTwins(a, b, tol, `${id ?? 'centernet-coco'} ${p}`);
  }
  assert.ok(confident >= PHOTOS.length, `only ${confident} confident boxes over ${PHOTOS.length} photos`);
}

test('the built-in CenterNet fed bytes finds what it finds fed floats', { skip: cocoSkip }, async (t) => {
  await sameAsFloat(t, BYTES_VS_FLOAT['centernet-coco']);
});

test('a bring-your-own YOLOv8 int8 export fed bytes finds what it finds fed floats', {
  skip: byoModelsSkip(BYO_MODELS['yolov8n-int8']) || cocoSkip,
}, async (t) => {
  await sameAsFloat(t, BYTES_VS_FLOAT['yolov8n-int8'], 'yolov8n-int8', byoPath(BYO_MODELS['yolov8n-int8']));
});

test('bytes inputs batched: concurrent photos run in one call and each gets the boxes of a run alone', {
  skip: cocoSkip,
}, async (t) => {
  const images = await Promise.all(PHOTOS.map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  const alone = await detector(t, 'on');
  const one: RawDetection[][] = [];
  for (const img of images) one.push(await alone.det.detectRaw(img, 0.05));
  const batched = await detector(t, 'on', { batch: { maxBatch: 8, maxWaitMs: 200 } });
  await batched.det.handle.session();
  assert.equal(batched.det.handle.batchRefused, undefined);
  assert.equal(await batched.det.handle.imageInput(), 'uint8');
  const together = await Promise.all(images.map((img) => batched.det.detectRaw(img, 0.05)));
  assert.ok(batched.det.handle.stats.runs < PHOTOS.length, `${batched.det.handle.stats.runs} calls: not batched`);
  PHOTOS.forEach((p, i) => {
    const a = one[i]!,
      b = together[i]!;
    assert.ok(a.length >= 1, `${p}: something found`);
    // A batch's rows are each image's own computation (the same bytes, the same graph): equal up to the
    // float sums' order in a batched kernel.
    assertSameBoxes(b, a, `${p}, batched against alone`);
  });
});

test('a graph the rewrite refuses keeps its float input, with one warning', async (t) => {
  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, uint8Input: 'on', log });
  t.after(() => runtime.release());
  const graph = tinyYoloOnnx('yolov8', [{ cx: 8, cy: 8, w: 4, h: 4, cls: 0, score: 0.9 }], 2, 16);
  const handle = runtime.register({ id: 'tiny', load: async () => graph });
  // Its input is [batch, 3, 16, 16]: read as NHWC it has 16 channels, which the rewrite refuses.
  handle.offerBytesInput({ layout: 'nhwc', channelOrder: 'rgb', scale: 1 / 255 });
  assert.equal(await handle.imageInput(), 'float32');
  assert.equal((await handle.session()).inputMetadata?.[0]?.type, 'float32');
  assert.equal(await handle.imageInput(), 'float32');
  const warnings = log.lines.filter((l) => l.level === 'warn' && /tiny takes its image as float32/.test(l.msg));
  assert.equal(warnings.length, 1, JSON.stringify(log.lines));
});

test('a detector model loaded before any detector exists (a preload) takes bytes through the runtime port', async (t) => {
  const dataDir = await tempDataDir(t);
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare('centernet-coco');
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    uint8Input: 'on',
    log: collectingLog(),
  });
  t.after(() => runtime.release());
  // Without the port, the graph made before a detector offered its preprocessing keeps its float input.
  const early = runtime.register(registry.spec('centernet-coco'));
  assert.equal((await early.session()).inputMetadata?.[0]?.type, 'float32');
  await runtime.unregister('centernet-coco');
  runtime.imagePreprocess = detectorPreprocess(registry);
  const handle = runtime.register(registry.spec('centernet-coco'));
  assert.equal((await handle.session()).inputMetadata?.[0]?.type, 'uint8');
  // The detector made afterwards sees the bytes graph and feeds it.
  const det = await Detector.create(runtime, registry, 'centernet-coco');
  assert.equal(await det.handle.imageInput(), 'uint8');
  // Models of other tasks have no image preprocessing to give.
  assert.equal(await detectorPreprocess(registry)('no-such-model'), undefined);
});
