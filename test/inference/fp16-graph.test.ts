// Detectors' graphs in float16 (fp16-graph.ts), checked on the CPU, where ONNX Runtime casts around the float16
// nodes it has no kernels for: the built-in CenterNet rewritten loads and finds on COCO photos the boxes its
// float32 graph finds; it composes with the batch axis and the bytes input; a graph with operators that must stay
// float32 still runs and lists them; what it cannot vouch for is refused with a reason, never thrown.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import onnxProto from 'onnx-proto';
import { BYO_MODELS, byoModelsSkip, byoPath } from '../../eval/byo-dir.js';
import { InferenceRuntime, type RuntimeOptions } from '../../src/inference/runtime.js';
import { withFloat16 } from '../../src/inference/fp16-graph.js';
import { rewriteApplies as runsFloat16 } from '../../src/inference/graph-rewrite-mode.js';
import type { RawDetection } from '../../src/detection/detect.js';
import { iou } from '../../src/detection/yolo.js';
import { OnnxGraphBuilder, DataType } from '../../src/inference/tfjs-import/onnx-builder.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { cpuDetector } from '../helpers/detectors.js';
import { assertTwins } from '../helpers/detection-twins.js';
import { collectingLog, loadRgb, type tempDataDir } from '../helpers/inference.js';

const { onnx } = onnxProto;
const PHOTOS = ['000000000025', '000000000034', '000000000071', '000000000081', '000000000094', '000000000109'];

// Boxes at or above this score in either graph must have a twin in the other, with the tolerances below set
// with a margin of several times what all 64 photos of detection_coco128 showed (docs/capacity.md, "Graphs for
// the GPU"); lower ones can trade places (a heatmap peak that float16 rounds level with its neighbour, or the
// 100th place), which the mAP gate measures instead.
const MIN_SCORE = 0.3;
const SCORE_TOL = 0.01;
const MIN_IOU = 0.9;

/** Each box above `min` in one list has its twin (class, score within `tol`, IoU) in the other. */
const assertSameSet = (
  half: RawDetection[],
  full: RawDetection[],
  what: string,
  limits = { min: MIN_SCORE, tol: SCORE_TOL, minIou: MIN_IOU },
) =>
  assertTwins(
    half,
    full,
    { threshold: limits.min - limits.tol, margin: limits.tol, score: limits.tol, minIou: limits.minIou },
    what,
  );

const detectorWith = (
  t: Parameters<typeof tempDataDir>[0],
  opts: Partial<RuntimeOptions>,
  id = 'centernet-coco',
  file?: string,
) => cpuDetector(t, opts, { id, file });

test('auto runs float16 on a GPU provider only; on and off are what they say', () => {
  assert.equal(runsFloat16('auto', ['cpu']), false);
  assert.equal(runsFloat16('auto', ['cuda', 'cpu']), true);
  assert.equal(runsFloat16('auto', ['tensorrt', 'cuda', 'cpu']), true);
  assert.equal(runsFloat16('on', ['cpu']), true);
  assert.equal(runsFloat16('off', ['cuda', 'cpu']), false);
});

test("the built-in detector in float16 loads on the CPU and finds the float32 graph's boxes on COCO photos", {
  skip: cocoSkip,
}, async (t) => {
  const full = await detectorWith(t, { fp16: 'off' });
  const half = await detectorWith(t, { fp16: 'on' });
  // The rewrite itself: weights halved, the decoding kept float32, inputs and outputs float32.
  const bytes = new Uint8Array(await readFile(await full.registry.onnxPath('centernet-coco')));
  const r = withFloat16(bytes);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  assert.ok(r.bytes.length < bytes.length * 0.6, `${r.bytes.length} bytes from ${bytes.length}`);
  assert.ok(r.half > 150, `${r.half} nodes in float16`);
  assert.ok(r.kept.some((k) => k.op === 'TopK'));
  assert.ok(r.kept.some((k) => k.op === 'Cast' && /indices/.test(k.why)));
  const s = await ort.InferenceSession.create(r.bytes, { intraOpNumThreads: 1 });
  t.after(() => s.release());
  assert.deepEqual(s.inputNames, ['images']);
  assert.deepEqual(s.outputNames, ['detections']);

  let boxes = 0;
  for (const p of PHOTOS) {
    const img = await loadRgb(join(cocoDir(), 'images', `${p}.jpg`));
    const a = await full.det.detectRaw(img, 0.05);
    const b = await half.det.detectRaw(img, 0.05);
    boxes += a.filter((d) => d.score >= MIN_SCORE).length;
    assertSameSet(b, a, p);
  }
  assert.ok(boxes >= PHOTOS.length, `only ${boxes} boxes above ${MIN_SCORE}: the photos check little`);
  assert.equal(half.log.lines.filter((l) => l.level === 'warn').length, 0, JSON.stringify(half.log.lines));
});

test('float16 after the batch axis: concurrent photos batched get the boxes each gets alone', {
  skip: cocoSkip,
}, async (t) => {
  const images = await Promise.all(PHOTOS.slice(0, 4).map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  const alone = await detectorWith(t, { fp16: 'on', batch: { maxBatch: 1, maxWaitMs: 0 } });
  const one: RawDetection[][] = [];
  for (const img of images) one.push(await alone.det.detectRaw(img, 0.05));
  const batched = await detectorWith(t, { fp16: 'on', batch: { maxBatch: 8, maxWaitMs: 200 } });
  await batched.det.handle.session();
  assert.equal(batched.det.handle.batchRefused, undefined);
  const together = await Promise.all(images.map((img) => batched.det.detectRaw(img, 0.05)));
  assert.ok(batched.det.handle.stats.runs < images.length, 'the photos were not batched');
  // The same float16 graph at batch N computes each row as at batch 1, up to the kernels' summation order.
  together.forEach((b, i) => {
    assert.ok(one[i]!.length >= 1);
    for (const a of one[i]!.filter((d) => d.score >= 0.1)) {
      const twin = b.find(
        (x) => x.classId === a.classId && Math.abs(x.score - a.score) <= 2e-3 && iou(x.box, a.box) >= 0.98,
      );
      assert.ok(twin, `photo ${i}: no batched twin for ${JSON.stringify(a)}`);
    }
  });
  assert.equal(batched.log.lines.filter((l) => l.level === 'warn').length, 0, JSON.stringify(batched.log.lines));
});

test("float16 then the bytes input: the detector fed bytes finds the float32 graph's boxes", {
  skip: cocoSkip,
}, async (t) => {
  const full = await detectorWith(t, { fp16: 'off' });
  const half = await detectorWith(t, { fp16: 'on', uint8Input: 'on' });
  for (const p of PHOTOS.slice(0, 3)) {
    const img = await loadRgb(join(cocoDir(), 'images', `${p}.jpg`));
    assertSameSet(await half.det.detectRaw(img, 0.05), await full.det.detectRaw(img, 0.05), p);
  }
  assert.equal(half.log.lines.filter((l) => l.level === 'warn').length, 0, JSON.stringify(half.log.lines));
});

/** x [1, 8] -> Mul -> Clip(+-1e6) -> Exp -> Sigmoid -> y; TopK(3) of y: values + float(indices) -> z; Resize of a 2x2 image by scales. */
function mixedGraph(): Uint8Array {
  const b = new OnnxGraphBuilder();
  const w = b.floatInit('w', [1, 8], [0.5, -1, 1.5, 2, -0.25, 0.75, 1, -2]);
  const lo = b.floatInit('lo', [], [-1e6]);
  const hi = b.floatInit('hi', [], [1e6]);
  const m = b.op('Mul', ['x', w]);
  const c = b.op('Clip', [m, lo, hi]);
  const e = b.op('Exp', [c]);
  b.node('Sigmoid', [e], ['y']);
  const k = b.int64Init('k', [1], [3]);
  b.node('TopK', ['y', k], ['values', 'indices'], { axis: -1 });
  const fi = b.op('Cast', ['indices'], { to: DataType.FLOAT });
  b.node('Add', ['values', fi], ['z']);
  const scales = b.floatInit('scales', [4], [1, 1, 2, 2]);
  const r = b.op('Resize', ['img', '', scales], { mode: 'nearest' });
  b.node('Relu', [r], ['up']);
  return b.encode({
    name: 'mixed',
    inputs: [
      { name: 'x', elemType: DataType.FLOAT, shape: [1, 8] },
      { name: 'img', elemType: DataType.FLOAT, shape: [1, 1, 2, 2] },
    ],
    outputs: [
      { name: 'y', elemType: DataType.FLOAT, shape: [1, 8] },
      { name: 'z', elemType: DataType.FLOAT, shape: [1, 3] },
      { name: 'up', elemType: DataType.FLOAT, shape: [1, 1, 4, 4] },
    ],
  });
}

test('operators that must stay float32 keep it with casts around them, and the graph still runs', async (t) => {
  const bytes = mixedGraph();
  const r = withFloat16(bytes);
  assert.ok(r.ok, r.ok ? '' : r.reason);
  assert.deepEqual(
    r.kept.map((k) => k.op),
    ['Exp', 'TopK', 'Cast', 'Add'],
  );
  assert.match(r.kept.find((k) => k.op === 'Add')!.why, /shapes, sizes or indices/);
  assert.equal(r.clamped, 2, 'the Clip bounds beyond float16 are clamped');
  const model = onnx.ModelProto.decode(r.bytes);
  const resize = model.graph!.node!.find((n) => n.opType === 'Resize')!;
  assert.equal(resize.input![2], 'scales', 'Resize reads its scales as float32');
  assert.equal(model.graph!.initializer!.find((i) => i.name === 'scales')!.dataType, DataType.FLOAT);
  assert.equal(model.graph!.initializer!.find((i) => i.name === 'w')!.dataType, 10);

  const full = await ort.InferenceSession.create(bytes);
  const half = await ort.InferenceSession.create(r.bytes);
  t.after(async () => {
    await full.release();
    await half.release();
  });
  const feeds = {
    x: new ort.Tensor('float32', Float32Array.from([0.1, 0.2, -0.3, 0.4, 0.5, -0.6, 0.7, 0.8]), [1, 8]),
    img: new ort.Tensor('float32', Float32Array.from([1, -2, 3, 4]), [1, 1, 2, 2]),
  };
  const a = await full.run(feeds);
  const b = await half.run(feeds);
  for (const name of ['y', 'z', 'up']) {
    assert.equal(b[name]!.type, 'float32', `${name} is float32 for callers`);
    assert.deepEqual(b[name]!.dims, a[name]!.dims);
    const x = a[name]!.data as Float32Array,
      y = b[name]!.data as Float32Array;
    // float16 keeps 11 significant bits: 1e-3 relative holds each element here.
    x.forEach((v, i) =>
      assert.ok(Math.abs(v - y[i]!) <= 1e-3 * Math.max(1, Math.abs(v)), `${name}[${i}]: ${v} vs ${y[i]}`),
    );
  }
});

test('an operator of a custom domain and what reads it stay float32', () => {
  const b = new OnnxGraphBuilder();
  const h = b.op('Relu', ['x']);
  b.node('Thing', [h], ['t'], {}, 'custom');
  const model = onnx.ModelProto.decode(
    b.encode({
      name: 'custom',
      inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: [1, 4] }],
      outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: [1, 4] }],
    }),
  );
  model.graph!.node!.find((n) => n.opType === 'Thing')!.domain = 'com.example';
  model.graph!.node!.push({ opType: 'Sigmoid', input: ['t'], output: ['y'], name: 'after' });
  const r = withFloat16(onnx.ModelProto.encode(model).finish());
  assert.ok(r.ok, r.ok ? '' : r.reason);
  assert.deepEqual(
    r.kept.map((k) => [k.op, k.why]),
    [
      ['com.example.Thing', 'an operator of the com.example domain'],
      ['Sigmoid', 'a type it reads or writes is not known'],
    ],
  );
  const out = onnx.ModelProto.decode(r.bytes).graph!.node!;
  const thing = out.find((n) => n.opType === 'Thing')!;
  const cast = out.find((n) => n.output![0] === thing.input![0]);
  assert.equal(cast?.opType, 'Cast', 'the custom operator reads a float32 cast of the float16 Relu');
});

test('what the rewrite cannot vouch for is refused with a reason, not thrown', async () => {
  const junk = withFloat16(Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]));
  assert.ok(!junk.ok && /not an ONNX model/.test(junk.reason), JSON.stringify(junk));
  const empty = withFloat16(new Uint8Array());
  assert.ok(!empty.ok && /no graph/.test(empty.reason), JSON.stringify(empty));
  const once = withFloat16(mixedGraph());
  assert.ok(once.ok);
  const twice = withFloat16(once.bytes);
  assert.ok(!twice.ok && /already computes in float16/.test(twice.reason), JSON.stringify(twice));
  const ints = new OnnxGraphBuilder();
  ints.node('Add', ['a', 'a'], ['b']);
  const noFloat = withFloat16(
    ints.encode({
      name: 'ints',
      inputs: [{ name: 'a', elemType: DataType.INT64, shape: [2] }],
      outputs: [{ name: 'b', elemType: DataType.INT64, shape: [2] }],
    }),
  );
  assert.ok(!noFloat.ok && /no node/.test(noFloat.reason), JSON.stringify(noFloat));
  const loop = new OnnxGraphBuilder();
  loop.node('Relu', ['a'], ['b']);
  const m = onnx.ModelProto.decode(
    loop.encode({
      name: 'loop',
      inputs: [{ name: 'a', elemType: DataType.FLOAT, shape: [2] }],
      outputs: [{ name: 'b', elemType: DataType.FLOAT, shape: [2] }],
    }),
  );
  m.graph!.node![0]!.attribute = [{ name: 'body', type: onnx.AttributeProto.AttributeType.GRAPH, g: { name: 'x' } }];
  const sub = withFloat16(onnx.ModelProto.encode(m).finish());
  assert.ok(!sub.ok && /subgraphs/.test(sub.reason), JSON.stringify(sub));
});

test('a float32 model whose graph is refused loads as float32 with one warning saying why', async (t) => {
  const b = new OnnxGraphBuilder();
  b.node('Exp', ['x'], ['y']);
  const bytes = b.encode({
    name: 'exp',
    inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: [1, 2] }],
    outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: [1, 2] }],
  });
  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, fp16: 'on', log });
  t.after(() => runtime.release());
  const h = runtime.register({ id: 'exp', load: async () => bytes, float16: true });
  const out = await h.run({ x: new ort.Tensor('float32', Float32Array.from([0, 1]), [1, 2]) });
  assert.deepEqual(Array.from(out.y!.data as Float32Array), [1, Math.fround(Math.E)]);
  const warns = log.lines.filter((l) => l.level === 'warn');
  assert.equal(warns.length, 1, JSON.stringify(log.lines));
  assert.match(warns[0]!.msg, /model exp runs in float32: no node of the graph would run in float16/);
});

// Tolerances as measured over all 64 photos, with margin (docs/capacity.md, "Graphs for the GPU"); above 0.5,
// since NMS may keep the other of two overlapping boxes of near scores.
test('a real YOLOv8 export made float (dequantize step) runs in float16 and finds its float32 boxes', {
  skip: byoModelsSkip(BYO_MODELS['yolov8n-int8']) || cocoSkip,
}, async (t) => {
  const file = byoPath(BYO_MODELS['yolov8n-int8']);
  const full = await detectorWith(t, { fp16: 'off', dequantize: 'on' }, 'yolov8n-int8', file);
  const half = await detectorWith(t, { fp16: 'on', dequantize: 'on' }, 'yolov8n-int8', file);
  let boxes = 0;
  for (const p of PHOTOS) {
    const img = await loadRgb(join(cocoDir(), 'images', `${p}.jpg`));
    const a = await full.det.detectRaw(img, 0.05);
    boxes += a.filter((d) => d.score >= 0.5).length;
    assertSameSet(await half.det.detectRaw(img, 0.05), a, p, { min: 0.5, tol: 0.02, minIou: 0.9 });
  }
  assert.ok(boxes >= PHOTOS.length, `only ${boxes} boxes above 0.5`);
  assert.equal(half.log.lines.filter((l) => l.level === 'warn').length, 0, JSON.stringify(half.log.lines));
});

test('int8 bring-your-own exports are refused as they are (their float form comes from the dequantize step)', {
  skip: byoModelsSkip(BYO_MODELS['yolov8n-int8']),
}, async () => {
  const r = withFloat16(new Uint8Array(await readFile(byoPath(BYO_MODELS['yolov8n-int8']))));
  assert.ok(!r.ok && /quantised arithmetic/.test(r.reason), JSON.stringify(r));
});
