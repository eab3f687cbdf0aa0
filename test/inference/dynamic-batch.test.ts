// Dynamic batching of detectors: images from concurrent callers run as one session call (up to a maximum
// batch, after at most a maximum queue delay), and each gets what a run of its own would have answered. The
// built-in CenterNet is exported for one image ([1, 512, 512, 3]); its graph gets a batch axis when it loads.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { BYO_MODELS, byoModelsSkip, byoPath } from '../../eval/byo-dir.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { ModelQueue } from '../../src/inference/model-queue.js';
import { withBatchAxis } from '../../src/inference/batch-axis.js';
import { batchFor } from '../../src/inference/dynamic-batch.js';
import { Detector, type RawDetection } from '../../src/detection/detect.js';
import { iou } from '../../src/detection/yolo.js';
import { OnnxGraphBuilder, DataType } from '../../src/inference/tfjs-import/onnx-builder.js';
import { Tensor } from '../../src/inference/runtime.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { collectingLog, loadRgb, tempDataDir } from '../helpers/inference.js';
import { assertSameBoxes } from '../helpers/detection-twins.js';

const PHOTOS = ['000000000025', '000000000034', '000000000071', '000000000081', '000000000094'];

async function detectorWith(
  t: Parameters<typeof tempDataDir>[0],
  batch: { maxBatch: number; maxWaitMs: number },
  id = 'centernet-coco',
  file?: string,
) {
  const dataDir = await tempDataDir(t);
  if (file) await writeByoManifest(dataDir, { id, task: 'detect', file });
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare(id);
  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 2, sessions: 1, batch, log });
  t.after(() => runtime.release());
  return { det: await Detector.create(runtime, registry, id), log, registry };
}

test('the defaults: one image a call on the CPU, batches on a GPU provider; the configuration wins', () => {
  assert.deepEqual(batchFor(['cpu']), { maxBatch: 1, maxWaitMs: 0 });
  assert.deepEqual(batchFor(['cuda', 'cpu']), { maxBatch: 8, maxWaitMs: 2 });
  assert.deepEqual(batchFor(['cpu'], { maxBatch: 4 }), { maxBatch: 4, maxWaitMs: 0 });
});

test('the built-in detector batched: concurrent photos run in one call and each gets the boxes of a run alone', {
  skip: cocoSkip,
}, async (t) => {
  const images = await Promise.all(PHOTOS.map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  const alone = await detectorWith(t, { maxBatch: 1, maxWaitMs: 0 });
  const one: RawDetection[][] = [];
  for (const img of images) one.push(await alone.det.detectRaw(img, 0.05));
  assert.equal(alone.det.handle.stats.runs, PHOTOS.length);

  const batched = await detectorWith(t, { maxBatch: 8, maxWaitMs: 200 });
  await batched.det.handle.session(); // the graph takes its batch axis as it loads
  assert.equal(batched.det.handle.batchRefused, undefined);
  assert.deepEqual(batched.det.handle.batchInForce, { maxBatch: 8, maxWaitMs: 200 });
  const together = await Promise.all(images.map((img) => batched.det.detectRaw(img, 0.05)));
  assert.equal(batched.det.handle.stats.items, PHOTOS.length);
  assert.ok(
    batched.det.handle.stats.runs < PHOTOS.length,
    `${batched.det.handle.stats.runs} calls for ${PHOTOS.length} photos: they were not batched`,
  );
  PHOTOS.forEach((p, i) => {
    assert.ok(one[i]!.length >= 1, `${p}: something found`);
    assertSameBoxes(together[i]!, one[i]!, p);
  });
});

test("the built-in graph with a batch axis: three images in one call answer each one's rows of the original graph", {
  skip: cocoSkip,
}, async (t) => {
  const dataDir = await tempDataDir(t);
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare('centernet-coco');
  const bytes = new Uint8Array(await readFile(await registry.onnxPath('centernet-coco')));
  const r = withBatchAxis(bytes);
  assert.ok(r.ok && r.changed && !r.coupled, JSON.stringify(r.ok ? r.notes : r.reason));
  const original = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 2 });
  const rewritten = await ort.InferenceSession.create(r.bytes, { intraOpNumThreads: 2 });
  t.after(async () => {
    await original.release();
    await rewritten.release();
  });
  const det = await detectorWith(t, { maxBatch: 1, maxWaitMs: 0 });
  const { modelInput } = await import('../../src/detection/detect.js');
  const inputs = await Promise.all(
    PHOTOS.slice(0, 3).map(
      async (p) => (await modelInput(await loadRgb(join(cocoDir(), 'images', `${p}.jpg`)), det.det.pre)).tensor,
    ),
  );
  const per = inputs[0]!.data.length;
  const joined = new Float32Array(per * 3);
  inputs.forEach((x, i) => joined.set(x.data as Float32Array, i * per));
  const out = (await rewritten.run({ images: new ort.Tensor('float32', joined, [3, 512, 512, 3]) })).detections!;
  assert.deepEqual(out.dims, [3, 100, 6]);
  for (let i = 0; i < 3; i++) {
    const own = (await original.run({ images: inputs[i]! })).detections!;
    const rows = (out.data as Float32Array).subarray(i * 600, (i + 1) * 600);
    // Top-100 rows whose scores tie may swap places: compare the rows that score above the noise, as sets.
    const key = (d: Float32Array, o: number) => [d[o + 4]!, d[o + 5]!, d[o]!, d[o + 1]!, d[o + 2]!, d[o + 3]!];
    const a = [...Array(100).keys()].map((k) => key(own.data as Float32Array, k * 6)).filter((x) => x[0]! > 0.05);
    const b = [...Array(100).keys()].map((k) => key(rows, k * 6)).filter((x) => x[0]! > 0.05);
    assert.equal(b.length, a.length, `image ${i}`);
    for (const x of b)
      assert.ok(
        a.some((y) => y[1] === x[1] && Math.abs(y[0]! - x[0]!) < 1e-4 && iou(y.slice(2), x.slice(2)) > 0.999),
        `image ${i}: ${x}`,
      );
  }
});

test('yolov8n-int8 (per-tensor dynamic int8) batched: each image keeps its own quantisation range, so a batch answers exactly what runs alone do', {
  skip: byoModelsSkip(BYO_MODELS['yolov8n-int8']) || cocoSkip,
}, async (t) => {
  const file = byoPath(BYO_MODELS['yolov8n-int8']);
  const bytes = new Uint8Array(await readFile(file));
  const r = withBatchAxis(bytes);
  assert.ok(r.ok && r.changed && !r.coupled, JSON.stringify(r.ok ? r.notes : r.reason));
  assert.ok(
    r.notes.some((n) => /59 DynamicQuantizeLinear quantise each image with its own range/.test(n)),
    r.notes.join('; '),
  );

  // The graph itself: three photos in one call give each photo's raw output of the original graph, bit for bit.
  const images = await Promise.all(PHOTOS.slice(0, 3).map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  const alone = await detectorWith(t, { maxBatch: 1, maxWaitMs: 0 }, 'yolov8n-int8', file);
  const { modelInput } = await import('../../src/detection/detect.js');
  const inputs = await Promise.all(images.map(async (img) => (await modelInput(img, alone.det.pre)).tensor));
  const original = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 2 });
  const rewritten = await ort.InferenceSession.create(r.bytes, { intraOpNumThreads: 2 });
  t.after(async () => {
    await original.release();
    await rewritten.release();
  });
  const per = inputs[0]!.data.length;
  const joined = new Float32Array(per * 3);
  inputs.forEach((x, i) => joined.set(x.data as Float32Array, i * per));
  const out = (await rewritten.run({ images: new ort.Tensor('float32', joined, [3, 3, 640, 640]) })).output0!;
  assert.deepEqual(out.dims, [3, 84, 8400]);
  for (let i = 0; i < 3; i++) {
    const own = (await original.run({ images: inputs[i]! })).output0!.data as Float32Array;
    const rows = (out.data as Float32Array).subarray(i * own.length, (i + 1) * own.length);
    let worst = 0;
    for (let k = 0; k < own.length; k++) worst = Math.max(worst, Math.abs(own[k]! - rows[k]!));
    assert.ok(worst <= 1e-3, `photo ${i}: raw outputs differ by up to ${worst}`);
  }

  // Through the runtime: concurrent photos batched, each with the boxes of its run alone.
  const one: RawDetection[][] = [];
  for (const img of images) one.push(await alone.det.detectRaw(img, 0.25));
  const batched = await detectorWith(t, { maxBatch: 8, maxWaitMs: 200 }, 'yolov8n-int8', file);
  await batched.det.handle.session();
  assert.equal(batched.det.handle.batchRefused, undefined);
  const together = await Promise.all(images.map((img) => batched.det.detectRaw(img, 0.25)));
  assert.ok(
    batched.det.handle.stats.runs < images.length,
    `${batched.det.handle.stats.runs} calls for ${images.length} photos`,
  );
  images.forEach((_, i) => {
    assert.ok(one[i]!.length >= 1, `photo ${i}: something found`);
    assertSameBoxes(together[i]!, one[i]!, `photo ${i}`);
  });
});

test('a graph the rewrite cannot vouch for runs one image a call, and its log says which node', async (t) => {
  // [1, 3, 2, 2] -> Transpose(perm 1, 0, 2, 3): its first axis moves, so at batch N the rows would mix.
  const b = new OnnxGraphBuilder();
  b.node('Transpose', ['x'], ['y'], { perm: [1, 0, 2, 3] }, 'swap');
  const bytes = b.encode({
    name: 'swap',
    inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: [1, 3, 2, 2] }],
    outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: [3, 1, 2, 2] }],
  });
  const r = withBatchAxis(bytes);
  assert.ok(!r.ok && /Transpose node swap: it moves the first axis/.test(r.reason), JSON.stringify(r));
  const log = collectingLog();
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    sessions: 1,
    batch: { maxBatch: 4, maxWaitMs: 50 },
    log,
  });
  t.after(() => runtime.release());
  const h = runtime.register({ id: 'swap', load: async () => bytes, dynamicBatch: true });
  await h.session();
  assert.match(h.batchRefused ?? '', /Transpose node swap/);
  assert.deepEqual(h.batchInForce, { maxBatch: 1, maxWaitMs: 0 });
  assert.ok(log.lines.some((l) => l.level === 'warn' && /runs one image a call: Transpose node swap/.test(l.msg)));
  const outs = await Promise.all(
    [0, 1, 2].map((k) =>
      h.run({
        x: new Tensor(
          'float32',
          Float32Array.from({ length: 12 }, (_, i) => i + 100 * k),
          [1, 3, 2, 2],
        ),
      }),
    ),
  );
  assert.equal(h.stats.runs, 3);
  outs.forEach((o, k) =>
    assert.deepEqual(
      [...(o.y!.data as Float32Array)],
      Array.from({ length: 12 }, (_, i) => i + 100 * k),
    ),
  );
});

test('the queue delay bound: an item that comes close after another waits its max delay for company and no longer, counted from the first item; a full batch does not wait', async () => {
  const started: { at: number; size: number }[] = [];
  const q = new ModelQueue<number, number>({ name: 'bound', depth: 32, maxBatch: 4, maxWaitMs: 300 }, async (items) => {
    started.push({ at: performance.now(), size: items.length });
    return items;
  });
  // Item 0 comes after a quiet spell, so it runs at once; item 1 comes right after it, so it expects company.
  await q.submit(0);
  const t0 = performance.now();
  const first = q.submit(1);
  await new Promise((r) => setTimeout(r, 150));
  const second = q.submit(2);
  assert.deepEqual(await Promise.all([first, second]), [1, 2]);
  assert.deepEqual(
    started.map((s) => s.size),
    [1, 2],
  );
  const waited = started[1]!.at - t0;
  // Not before the first item's delay, and before the second item's own delay would have run out.
  assert.ok(waited >= 299, `dispatched after ${waited} ms, before the 300 ms delay`);
  assert.ok(waited < 450, `dispatched after ${waited} ms: the delay counts from the first item`);

  const t1 = performance.now();
  const full = await Promise.all([5, 6, 7, 8].map((n) => q.submit(n)));
  assert.deepEqual(full, [5, 6, 7, 8]);
  assert.equal(started[2]!.size, 4);
  assert.ok(started[2]!.at - t1 < 150, `a full batch waited ${started[2]!.at - t1} ms`);
});

test('an item alone after a quiet spell does not wait for company: it runs with what came in the same turn', async () => {
  const started: { at: number; size: number }[] = [];
  const q = new ModelQueue<number, number>({ name: 'lone', depth: 32, maxBatch: 8, maxWaitMs: 300 }, async (items) => {
    started.push({ at: performance.now(), size: items.length });
    return items;
  });
  // One client: each request comes well after the last one's answer.
  for (const n of [1, 2, 3]) {
    const t0 = performance.now();
    assert.equal(await q.submit(n), n);
    assert.ok(started.at(-1)!.at - t0 < 100, `a lone item waited ${started.at(-1)!.at - t0} ms`);
    await new Promise((r) => setTimeout(r, 320));
  }
  // Items submitted in one turn after a quiet spell run together, at once.
  const t1 = performance.now();
  assert.deepEqual(await Promise.all([4, 5, 6].map((n) => q.submit(n))), [4, 5, 6]);
  assert.deepEqual(
    started.map((s) => s.size),
    [1, 1, 1, 3],
  );
  assert.ok(started[3]!.at - t1 < 100, `the turn's items waited ${started[3]!.at - t1} ms`);
});
