// Batch sizes and warm-up: a batched detector's sessions may keep to a few batch sizes (a batch padded with
// blank images up to the next), and run each once as they load, so a GPU provider meets every shape it will
// see (cuDNN's kernel search, a TensorRT profile) before a request waits on it. On the CPU both are off by
// default; here they are asked for, through the real runtime and its worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { OnnxGraphBuilder, DataType } from '../../src/inference/tfjs-import/onnx-builder.js';
import { InferenceRuntime, Tensor } from '../../src/inference/runtime.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { batchSizesFor, paddedSize, parseBatchSizes, warmupOrder } from '../../src/inference/dynamic-batch.js';
import { Detector, type RawDetection } from '../../src/detection/detect.js';
import { enableMetrics, renderMetrics } from '../../src/metrics/registry.js';
import { loadConfig } from '../../src/config/index.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { parseExposition, sampleSum } from '../helpers/metrics-text.js';
import { assertSameBoxes } from '../helpers/detection-twins.js';
import { affineModel, affineRow, collectingLog, loadRgb, tempDataDir } from '../helpers/inference.js';

test('the sizes: every size on the CPU, powers of two and the most on a GPU provider, a list as given with 1 and the most', () => {
  assert.equal(batchSizesFor(['cpu'], 8), null, 'auto on the CPU: every size');
  assert.deepEqual(batchSizesFor(['cuda', 'cpu'], 8), [1, 2, 4, 8]);
  assert.deepEqual(batchSizesFor(['tensorrt', 'cuda', 'cpu'], 32), [1, 2, 4, 8, 16, 32]);
  assert.deepEqual(batchSizesFor(['cuda'], 12), [1, 2, 4, 8, 12], 'the most is a size of its own');
  assert.equal(batchSizesFor(['cuda'], 1), null, 'one image a call');
  assert.equal(batchSizesFor(['cuda'], 32, 'all'), null);
  assert.deepEqual(batchSizesFor(['cpu'], 32, [4, 16]), [1, 4, 16, 32], 'a list applies on the CPU too');
  assert.deepEqual(batchSizesFor(['cuda'], 8, [64]), [1, 8], 'nothing over the most');
  assert.equal(batchSizesFor(['cuda'], 2, [1, 2]), null, 'a list of every size pads nothing');
  assert.equal(paddedSize(3, [1, 2, 4, 8]), 4);
  assert.equal(paddedSize(8, [1, 2, 4, 8]), 8);
  assert.equal(paddedSize(5, null), 5);
  assert.deepEqual(warmupOrder([1, 2, 4, 8, 16]), [16, 1, 2, 4, 8], 'the largest first, then the smallest');
  assert.deepEqual(warmupOrder([1]), [1]);
  assert.equal(parseBatchSizes('auto'), 'auto');
  assert.equal(parseBatchSizes(' ALL '), 'all');
  assert.deepEqual(parseBatchSizes('8, 1,4,4'), [1, 4, 8]);
  for (const bad of ['0', 'x', '1.5', '2,-1', '', '4,,8', '5000'])
    if (bad === '') assert.equal(parseBatchSizes(bad), 'auto', 'unset is auto');
    else assert.throws(() => parseBatchSizes(bad), /is not a batch size/, bad);
});

test('the settings: SIGHTFLOW_BATCH_SIZES and SIGHTFLOW_MODEL_WARMUP, junk refused by name', () => {
  const c = loadConfig({ SIGHTFLOW_BATCH_SIZES: '1,8,32', SIGHTFLOW_MODEL_WARMUP: 'on' });
  assert.deepEqual(c.inference.batchSizes, [1, 8, 32]);
  assert.equal(c.inference.warmup, 'on');
  const d = loadConfig({});
  assert.equal(d.inference.batchSizes, 'auto');
  assert.equal(d.inference.warmup, 'auto');
  assert.throws(
    () => loadConfig({ SIGHTFLOW_BATCH_SIZES: '8,eight' }),
    /SIGHTFLOW_BATCH_SIZES.*"eight" is not a batch size/,
  );
  assert.throws(() => loadConfig({ SIGHTFLOW_MODEL_WARMUP: 'yes' }), /SIGHTFLOW_MODEL_WARMUP/);
});

function affineRuntime(
  t: { after: (fn: () => Promise<void>) => void },
  opts: ConstructorParameters<typeof InferenceRuntime>[0],
) {
  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, sessions: 1, log, ...opts });
  t.after(() => runtime.release());
  const model = runtime.register({ id: 'affine', load: async () => affineModel(), dynamicBatch: true });
  return { runtime, model, log };
}

test('a batch padded to the next size: each caller gets its own rows, the blank rows are counted and dropped', async (t) => {
  enableMetrics({ projectLabel: false });
  const { model } = affineRuntime(t, { batch: { maxBatch: 8, maxWaitMs: 200 }, batchSizes: [1, 4, 8], warmup: 'off' });
  await model.session();
  assert.deepEqual(model.state().batch, { max_size: 8, max_delay_ms: 200, sizes: [1, 4, 8] });
  assert.equal(model.state().warmup, null, 'warm-up off');
  const before = sampleSum(
    parseExposition((await renderMetrics(undefined)).body),
    'sightflow_model_padded_items_total',
    {
      model: 'affine',
    },
  );
  // Three rows in one call, padded to four; then five, padded to eight (the joined memory of a size is reused,
  // so the blank rows must be blank again, not the rows of the call before).
  for (const n of [3, 5, 3]) {
    const runs0 = model.stats.runs;
    const outs = await Promise.all(Array.from({ length: n }, (_, i) => model.run(affineRow(10 * i))));
    assert.equal(model.stats.runs - runs0, 1, `${n} rows in one call`);
    outs.forEach((o, i) => {
      assert.deepEqual(o.y.dims, [1, 4]);
      assert.deepEqual(Array.from(o.y.data as Float32Array), [20 * i + 1, 20 * i + 3, 20 * i + 5, 20 * i + 7]);
    });
  }
  assert.equal(model.stats.padded, 1 + 3 + 1);
  const after = sampleSum(
    parseExposition((await renderMetrics(undefined)).body),
    'sightflow_model_padded_items_total',
    {
      model: 'affine',
    },
  );
  assert.equal(after - before, 5, 'the metric counts the blank rows');
  // A lone row runs alone, unpadded.
  const runs0 = model.stats.runs;
  assert.deepEqual(Array.from((await model.run(affineRow(2))).y.data as Float32Array), [5, 7, 9, 11]);
  assert.equal(model.stats.runs - runs0, 1);
  assert.equal(model.stats.padded, 5);
});

test('padding counts rows, not items: an item of two rows and one of one run as four rows', async (t) => {
  const { model } = affineRuntime(t, { batch: { maxBatch: 8, maxWaitMs: 200 }, batchSizes: [1, 4, 8], warmup: 'off' });
  await model.session();
  const two = { x: new Tensor('float32', Float32Array.from([0, 1, 2, 3, 10, 11, 12, 13]), [2, 4]) };
  const [a, b] = await Promise.all([model.run(two), model.run(affineRow(20))]);
  assert.deepEqual(a.y.dims, [2, 4]);
  assert.deepEqual(Array.from(a.y.data as Float32Array), [1, 3, 5, 7, 21, 23, 25, 27]);
  assert.deepEqual(Array.from(b.y.data as Float32Array), [41, 43, 45, 47]);
  assert.equal(model.stats.padded, 1, 'three rows padded to four');
});

test('every size (the CPU default): no padding', async (t) => {
  const { model } = affineRuntime(t, { batch: { maxBatch: 8, maxWaitMs: 200 }, warmup: 'off' });
  await model.session();
  assert.equal(model.state().batch?.sizes, null);
  await Promise.all(Array.from({ length: 3 }, (_, i) => model.run(affineRow(i))));
  assert.equal(model.stats.padded, 0);
});

test('a warm-up as each session loads: its sizes largest first, each timed, in the serving state and the log', async (t) => {
  const { model, log } = affineRuntime(t, {
    batch: { maxBatch: 8, maxWaitMs: 0 },
    batchSizes: [1, 2, 4],
    warmup: 'on',
    sessions: 2,
  });
  await model.session();
  const w = model.state().warmup;
  assert.ok(w && 'batch_sizes' in w, JSON.stringify(w));
  assert.deepEqual(w.batch_sizes, [8, 1, 2, 4]);
  assert.equal(w.ms.length, 4);
  for (const ms of w.ms) assert.ok(Number.isFinite(ms) && ms >= 0, String(ms));
  const line = log.lines.find((l) =>
    /model affine: session 1 warmed up at batch sizes 8, 1, 2, 4 in \d+ ms/.test(l.msg),
  );
  assert.ok(line, log.lines.map((l) => l.msg).join('\n'));
  // Further sessions warm up too, as overlapping runs load them.
  for (const end = Date.now() + 30_000; model.loadedSessions < 2 && Date.now() < end; ) {
    await Promise.all(Array.from({ length: 4 }, (_, i) => model.run(affineRow(i))));
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(model.loadedSessions, 2);
  assert.ok(
    log.lines.some((l) => /model affine: session 2 warmed up at batch sizes 8, 1, 2, 4/.test(l.msg)),
    log.lines.map((l) => l.msg).join('\n'),
  );
  // Every size when no list is set: 1 to the most.
  const every = affineRuntime(t, { batch: { maxBatch: 3, maxWaitMs: 0 }, warmup: 'on' });
  await every.model.session();
  assert.deepEqual((every.model.state().warmup as { batch_sizes: number[] }).batch_sizes, [3, 1, 2]);
});

test('no warm-up by default on the CPU; a model with its own batching warms up its sizes too', async (t) => {
  const { model } = affineRuntime(t, { batch: { maxBatch: 4, maxWaitMs: 0 } });
  await model.session();
  assert.equal(model.state().warmup, null);
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    sessions: 1,
    warmup: 'on',
    log: collectingLog(),
  });
  t.after(() => runtime.release());
  // OCR's classifier and recogniser, CLIP: batched through their own settings, not the detectors'.
  const own = runtime.register({ id: 'own', load: async () => affineModel(), batch: { maxBatch: 4, maxWaitMs: 0 } });
  await own.session();
  assert.deepEqual((own.state().warmup as { batch_sizes: number[] }).batch_sizes, [4, 1, 2, 3]);
  // One item a call: size 1 alone.
  const single = runtime.register({ id: 'single', load: async () => affineModel() });
  await single.session();
  assert.deepEqual((single.state().warmup as { batch_sizes: number[] }).batch_sizes, [1]);
});

test('a graph with a free dimension besides the batch is not warmed up: the session serves and its log says why', async (t) => {
  const b = new OnnxGraphBuilder();
  b.node('Relu', ['x'], ['y']);
  const bytes = b.encode({
    name: 'free',
    inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: ['batch', 'width'] }],
    outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: ['batch', 'width'] }],
  });
  const log = collectingLog();
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    sessions: 1,
    log,
    warmup: 'on',
    batch: { maxBatch: 2, maxWaitMs: 0 },
  });
  t.after(() => runtime.release());
  const model = runtime.register({ id: 'free', load: async () => bytes, dynamicBatch: true });
  await model.session();
  const w = model.state().warmup;
  assert.ok(w && 'skipped' in w, JSON.stringify(w));
  assert.match(w.skipped, /input x has a free dimension 1 \(width\) besides the batch/);
  assert.ok(
    log.lines.some((l) => l.level === 'info' && /model free: session 1 not warmed up: input x/.test(l.msg)),
    'said (a dimension the image sets, as OCR has), not warned about',
  );
  const out = await model.run({
    x: new Tensor('float32', Float32Array.from([-1, 2, -3]), [1, 3]),
  });
  assert.deepEqual(Array.from(out.y.data as Float32Array), [0, 2, 0]);
});

test('the built-in detector warmed up and padded: three photos in a batch of four answer what each does alone', {
  skip: cocoSkip,
}, async (t) => {
  const photos = ['000000000025', '000000000034', '000000000071'];
  const images = await Promise.all(photos.map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  const dataDir = await tempDataDir(t);
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare('centernet-coco');
  const make = async (opts: ConstructorParameters<typeof InferenceRuntime>[0]) => {
    const runtime = new InferenceRuntime({
      providers: ['cpu'],
      intraOpThreads: 2,
      sessions: 1,
      log: collectingLog(),
      ...opts,
    });
    t.after(() => runtime.release());
    return Detector.create(runtime, registry, 'centernet-coco');
  };
  const alone = await make({ batch: { maxBatch: 1, maxWaitMs: 0 } });
  const one: RawDetection[][] = [];
  for (const img of images) one.push(await alone.detectRaw(img, 0.05));

  const padded = await make({ batch: { maxBatch: 4, maxWaitMs: 300 }, batchSizes: [1, 4], warmup: 'on' });
  await padded.handle.session();
  const w = padded.handle.state().warmup;
  assert.ok(w && 'batch_sizes' in w, `the detector's session warmed up: ${JSON.stringify(w)}`);
  assert.deepEqual(w.batch_sizes, [4, 1]);
  const runs0 = padded.handle.stats.runs;
  const together = await Promise.all(images.map((img) => padded.detectRaw(img, 0.05)));
  assert.equal(padded.handle.stats.runs - runs0, 1, 'one call');
  assert.equal(padded.handle.stats.padded, 1, 'padded to four');
  photos.forEach((p, i) => {
    assert.ok(one[i]!.length >= 1, `${p}: something found`);
    assertSameBoxes(together[i]!, one[i]!, p);
  });
});
