// An int8 export made float as a GPU provider loads it (src/inference/dequantize-graph.ts): the real dynamic
// int8 exports lose every integer node, load on the CPU provider and find the int8 graph's boxes on COCO
// photos; the runtime applies the rewrite when its setting says so, before the batch axis, and a batch of the
// float graph answers what runs alone do; small graphs of each pattern compute the float graph of the
// export's own weights exactly, and a graph the rewrite cannot vouch for loads as exported with one warning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import onnxProto from 'onnx-proto';
import { BYO_MODELS, byoModelsSkip, byoPath, type ByoModelId } from '../../eval/byo-dir.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { dequantizeGraph, type DequantizeMode } from '../../src/inference/dequantize-graph.js';
import { graphPlan, makeGraph } from '../../src/inference/graph-steps.js';
import { rewriteApplies as dequantizes } from '../../src/inference/graph-rewrite-mode.js';
import { Detector, type RawDetection } from '../../src/detection/detect.js';
import { iou } from '../../src/detection/yolo.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { collectingLog, loadRgb, tempDataDir } from '../helpers/inference.js';

const { onnx } = onnxProto;
type Node = import('onnx-proto').onnx.INodeProto;
type TensorProto = import('onnx-proto').onnx.ITensorProto;

const PHOTOS = ['000000000025', '000000000034', '000000000071', '000000000081', '000000000094'];
const INTEGER_OPS = ['DynamicQuantizeLinear', 'ConvInteger', 'MatMulInteger', 'QuantizeLinear', 'DequantizeLinear'];

const opCounts = (bytes: Uint8Array): Record<string, number> => {
  const counts: Record<string, number> = {};
  for (const n of onnx.ModelProto.decode(bytes).graph!.node!) counts[n.opType!] = (counts[n.opType!] ?? 0) + 1;
  return counts;
};

async function detector(
  t: Parameters<typeof tempDataDir>[0],
  id: string,
  file: string,
  dequantize: DequantizeMode,
  batch = { maxBatch: 1, maxWaitMs: 0 },
) {
  const dataDir = await tempDataDir(t);
  await writeByoManifest(dataDir, { id, task: 'detect', file });
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare(id);
  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 2, sessions: 1, dequantize, batch, log });
  t.after(() => runtime.release());
  return { det: await Detector.create(runtime, registry, id), log };
}

/**
 * Each box of `a` scoring at least `sure` has a twin in `b` (same class, IoU >= minIou, score within maxScore)
 * and the other way round; a twin may score down to `sure - maxScore`, so a box near the threshold that the
 * other graph scores just under it is no failure.
 */
function assertTwins(a: RawDetection[], b: RawDetection[], bounds: { minIou: number; maxScore: number }, what: string) {
  const sure = 0.35;
  for (const [from, to, dir] of [
    [a, b, 'int8 -> float'],
    [b, a, 'float -> int8'],
  ] as const) {
    const left = [...to];
    for (const d of from.filter((x) => x.score >= sure)) {
      const k = left.findIndex(
        (o) =>
          o.classId === d.classId &&
          iou(o.box, d.box) >= bounds.minIou &&
          Math.abs(o.score - d.score) <= bounds.maxScore,
      );
      assert.ok(k >= 0, `${what} (${dir}): no twin for ${JSON.stringify(d)} among ${JSON.stringify(left)}`);
      left.splice(k, 1);
    }
  }
}

// The float graph keeps the int8 weights but not the rounding of each layer's input to 8 bits, so its boxes
// move by what that rounding moved them. Over the first 20 photos of the set the worst twins of the three
// exports sit inside these bounds (docs/capacity.md, "Graphs for the GPU" has the figures) with a third or
// more to spare.
const TWIN_BOUNDS = { minIou: 0.85, maxScore: 0.15 };

for (const id of Object.keys(BYO_MODELS) as ByoModelId[]) {
  test(`${id}: made float it has no integer nodes left, loads on the CPU and finds the int8 graph's boxes`, {
    skip: byoModelsSkip(BYO_MODELS[id]) || cocoSkip,
  }, async (t) => {
    const file = byoPath(BYO_MODELS[id]);
    const bytes = new Uint8Array(await readFile(file));
    const r = dequantizeGraph(bytes);
    assert.ok(r.ok && r.changed, JSON.stringify(r.ok ? r.notes : r.reason));
    const before = opCounts(bytes),
      after = opCounts(r.bytes);
    for (const op of INTEGER_OPS) assert.equal(after[op], undefined, `${op} left: ${JSON.stringify(after)}`);
    assert.equal(after.Conv, before.ConvInteger, JSON.stringify(after));
    const session = await ort.InferenceSession.create(r.bytes, { executionProviders: ['cpu'], intraOpNumThreads: 2 });
    await session.release();

    const int8 = await detector(t, id, file, 'off');
    const float = await detector(t, id, file, 'on');
    for (const p of PHOTOS) {
      const img = await loadRgb(join(cocoDir(), 'images', `${p}.jpg`));
      const a = await int8.det.detectRaw(img, 0.2);
      const b = await float.det.detectRaw(img, 0.2);
      assertTwins(a, b, TWIN_BOUNDS, `${id} ${p}`);
    }
    assert.equal(float.log.lines.filter((l) => l.level === 'warn').length, 0, JSON.stringify(float.log.lines));
  });
}

test('the runtime loads the float graph where its setting says so (auto on the CPU too): the same boxes as the rewritten file itself', {
  skip: byoModelsSkip(BYO_MODELS['yolov8n-int8']) || cocoSkip,
}, async (t) => {
  const file = byoPath(BYO_MODELS['yolov8n-int8']);
  const r = dequantizeGraph(new Uint8Array(await readFile(file)));
  assert.ok(r.ok);
  const floatFile = join(await tempDataDir(t), 'yolov8n-float.onnx');
  await writeFile(floatFile, r.bytes);
  const img = await loadRgb(join(cocoDir(), 'images', `${PHOTOS[0]}.jpg`));
  const viaSetting = await (await detector(t, 'yolov8n-int8', file, 'on')).det.detectRaw(img, 0.05);
  const asFile = await (await detector(t, 'yolov8n-float', floatFile, 'off')).det.detectRaw(img, 0.05);
  const kept = await (await detector(t, 'yolov8n-int8', file, 'off')).det.detectRaw(img, 0.05);
  // auto on the CPU: this dynamic int8 export loads float too (the rewrite made in the model's worker).
  const byDefault = await (await detector(t, 'yolov8n-int8', file, 'auto')).det.detectRaw(img, 0.05);
  assert.deepEqual(viaSetting, asFile);
  assert.deepEqual(byDefault, asFile, 'auto on the CPU loads the float graph');
  assert.notDeepEqual(kept, asFile, 'off loads the int8 graph');
});

test('the float graph composes with the batch axis: a batch of photos answers what runs alone do', {
  skip: byoModelsSkip(BYO_MODELS['yolov8n-int8']) || cocoSkip,
}, async (t) => {
  const file = byoPath(BYO_MODELS['yolov8n-int8']);
  const images = await Promise.all(PHOTOS.map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  const alone = await detector(t, 'yolov8n-int8', file, 'on');
  const one: RawDetection[][] = [];
  for (const img of images) one.push(await alone.det.detectRaw(img, 0.05));
  const batched = await detector(t, 'yolov8n-int8', file, 'on', { maxBatch: 8, maxWaitMs: 200 });
  await batched.det.handle.session();
  assert.equal(batched.det.handle.batchRefused, undefined);
  const together = await Promise.all(images.map((img) => batched.det.detectRaw(img, 0.05)));
  assert.ok(batched.det.handle.stats.runs < PHOTOS.length, `${batched.det.handle.stats.runs} calls: not batched`);
  PHOTOS.forEach((p, i) => {
    assert.ok(one[i]!.length >= 1, `${p}: something found`);
    assert.equal(together[i]!.length, one[i]!.length, p);
    const left = [...one[i]!];
    for (const b of together[i]!) {
      const k = left.findIndex(
        (a) => a.classId === b.classId && Math.abs(a.score - b.score) <= 1e-4 && iou(a.box, b.box) >= 0.999,
      );
      assert.ok(k >= 0, `${p}: no twin for ${JSON.stringify(b)}`);
      left.splice(k, 1);
    }
  });
});

// Small graphs of each pattern, built here, against the float graph of the same weights built by hand.

const FLOAT = 1,
  UINT8 = 2,
  INT8 = 3,
  INT32 = 6,
  INT64 = 7;
const T = onnx.AttributeProto.AttributeType;

function tensor(name: string, dataType: number, dims: number[], values: ArrayLike<number>): TensorProto {
  const data =
    dataType === FLOAT
      ? new Uint8Array(Float32Array.from(values).buffer)
      : dataType === UINT8
        ? Uint8Array.from(values)
        : dataType === INT8
          ? new Uint8Array(Int8Array.from(values).buffer)
          : dataType === INT32
            ? new Uint8Array(Int32Array.from(values).buffer)
            : new Uint8Array(BigInt64Array.from(Array.from(values, BigInt)).buffer);
  return { name, dataType, dims, rawData: data };
}
const node = (
  opType: string,
  input: string[],
  output: string[],
  attrs: Record<string, number | number[]> = {},
): Node => ({
  opType,
  name: output[0],
  input,
  output,
  attribute: Object.entries(attrs).map(([name, v]) =>
    Array.isArray(v) ? { name, type: T.INTS, ints: v } : { name, type: T.INT, i: v },
  ),
});
function model(nodes: Node[], inits: TensorProto[], input: [string, number[]], outputs: [string, number[]][]) {
  const vi = ([name, dims]: [string, number[]]) => ({
    name,
    type: { tensorType: { elemType: FLOAT, shape: { dim: dims.map((d) => ({ dimValue: d })) } } },
  });
  return onnx.ModelProto.encode(
    onnx.ModelProto.create({
      irVersion: 8,
      opsetImport: [{ domain: '', version: 17 }],
      graph: { name: 'g', node: nodes, initializer: inits, input: [vi(input)], output: outputs.map(vi) },
    }),
  ).finish();
}
/** Deterministic values in [lo, hi]. */
function values(n: number, lo: number, hi: number, seed: number): number[] {
  let s = seed;
  return Array.from({ length: n }, () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return lo + ((s >> 8) % 10_000) * ((hi - lo) / 9_999);
  });
}
async function runGraph(bytes: Uint8Array, x: Float32Array, dims: number[]): Promise<Float32Array> {
  const s = await ort.InferenceSession.create(bytes, { intraOpNumThreads: 1 });
  try {
    const out = await s.run({ x: new ort.Tensor('float32', x, dims) });
    return out[s.outputNames[0]!]!.data as Float32Array;
  } finally {
    await s.release();
  }
}
function assertClose(a: Float32Array, b: Float32Array, tol: number, what: string): void {
  assert.equal(a.length, b.length, what);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  assert.ok(worst <= tol, `${what}: differs by up to ${worst}`);
}

/** A dynamic int8 MatMul as quantize_dynamic writes it (per column scale and zero point). */
function matMulIntegerGraph() {
  const [K, N] = [4, 3];
  const wq = values(K * N, 0, 255, 7).map(Math.round);
  const zp = [7, 120, 200],
    ws = [0.02, 0.01, 0.03],
    bias = [0.5, -1, 2];
  const bytes = model(
    [
      node('DynamicQuantizeLinear', ['x'], ['xq', 'xs', 'xzp']),
      node('MatMulInteger', ['xq', 'wq', 'xzp', 'wzp'], ['mmi']),
      node('Cast', ['mmi'], ['mmf'], { to: FLOAT }),
      node('Mul', ['xs', 'ws'], ['s']),
      node('Mul', ['mmf', 's'], ['scaled']),
      node('Add', ['scaled', 'bias'], ['y']),
    ],
    [
      tensor('wq', UINT8, [K, N], wq),
      tensor('wzp', UINT8, [N], zp),
      tensor('ws', FLOAT, [N], ws),
      tensor('bias', FLOAT, [N], bias),
    ],
    ['x', [2, K]],
    [['y', [2, N]]],
  );
  return { bytes, K, N, wq, zp, ws, bias };
}

test('a dynamic MatMulInteger chain becomes a MatMul of the weights made float (per column scale and zero point)', async () => {
  const { bytes: int8, K, N, wq, zp, ws, bias } = matMulIntegerGraph();
  const r = dequantizeGraph(int8);
  assert.ok(r.ok && r.changed, JSON.stringify(r));
  assert.deepEqual(opCounts(r.bytes), { MatMul: 1, Add: 1 });
  const wf = wq.map((v, i) => (v - zp[i % N]!) * ws[i % N]!);
  const reference = model(
    [node('MatMul', ['x', 'w'], ['p']), node('Add', ['p', 'bias'], ['y'])],
    [tensor('w', FLOAT, [K, N], wf), tensor('bias', FLOAT, [N], bias)],
    ['x', [2, K]],
    [['y', [2, N]]],
  );
  const x = Float32Array.from(values(2 * K, -1, 1, 3));
  assertClose(await runGraph(r.bytes, x, [2, K]), await runGraph(reference, x, [2, K]), 1e-5, 'float graph');
  // The int8 graph rounds x to 8 bits: the float graph differs from it by that rounding only.
  assertClose(await runGraph(r.bytes, x, [2, K]), await runGraph(int8, x, [2, K]), 0.05, 'int8 graph');
});

test('a dynamic ConvInteger chain with per-channel scales becomes a Conv with its bias folded in', async () => {
  const [M, C, k] = [2, 3, 3];
  const wq = values(M * C * k * k, -127, 127, 11).map(Math.round);
  const ws = [0.01, 0.02],
    bias = [0.25, -0.5];
  const pads = { pads: [1, 1, 1, 1], kernel_shape: [k, k] };
  const int8 = model(
    [
      node('DynamicQuantizeLinear', ['x'], ['xq', 'xs', 'xzp']),
      node('ConvInteger', ['xq', 'wq', 'xzp'], ['ci'], pads),
      node('Cast', ['ci'], ['cf'], { to: FLOAT }),
      node('Mul', ['xs', 'ws'], ['s']),
      node('Mul', ['s', 'cf'], ['scaled']),
      node('Reshape', ['bias', 'shape'], ['b4']),
      node('Add', ['b4', 'scaled'], ['y']),
    ],
    [
      tensor('wq', INT8, [M, C, k, k], wq),
      tensor('ws', FLOAT, [M, 1, 1], ws),
      tensor('bias', FLOAT, [M], bias),
      tensor('shape', INT64, [4], [1, -1, 1, 1]),
    ],
    ['x', [1, C, 5, 5]],
    [['y', [1, M, 5, 5]]],
  );
  const r = dequantizeGraph(int8);
  assert.ok(r.ok && r.changed, JSON.stringify(r));
  assert.deepEqual(opCounts(r.bytes), { Conv: 1 });
  const per = C * k * k;
  const reference = model(
    [node('Conv', ['x', 'w', 'b'], ['y'], pads)],
    [
      tensor(
        'w',
        FLOAT,
        [M, C, k, k],
        wq.map((v, i) => v * ws[Math.floor(i / per)]!),
      ),
      tensor('b', FLOAT, [M], bias),
    ],
    ['x', [1, C, 5, 5]],
    [['y', [1, M, 5, 5]]],
  );
  const x = Float32Array.from(values(C * 25, 0, 2, 5));
  assertClose(await runGraph(r.bytes, x, [1, C, 5, 5]), await runGraph(reference, x, [1, C, 5, 5]), 1e-5, 'Conv');
});

/** A QDQ graph: a Conv between quantise/dequantise pairs, its weights and bias stored as integers. */
function qdqGraph() {
  const [M, C] = [2, 2];
  const wq = values(M * C, -100, 100, 13).map(Math.round);
  const ws = [0.05, 0.1];
  const pairs = (x: string, y: string, stem: string) => [
    node('QuantizeLinear', [x, 'as', 'azp'], [`${stem}_q`]),
    node('DequantizeLinear', [`${stem}_q`, 'as', 'azp'], [y]),
  ];
  const qdq = model(
    [
      ...pairs('x', 'xd', 'in'),
      node('DequantizeLinear', ['wq', 'ws', 'wzp'], ['w'], { axis: 0 }),
      node('DequantizeLinear', ['bq', 'bs'], ['b']),
      node('Conv', ['xd', 'w', 'b'], ['c'], { kernel_shape: [1, 1] }),
      ...pairs('c', 'y', 'out'),
    ],
    [
      tensor('as', FLOAT, [], [0.02]),
      tensor('azp', UINT8, [], [128]),
      tensor('wq', INT8, [M, C, 1, 1], wq),
      tensor('ws', FLOAT, [M], ws),
      tensor('wzp', INT8, [M], [0, 0]),
      tensor('bq', INT32, [M], [10, -20]),
      tensor('bs', FLOAT, [], [0.001]),
    ],
    ['x', [1, C, 2, 2]],
    [['y', [1, M, 2, 2]]],
  );
  return { bytes: qdq, M, C, wq, ws };
}

test('QDQ: constant weights are dequantised into initialisers and activation pairs go', async () => {
  const { bytes: qdq, M, C, wq, ws } = qdqGraph();
  const r = dequantizeGraph(qdq);
  assert.ok(r.ok && r.changed, JSON.stringify(r));
  assert.deepEqual(opCounts(r.bytes), { Conv: 1, Identity: 1 });
  const reference = model(
    [node('Conv', ['x', 'w', 'b'], ['y'], { kernel_shape: [1, 1] })],
    [
      tensor(
        'w',
        FLOAT,
        [M, C, 1, 1],
        wq.map((v, i) => v * ws[Math.floor(i / C)]!),
      ),
      tensor('b', FLOAT, [M], [0.01, -0.02]),
    ],
    ['x', [1, C, 2, 2]],
    [['y', [1, M, 2, 2]]],
  );
  const x = Float32Array.from(values(C * 4, -1, 1, 17));
  assertClose(await runGraph(r.bytes, x, [1, C, 2, 2]), await runGraph(reference, x, [1, C, 2, 2]), 1e-6, 'QDQ');
});

test('auto makes every int8 graph float on a GPU provider, and on the CPU dynamic int8 only (QDQ stays)', async () => {
  const dynamic = matMulIntegerGraph().bytes,
    qdq = qdqGraph().bytes;
  const loads = async (bytes: Uint8Array, mode: DequantizeMode, providers: string[]) => {
    const plan = graphPlan({
      dequantize: mode,
      fp16: 'off',
      uint8Input: 'off',
      providers,
      batchAxis: false,
      float16: false,
    });
    const made = await makeGraph(bytes, plan);
    assert.deepEqual(made.refused, {});
    return made.bytes ? Object.keys(opCounts(made.bytes)).sort().join(' ') : 'as exported';
  };
  for (const providers of [['cpu'], ['cuda', 'cpu'], ['tensorrt', 'cuda', 'cpu']]) {
    assert.equal(await loads(dynamic, 'auto', providers), 'Add MatMul', providers.join());
    assert.equal(await loads(dynamic, 'on', providers), 'Add MatMul', providers.join());
    assert.equal(await loads(dynamic, 'off', providers), 'as exported', providers.join());
    assert.equal(await loads(qdq, 'on', providers), 'Conv Identity', providers.join());
    assert.equal(await loads(qdq, 'off', providers), 'as exported', providers.join());
  }
  assert.equal(await loads(qdq, 'auto', ['cpu']), 'as exported');
  assert.equal(await loads(qdq, 'auto', ['cuda', 'cpu']), 'Conv Identity');
  assert.equal(await loads(qdq, 'auto', ['tensorrt', 'cuda', 'cpu']), 'Conv Identity');
  assert.equal(dequantizes('auto', ['cpu']), false, 'the other rewrites keep auto to GPU providers');
});

test('a graph the rewrite cannot vouch for loads as exported, with one warning naming the node', async (t) => {
  // The integer product's float value is also an output of the graph: no Conv or MatMul could give it.
  const bytes = model(
    [
      node('DynamicQuantizeLinear', ['x'], ['xq', 'xs', 'xzp']),
      node('MatMulInteger', ['xq', 'wq', 'xzp'], ['odd_product']),
      node('Cast', ['odd_product'], ['raw'], { to: FLOAT }),
      node('Mul', ['xs', 'ws'], ['s']),
      node('Mul', ['raw', 's'], ['y']),
    ],
    [tensor('wq', UINT8, [2, 2], [1, 2, 3, 4]), tensor('ws', FLOAT, [], [0.5])],
    ['x', [1, 2]],
    [
      ['y', [1, 2]],
      ['raw', [1, 2]],
    ],
  );
  const r = dequantizeGraph(bytes);
  assert.ok(!r.ok && /^MatMulInteger node odd_product: /.test(r.reason), JSON.stringify(r));
  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, dequantize: 'on', log });
  t.after(() => runtime.release());
  const h = runtime.register({ id: 'odd', load: async () => bytes });
  const x = Float32Array.of(0.5, 1);
  const out = await h.run({ x: new ort.Tensor('float32', x, [1, 2]) });
  assertClose(out.y!.data as Float32Array, await runGraph(bytes, x, [1, 2]), 0, 'as exported');
  const warns = log.lines.filter((l) => l.level === 'warn');
  assert.equal(warns.length, 1, JSON.stringify(warns));
  assert.match(warns[0]!.msg, /^model odd keeps its int8 graph: MatMulInteger node odd_product: /);
});
