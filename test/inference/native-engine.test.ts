// The native ONNX Runtime engine (native/ort/ort_engine.cc, SIGHTFLOW_INFERENCE_ENGINE=native) on the CPU: it runs
// the binding's own libonnxruntime.so.1, so a session of it answers what the binding's answers, bit for bit, and
// a detector on it finds the same boxes, alone and batched. Its GPU options (TensorRT FP16 and caches, the cuDNN
// search) are the GPU check's to measure (docs/capacity.md, "The native engine").
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { BYO_MODELS, byoModelsSkip, byoPath } from '../../eval/byo-dir.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { type Detector, modelInput, type RawDetection } from '../../src/detection/detect.js';
import {
  createNativeSession,
  DEFAULT_ORT_ENGINE_PATH,
  loadOrtEngine,
  type EngineSettings,
} from '../../src/inference/native-session.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { Tensor } from '../../src/inference/runtime.js';
import { affineModel, collectingLog, loadRgb, tempDataDir } from '../helpers/inference.js';
import { assertSameBoxes } from '../helpers/detection-twins.js';
import { cpuDetector } from '../helpers/detectors.js';

const PHOTOS = ['000000000025', '000000000034', '000000000071', '000000000081', '000000000094'];
const NATIVE: EngineSettings = { kind: 'native', tensorrtCacheDir: '', cudnnSearch: 'exhaustive' };
const ENGINE_OPTIONS = {
  path: DEFAULT_ORT_ENGINE_PATH,
  fp16: false,
  cacheDir: '',
  cudnnSearch: 'exhaustive',
  cudaGraph: false,
} as const;

const require = createRequire(import.meta.url);

test('the engine is built (setup builds it for the tests) and loads the binding’s ONNX Runtime', () => {
  assert.ok(
    existsSync(DEFAULT_ORT_ENGINE_PATH),
    `${DEFAULT_ORT_ENGINE_PATH}: run bash scripts/lib/build-ort-engine.sh`,
  );
  const engine = loadOrtEngine(DEFAULT_ORT_ENGINE_PATH);
  // The binding's package version is its ONNX Runtime's.
  assert.equal(engine.version, (require('onnxruntime-node/package.json') as { version: string }).version);
  assert.ok(engine.apiVersion >= 29);
  assert.ok(engine.availableProviders().includes('CPUExecutionProvider'));
});

test('a session of the engine answers what the binding answers, bit for bit, with the same declarations', {
  skip: cocoSkip,
}, async (t) => {
  const dataDir = await tempDataDir(t);
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare('centernet-coco');
  const path = await registry.onnxPath('centernet-coco');
  const bytes = new Uint8Array(await readFile(path));
  const native = await createNativeSession(bytes, ['cpu'], undefined, 2, ENGINE_OPTIONS);
  const binding = await ort.InferenceSession.create(path, { intraOpNumThreads: 2, graphOptimizationLevel: 'all' });
  t.after(async () => {
    await native.release();
    await binding.release();
  });
  assert.deepEqual(native.inputNames, binding.inputNames);
  assert.deepEqual(native.outputNames, binding.outputNames);
  assert.deepEqual(native.inputMetadata, binding.inputMetadata);
  assert.deepEqual(native.outputMetadata, binding.outputMetadata);
  const img = await loadRgb(join(cocoDir(), 'images', `${PHOTOS[0]}.jpg`));
  const det = await detectorWith(t, 'binding');
  const input = (await modelInput(img, det.det.pre)).tensor;
  const a = await native.run({ images: input });
  const b = await binding.run({ images: input });
  assert.deepEqual(a.detections!.dims, b.detections!.dims);
  assert.deepEqual(a.detections!.data, b.detections!.data);
  // A fetch by name, and the input's memory read where it lies (a view into a larger buffer).
  const wide = new Float32Array(input.data.length + 7);
  wide.set(input.data as Float32Array, 7);
  const view = new ort.Tensor('float32', wide.subarray(7), input.dims);
  const c = await native.run({ images: view }, ['detections']);
  assert.deepEqual(c.detections!.data, b.detections!.data);
  // Shared memory, as the detector writes its inputs, is read in place too.
  const shared = new Float32Array(new SharedArrayBuffer(input.data.length * 4 + 12), 12, input.data.length);
  shared.set(input.data as Float32Array);
  const d = await native.run({ images: new ort.Tensor('float32', shared as never, input.dims) });
  assert.deepEqual(d.detections!.data, b.detections!.data);
});

/** A detector on the CPU through this engine (test/helpers/detectors.ts), batched as asked. */
const detectorWith = (
  t: TestContext,
  kind: 'binding' | 'native',
  batch = { maxBatch: 1, maxWaitMs: 0 },
  id = 'centernet-coco',
  file?: string,
) => cpuDetector(t, { batch, ...(kind === 'native' ? { engine: NATIVE } : {}) }, { id, file });

async function boxesOf(det: Detector, images: Awaited<ReturnType<typeof loadRgb>>[], together: boolean) {
  if (together) return Promise.all(images.map((img) => det.detectRaw(img, 0.05)));
  const out: RawDetection[][] = [];
  for (const img of images) out.push(await det.detectRaw(img, 0.05));
  return out;
}

test('the built-in detector on the engine finds the boxes the binding finds, alone and batched', {
  skip: cocoSkip,
}, async (t) => {
  const images = await Promise.all(PHOTOS.map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  const binding = await detectorWith(t, 'binding');
  const want = await boxesOf(binding.det, images, false);
  const alone = await detectorWith(t, 'native');
  const got = await boxesOf(alone.det, images, false);
  assert.ok(
    alone.log.lines.some((l) => /through the native engine/.test(l.msg)),
    alone.log.lines.map((l) => l.msg).join('\n'),
  );
  const batched = await detectorWith(t, 'native', { maxBatch: 8, maxWaitMs: 200 });
  const together = await boxesOf(batched.det, images, true);
  assert.equal(batched.det.handle.batchRefused, undefined);
  assert.ok(batched.det.handle.stats.runs < PHOTOS.length, `${batched.det.handle.stats.runs} calls: not batched`);
  PHOTOS.forEach((p, i) => {
    assert.ok(want[i]!.length >= 1, `${p}: something found`);
    assert.deepEqual(got[i], want[i], `${p}: alone`);
    assertSameBoxes(together[i]!, want[i]!, `${p}: batched`);
  });
});

test('a brought YOLOv8 export (made float, its output reduced in the graph) on the engine: the binding’s boxes', {
  skip: byoModelsSkip(BYO_MODELS['yolov8n-int8']) || cocoSkip,
}, async (t) => {
  const file = byoPath(BYO_MODELS['yolov8n-int8']);
  const images = await Promise.all(PHOTOS.slice(0, 3).map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  const binding = await detectorWith(t, 'binding', { maxBatch: 4, maxWaitMs: 200 }, 'yolov8n-int8', file);
  const native = await detectorWith(t, 'native', { maxBatch: 4, maxWaitMs: 200 }, 'yolov8n-int8', file);
  const want = await boxesOf(binding.det, images, true);
  const got = await boxesOf(native.det, images, true);
  images.forEach((_, i) => {
    assert.ok(want[i]!.length >= 1);
    assertSameBoxes(got[i]!, want[i]!, PHOTOS[i]!);
  });
});

test('bad arguments are coded errors; a bad graph rejects; a release with a run in flight lets the run end', async () => {
  const engine = loadOrtEngine(DEFAULT_ORT_ENGINE_PATH);
  const coded = (code: string) => (e: unknown) => (e as { code?: string }).code === code;
  await assert.rejects(engine.createSession(new Uint8Array([1, 2, 3]), { providers: ['cpu'] }), (e: unknown) => {
    assert.equal((e as { code?: string }).code, 'ERR_SIGHTFLOW_INFERENCE_FAILED');
    assert.match((e as Error).message, /protobuf|parse|model/i);
    return true;
  });
  assert.throws(
    () => engine.createSession(new Uint8Array([1]), { providers: ['opencl'] }),
    coded('ERR_SIGHTFLOW_INFERENCE_INVALID_ARG'),
  );
  assert.throws(
    () => engine.createSession(new Uint8Array([1]), { providers: ['cpu'], cudnnSearch: 'FASTEST' }),
    coded('ERR_SIGHTFLOW_INFERENCE_INVALID_ARG'),
  );
  assert.throws(
    () => engine.createSession(42 as never, { providers: ['cpu'] }),
    coded('ERR_SIGHTFLOW_INFERENCE_INVALID_ARG'),
  );
  await assert.rejects(
    engine.createSession('/nonexistent/model.onnx', { providers: ['cpu'] }),
    coded('ERR_SIGHTFLOW_INFERENCE_FAILED'),
  );

  // CUDA graphs asked for where the CUDA provider is not: the session runs without, and says why.
  const g = await engine.createSession(affineModel(), { providers: ['cpu'], cudaGraph: true });
  assert.equal(g.cudaGraph, false);
  assert.equal(g.cudaGraphNote, 'CUDA graphs need the cuda provider');
  g.release();
  const s = await engine.createSession(affineModel(), { providers: ['cpu'] });
  assert.equal(s.cudaGraph, false);
  assert.equal(s.cudaGraphNote, undefined);
  // A free dimension is declared by its name, as the binding declares it.
  const b = await ort.InferenceSession.create(affineModel());
  assert.deepEqual(s.inputMetadata, b.inputMetadata);
  assert.deepEqual(s.outputMetadata, b.outputMetadata);
  await b.release();
  const x = { type: 'float32', dims: [1, 4], data: new Float32Array([3, 4, 5, 6]) };
  assert.throws(() => s.run({ x: { ...x, dims: [1, 5] } }), coded('ERR_SIGHTFLOW_INFERENCE_INVALID_ARG'));
  assert.throws(() => s.run({ x: { ...x, dims: [1, -4] } }), coded('ERR_SIGHTFLOW_INFERENCE_INVALID_ARG'));
  assert.throws(() => s.run({ x: { ...x, type: 'complex64' } }), coded('ERR_SIGHTFLOW_INFERENCE_INVALID_ARG'));
  assert.throws(() => s.run({ x: { ...x, data: [3] } }), coded('ERR_SIGHTFLOW_INFERENCE_INVALID_ARG'));
  await assert.rejects(s.run({ y: x }), coded('ERR_SIGHTFLOW_INFERENCE_FAILED'));
  await assert.rejects(s.run({ x }, ['nope']), coded('ERR_SIGHTFLOW_INFERENCE_FAILED'));
  const inFlight = s.run({ x });
  s.release();
  const out = await inFlight;
  assert.deepEqual(out.y!.dims, [1, 4]);
  assert.deepEqual([...(out.y!.data as Float32Array)], [7, 9, 11, 13]);
  assert.throws(() => s.run({ x }), coded('ERR_SIGHTFLOW_INFERENCE_FAILED'));
});

test('the CUDA graph path’s fixed buffers and binding, run in host memory: a buffer set per input shape, the answers of plain runs', {
  skip: cocoSkip,
}, async (t) => {
  // On a card the same code binds card memory and replays a CUDA graph per shape; here (fixedBuffers) it binds host
  // memory, so what it shares with the card's path (a shape's buffers made once and reused, the binding, the
  // outputs' shapes from the batch, the fetched outputs copied out) is checked where no card is.
  const engine = loadOrtEngine(DEFAULT_ORT_ENGINE_PATH);
  const dataDir = await tempDataDir(t);
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare('centernet-coco');
  const { withBatchAxis } = await import('../../src/inference/batch-axis.js');
  const r = withBatchAxis(new Uint8Array(await readFile(await registry.onnxPath('centernet-coco'))));
  assert.ok(r.ok);
  const bound = await engine.createSession(r.bytes, { providers: ['cpu'], intraOpThreads: 2, fixedBuffers: true });
  const plain = await engine.createSession(r.bytes, { providers: ['cpu'], intraOpThreads: 2 });
  t.after(() => {
    bound.release();
    plain.release();
  });
  assert.equal(bound.fixedBuffers, true);
  assert.equal(plain.fixedBuffers, false);
  const det = await detectorWith(t, 'binding');
  const inputs = await Promise.all(
    PHOTOS.slice(0, 3).map(
      async (p) => (await modelInput(await loadRgb(join(cocoDir(), 'images', `${p}.jpg`)), det.det.pre)).tensor,
    ),
  );
  const per = inputs[0]!.data.length;
  const batchOf = (list: typeof inputs) => {
    const data = new Float32Array(per * list.length);
    list.forEach((x, i) => data.set(x.data as Float32Array, i * per));
    return { type: 'float32', dims: [list.length, ...inputs[0]!.dims.slice(1)], data };
  };
  // Batch 1, 2, 1 again (its buffers reused with another image), 3; two runs of one shape at once.
  for (const list of [[inputs[0]!], inputs.slice(0, 2), [inputs[2]!], inputs]) {
    const feeds = { images: batchOf(list) };
    const [a, b] = await Promise.all([bound.run(feeds), plain.run(feeds)]);
    assert.deepEqual(a.detections!.dims, b.detections!.dims);
    assert.deepEqual(a.detections!.data, b.detections!.data, `batch ${list.length}`);
  }
  const twice = await Promise.all([
    bound.run({ images: batchOf([inputs[1]!]) }),
    bound.run({ images: batchOf([inputs[2]!]) }),
  ]);
  const alone1 = await plain.run({ images: batchOf([inputs[1]!]) }, ['detections']);
  const alone2 = await plain.run({ images: batchOf([inputs[2]!]) }, ['detections']);
  assert.deepEqual(twice[0].detections!.data, alone1.detections!.data);
  assert.deepEqual(twice[1].detections!.data, alone2.detections!.data);
  // A name that is no output, and an input left out, fail that run only.
  await assert.rejects(bound.run({ images: batchOf([inputs[0]!]) }, ['nope']), /no output named nope/);
  await assert.rejects(bound.run({}), /input images was not given/);
  assert.deepEqual((await bound.run({ images: batchOf([inputs[0]!]) })).detections!.dims, [1, 100, 6]);
});

test('inputs in page-locked memory (its stand-in on the CPU): hostBuffer’s memory outlives its session; a detector joins its batches there, a smaller batch in a view of the largest, and finds the boxes runs alone find', {
  skip: cocoSkip,
}, async (t) => {
  // On a card hostBuffer is cudaHostAlloc's memory, which the card copies from directly; with fixedBuffers on the
  // CPU it is page-aligned host memory given the same way, so what the worker does with it is checked here.
  const engine = loadOrtEngine(DEFAULT_ORT_ENGINE_PATH);
  const coded = (code: string) => (e: unknown) => (e as { code?: string }).code === code;
  const bound = await engine.createSession(affineModel(), { providers: ['cpu'], fixedBuffers: true });
  const plain = await engine.createSession(affineModel(), { providers: ['cpu'] });
  assert.equal(bound.pinnedHost, true);
  assert.equal(plain.pinnedHost, false);
  assert.equal(plain.hostBuffer(64), undefined, 'no page-locked memory for a session on the CPU');
  assert.throws(() => bound.hostBuffer(0), coded('ERR_SIGHTFLOW_INFERENCE_INVALID_ARG'));
  assert.throws(() => bound.hostBuffer('8' as never), coded('ERR_SIGHTFLOW_INFERENCE_INVALID_ARG'));
  assert.throws(() => bound.hostBuffer(Number.NaN), coded('ERR_SIGHTFLOW_INFERENCE_INVALID_ARG'));
  const mem = bound.hostBuffer(4096 + 20);
  assert.ok(mem instanceof ArrayBuffer && mem.byteLength === 4096 + 20);
  // Two rows in a view of its start: the answer of the same rows in the heap.
  const x = new Float32Array(mem, 0, 8);
  x.set([3, 4, 5, 6, 1, 0, -1, 2]);
  const want = await plain.run({ x: { type: 'float32', dims: [2, 4], data: x.slice() } });
  const got = await bound.run({ x: { type: 'float32', dims: [2, 4], data: x } });
  assert.deepEqual(got.y!.data, want.y!.data);
  bound.release();
  plain.release();
  new Float32Array(mem).fill(1);
  assert.equal(new Float32Array(mem)[1028], 1, 'the memory stays its buffer’s after the session');

  const images = await Promise.all(PHOTOS.slice(0, 3).map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  const binding = await detectorWith(t, 'binding');
  const alone = await boxesOf(binding.det, images, false);
  const pinned = await cpuDetector(t, {
    batch: { maxBatch: 4, maxWaitMs: 200 },
    engine: { ...NATIVE, fixedBuffers: true },
  });
  await pinned.det.handle.session();
  assert.equal(pinned.det.handle.state().engine?.pinned_inputs, true);
  // Three together, two (in a view of the three's memory), one, three again: each photo its boxes alone.
  for (const idx of [[0, 1, 2], [1, 2], [2], [2, 0, 1]]) {
    const got = await boxesOf(
      pinned.det,
      idx.map((i) => images[i]!),
      true,
    );
    idx.forEach((i, k) => assertSameBoxes(got[k]!, alone[i]!, `${PHOTOS[i]} among ${idx.length}`));
  }
  assert.ok(pinned.det.handle.stats.runs < 9, `${pinned.det.handle.stats.runs} calls: not batched`);
});

/** A graph whose output only the run shapes (NonZero's count), which the bound path cannot bind beforehand. */
async function nonZeroModel(): Promise<Uint8Array> {
  const { OnnxGraphBuilder, DataType } = await import('../../src/inference/tfjs-import/onnx-builder.js');
  const b = new OnnxGraphBuilder();
  b.node('NonZero', ['x'], ['y']);
  return b.encode({
    name: 'nonzero',
    inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: [1, 4] }],
    outputs: [{ name: 'y', elemType: DataType.INT64, shape: [2, 'n'] }],
  });
}

test('a bound run that fails turns the session to plain runs, which answer; its status says why', async () => {
  const s = await loadOrtEngine(DEFAULT_ORT_ENGINE_PATH).createSession(await nonZeroModel(), {
    providers: ['cpu'],
    fixedBuffers: true,
  });
  assert.deepEqual(s.graphStatus(), { cudaGraph: false, fixedBuffers: true });
  const x = { type: 'float32', dims: [1, 4], data: new Float32Array([0, 1, 0, 2]) };
  const out = await s.run({ x });
  assert.deepEqual(out.y!.dims, [2, 2]);
  assert.deepEqual([...(out.y!.data as BigInt64Array)], [0n, 0n, 1n, 3n]);
  const status = s.graphStatus();
  assert.equal(status.fixedBuffers, false);
  assert.equal(
    status.note,
    'failed at a run, runs without since: output y has a shape known only at run time, which a CUDA graph cannot bind',
  );
  assert.deepEqual((await s.run({ x })).y!.dims, [2, 2]);
  s.release();
  assert.throws(() => s.graphStatus(), /session released/);
});

test('the runtime records a session whose bound path stopped: its serving state says why, the log says it once', async () => {
  const log = collectingLog();
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    log,
    engine: { ...NATIVE, fixedBuffers: true },
  });
  try {
    const model = await nonZeroModel();
    const h = runtime.register({ id: 'nonzero', load: async () => model });
    await h.session();
    assert.deepEqual(
      h.state().engine,
      { kind: 'native', cuda_graphs: { on: true }, pinned_inputs: true },
      'bound until a run fails; the page-locked stand-in on the CPU',
    );
    const feeds = { x: new Tensor('float32', new Float32Array([3, 0, 0, 4]), [1, 4]) };
    const out = await h.run(feeds);
    assert.deepEqual(out.y!.dims, [2, 2]);
    assert.deepEqual([...(out.y!.data as BigInt64Array)], [0n, 0n, 0n, 3n]);
    assert.equal(h.state().engine?.cuda_graphs?.on, false);
    assert.match(h.state().engine?.cuda_graphs?.note ?? '', /known only at run time/);
    await h.run(feeds);
    const warned = log.lines.filter((l) => /CUDA graphs stopped/.test(l.msg));
    assert.equal(warned.length, 1, JSON.stringify(warned));
    assert.match(warned[0]!.msg, /^model nonzero: CUDA graphs stopped; its session runs without them: failed at a run/);
  } finally {
    await runtime.release();
  }
});

test('TensorRT’s optimisation profile: batch 1 to the most for graphs with a free batch axis, none otherwise', async () => {
  const { tensorrtProfile } = await import('../../src/inference/native-session.js');
  const images = { name: 'images', shape: ['batch', 3, 640, 640], elemType: 1 };
  assert.deepEqual(tensorrtProfile([images], 8), {
    min: 'images:1x3x640x640',
    opt: 'images:8x3x640x640',
    max: 'images:8x3x640x640',
  });
  assert.deepEqual(tensorrtProfile([images, { name: 'scale', shape: [null, 2], elemType: 1 }], 4), {
    min: 'images:1x3x640x640,scale:1x2',
    opt: 'images:4x3x640x640,scale:4x2',
    max: 'images:4x3x640x640,scale:4x2',
  });
  assert.equal(tensorrtProfile([images], 1), undefined, 'one row a call');
  assert.equal(tensorrtProfile([{ ...images, shape: [1, 3, 640, 640] }], 8), undefined, 'no free batch axis');
  assert.equal(tensorrtProfile([{ ...images, shape: ['batch', 3, 'h', 'w'] }], 8), undefined, 'free sizes');
  // The engine takes it (the CPU provider ignores TensorRT's options) and wants all three shapes.
  const engine = loadOrtEngine(DEFAULT_ORT_ENGINE_PATH);
  const s = await engine.createSession(affineModel(), {
    providers: ['cpu'],
    trtProfile: { min: 'x:1x4', opt: 'x:8x4', max: 'x:8x4' },
  });
  s.release();
  assert.throws(
    () => engine.createSession(affineModel(), { providers: ['cpu'], trtProfile: { min: 'x:1x4' } as never }),
    (e: unknown) => (e as { code?: string }).code === 'ERR_SIGHTFLOW_INFERENCE_INVALID_ARG',
  );
});

test('TensorRT on the native engine takes the float32 graph and builds it in FP16 itself; the binding’s GPU sessions get the float16 graph', async () => {
  const { graphPlan } = await import('../../src/inference/graph-steps.js');
  const base = { dequantize: 'auto', fp16: 'auto', uint8Input: 'off', batchAxis: false, float16: true } as const;
  assert.equal(graphPlan({ ...base, providers: ['tensorrt', 'cuda', 'cpu'] }).fp16, true);
  assert.equal(graphPlan({ ...base, providers: ['cuda', 'cpu'], engineFp16: false }).fp16, true);
  assert.equal(graphPlan({ ...base, providers: ['tensorrt', 'cuda', 'cpu'], engineFp16: true }).fp16, undefined);
  assert.equal(
    graphPlan({ ...base, providers: ['tensorrt', 'cpu'], engineFp16: true, float16Io: true }).float16Export,
    'widen',
  );
  const runtime = (engine: EngineSettings | undefined, fp16: 'auto' | 'off') =>
    new InferenceRuntime({ providers: ['cpu'], engine, fp16, log: collectingLog() });
  assert.equal(runtime(NATIVE, 'auto').engineFp16(['tensorrt', 'cuda', 'cpu']), true);
  assert.equal(runtime(NATIVE, 'off').engineFp16(['tensorrt', 'cuda', 'cpu']), false);
  assert.equal(runtime(NATIVE, 'auto').engineFp16(['cuda', 'cpu']), false, 'the CUDA provider takes the float16 graph');
  assert.equal(runtime(undefined, 'auto').engineFp16(['tensorrt', 'cpu']), false, 'the binding cannot ask TensorRT');
});

test('SIGHTFLOW_INFERENCE_ENGINE=native without a built engine: the runtime is not made, and says how to build it', () => {
  assert.throws(
    () => new InferenceRuntime({ providers: ['cpu'], engine: { ...NATIVE, path: '/nonexistent/sightflow_ort.node' } }),
    /no engine is built at \/nonexistent\/sightflow_ort\.node \(bash scripts\/lib\/build-ort-engine\.sh/,
  );
});
