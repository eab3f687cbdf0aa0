// Models exported in float16 (inputs and outputs float16, as `export half=True` makes them for a GPU): they load,
// take float32 from the detector and give it float32 back. On the CPU the graph is made float32 throughout (the
// export's weights exactly, so the float graph's boxes come back); where float16 applies (SIGHTFLOW_INFERENCE_FP16
// =on here, a GPU provider under auto) it keeps float16 inside with casts at its edges; both compose with the
// batch axis and the bytes input; the file's inputs and outputs are read without reading its weights; what the
// rewrites cannot vouch for is refused with a reason and the model loads as exported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import onnxProto from 'onnx-proto';
import { BYO_MODELS, byoModelsSkip, byoPath } from '../../eval/byo-dir.js';
import { InferenceRuntime, type RuntimeOptions } from '../../src/inference/runtime.js';
import { widenedToFloat32, withFloat32Edges } from '../../src/inference/float16-export.js';
import { graphPlan } from '../../src/inference/graph-steps.js';
import { readOnnxInfo, readOnnxIoFromFile } from '../../src/inference/onnx-metadata.js';
import { projectRoot } from '../../src/base/paths.js';
import type { RawDetection } from '../../src/detection/detect.js';
import { OnnxGraphBuilder, DataType } from '../../src/inference/tfjs-import/onnx-builder.js';
import { DT } from '../../src/inference/onnx-tensors.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { halfExport } from '../helpers/half-export.js';
import { cpuDetector } from '../helpers/detectors.js';
import { assertTwins } from '../helpers/detection-twins.js';
import { collectingLog, loadRgb, tempDataDir } from '../helpers/inference.js';

const { onnx } = onnxProto;
const PHOTOS = ['000000000025', '000000000034', '000000000071', '000000000081'];
const YOLO = BYO_MODELS['yolov8n-int8'];
const skip = byoModelsSkip(YOLO) || cocoSkip;

/** Boxes at or above `min` have twins both ways (the lists go down to 0.05, under min - 2 tol). */
const assertSameSet = (a: RawDetection[], b: RawDetection[], what: string, min: number, tol: number, minIou: number) =>
  assertTwins(a, b, { threshold: min - tol, margin: tol, score: tol, minIou }, what);

/** The half export of the real YOLOv8 export, written into a data dir of its own and registered there. */
async function halfDetector(t: Parameters<typeof tempDataDir>[0], opts: Partial<RuntimeOptions>) {
  const dataDir = await tempDataDir(t);
  const file = join(dataDir, 'yolov8n-half.onnx');
  await writeFile(file, halfExport(new Uint8Array(await readFile(byoPath(YOLO)))));
  return cpuDetector(t, opts, { id: 'yolov8n-half', file, dataDir });
}

const floatDetector = (t: Parameters<typeof tempDataDir>[0]) =>
  cpuDetector(t, { dequantize: 'on', fp16: 'off' }, { id: 'yolov8n-int8', file: byoPath(YOLO) });

const warnings = (log: ReturnType<typeof collectingLog>) => log.lines.filter((l) => l.level === 'warn');

test('the plan: a float16 export is widened where float16 does not apply, cast at its edges where it does', () => {
  const base = { dequantize: 'off', uint8Input: 'off', batchAxis: false, float16: true } as const;
  assert.equal(graphPlan({ ...base, fp16: 'auto', providers: ['cpu'], float16Io: true }).float16Export, 'widen');
  const gpu = graphPlan({ ...base, fp16: 'auto', providers: ['cuda', 'cpu'], float16Io: true });
  assert.equal(gpu.float16Export, 'edges');
  assert.equal(gpu.fp16, undefined, 'no float16 rewrite of a graph that computes in float16');
  assert.equal(graphPlan({ ...base, fp16: 'off', providers: ['cuda'], float16Io: true }).float16Export, 'widen');
  assert.equal(graphPlan({ ...base, fp16: 'on', providers: ['cpu'], float16Io: true }).float16Export, 'edges');
  assert.equal(graphPlan({ ...base, fp16: 'on', providers: ['cpu'] }).float16Export, undefined);
});

test("a float16 export loads on the CPU, float32 throughout, and finds the float graph's boxes", {
  skip,
}, async (t) => {
  const full = await floatDetector(t);
  const half = await halfDetector(t, { fp16: 'auto' });
  // The file as exported declares float16 at both ends; the widened graph has no float16 left.
  const file = await half.registry.onnxPath('yolov8n-half');
  const io = await readOnnxIoFromFile(file);
  assert.deepEqual(
    [...io.inputs, ...io.outputs].map((x) => [x.name, x.elemType]),
    [
      ['images', DT.FLOAT16],
      ['output0', DT.FLOAT16],
    ],
  );
  const wide = widenedToFloat32(new Uint8Array(await readFile(file)));
  assert.ok(wide.ok && wide.changed, JSON.stringify(wide));
  const g = onnx.ModelProto.decode(wide.bytes).graph!;
  assert.ok(!(g.initializer ?? []).some((x) => x.dataType === DT.FLOAT16));
  assert.ok(
    ![...(g.input ?? []), ...(g.output ?? []), ...(g.valueInfo ?? [])].some(
      (v) => v.type?.tensorType?.elemType === DT.FLOAT16,
    ),
  );
  assert.ok(!g.node!.some((n) => n.attribute?.some((a) => a.name === 'to' && Number(a.i) === DT.FLOAT16)));
  let boxes = 0;
  for (const p of PHOTOS) {
    const img = await loadRgb(join(cocoDir(), 'images', `${p}.jpg`));
    const a = await full.det.detectRaw(img, 0.05);
    boxes += a.filter((d) => d.score >= 0.5).length;
    // Only the weights were rounded to float16, the arithmetic is float32.
    assertSameSet(await half.det.detectRaw(img, 0.05), a, p, 0.5, 0.01, 0.95);
  }
  assert.ok(boxes >= PHOTOS.length, `only ${boxes} boxes above 0.5`);
  assert.deepEqual(warnings(half.log), []);
});

test('where float16 applies the export keeps it inside, casts at its edges, and finds the same boxes', {
  skip,
}, async (t) => {
  const full = await floatDetector(t);
  const half = await halfDetector(t, { fp16: 'on' });
  const r = withFloat32Edges(new Uint8Array(await readFile(await half.registry.onnxPath('yolov8n-half'))));
  assert.ok(r.ok && r.changed, JSON.stringify(r));
  assert.deepEqual([r.inputs, r.outputs], [['images'], ['output0']]);
  const g = onnx.ModelProto.decode(r.bytes).graph!;
  assert.equal(g.input![0]!.type!.tensorType!.elemType, DataType.FLOAT);
  assert.equal(g.output![0]!.type!.tensorType!.elemType, DataType.FLOAT);
  assert.ok(
    (g.initializer ?? []).some((x) => x.dataType === DT.FLOAT16),
    'the weights stay float16',
  );
  for (const p of PHOTOS) {
    const img = await loadRgb(join(cocoDir(), 'images', `${p}.jpg`));
    assertSameSet(await half.det.detectRaw(img, 0.05), await full.det.detectRaw(img, 0.05), p, 0.5, 0.02, 0.9);
  }
  assert.deepEqual(warnings(half.log), []);
});

test('a float16 export batched, and fed bytes: each photo gets the boxes it gets alone', { skip }, async (t) => {
  const images = await Promise.all(PHOTOS.map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  for (const fp16 of ['auto', 'on'] as const) {
    const alone = await halfDetector(t, { fp16, batch: { maxBatch: 1, maxWaitMs: 0 } });
    const one: RawDetection[][] = [];
    for (const img of images) one.push(await alone.det.detectRaw(img, 0.05));
    const batched = await halfDetector(t, { fp16, batch: { maxBatch: 8, maxWaitMs: 200 }, uint8Input: 'on' });
    await batched.det.handle.session();
    assert.equal(batched.det.handle.batchRefused, undefined);
    const together = await Promise.all(images.map((img) => batched.det.detectRaw(img, 0.05)));
    assert.ok(batched.det.handle.stats.runs < images.length, `${fp16}: the photos were not batched`);
    assert.equal(await batched.det.handle.imageInput(), 'uint8');
    together.forEach((b, i) =>
      assertSameSet(b, one[i]!, `${fp16}, photo ${i}`, 0.3, fp16 === 'on' ? 0.01 : 2e-3, 0.97),
    );
    assert.deepEqual(warnings(batched.log), []);
  }
});

/** x float16 [1, 4] -> Relu -> y float16, with a float16 constant added and a cast of it to float32 as z. */
function tinyHalfGraph(): Uint8Array {
  const b = new OnnxGraphBuilder();
  b.node('Relu', ['x'], ['r']);
  b.node('Add', ['r', 'c'], ['y']);
  b.node('Cast', ['y'], ['z'], { to: DataType.FLOAT });
  const bytes = b.encode({
    name: 'half',
    inputs: [{ name: 'x', elemType: DT.FLOAT16, shape: [1, 4] }],
    outputs: [
      { name: 'y', elemType: DT.FLOAT16, shape: [1, 4] },
      { name: 'z', elemType: DataType.FLOAT, shape: [1, 4] },
    ],
  });
  const m = onnx.ModelProto.decode(bytes);
  // 0.5 in float16 bits, four times.
  const c = new Uint16Array([0x3800, 0x3800, 0x3800, 0x3800]);
  m.graph!.initializer = [{ name: 'c', dims: [1, 4], dataType: DT.FLOAT16, rawData: new Uint8Array(c.buffer) }];
  return onnx.ModelProto.encode(m).finish();
}

test('both rewrites on a small graph: float32 in and out, the values the float16 graph computes', async (t) => {
  const feeds = { x: new ort.Tensor('float32', Float32Array.from([-1, 0, 1.25, 3]), [1, 4]) };
  for (const r of [withFloat32Edges(tinyHalfGraph()), widenedToFloat32(tinyHalfGraph())]) {
    assert.ok(r.ok && r.changed, JSON.stringify(r));
    assert.deepEqual([r.inputs, r.outputs], [['x'], ['y']]);
    const s = await ort.InferenceSession.create(r.bytes);
    t.after(() => s.release());
    const out = await s.run(feeds);
    for (const name of ['y', 'z']) {
      assert.equal(out[name]!.type, 'float32');
      assert.deepEqual(Array.from(out[name]!.data as Float32Array), [0.5, 0.5, 1.75, 3.5]);
    }
  }
  // A float32 graph is left as it is.
  const b = new OnnxGraphBuilder();
  b.node('Relu', ['x'], ['y']);
  const f32 = b.encode({
    name: 'f32',
    inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: [1, 4] }],
    outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: [1, 4] }],
  });
  for (const r of [withFloat32Edges(f32), widenedToFloat32(f32)]) assert.ok(r.ok && !r.changed && r.bytes === f32);
});

test('what the rewrites cannot vouch for is refused with a reason; the model loads as exported and says why', async (t) => {
  const m = onnx.ModelProto.decode(tinyHalfGraph());
  m.graph!.node![0]!.attribute = [{ name: 'body', type: onnx.AttributeProto.AttributeType.GRAPH, g: { name: 'x' } }];
  const looped = onnx.ModelProto.encode(m).finish();
  for (const r of [withFloat32Edges(looped), widenedToFloat32(looped)])
    assert.ok(!r.ok && /subgraphs/.test(r.reason), JSON.stringify(r));
  const junk = widenedToFloat32(Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]));
  assert.ok(!junk.ok && /not an ONNX model/.test(junk.reason), JSON.stringify(junk));

  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log });
  t.after(() => runtime.release());
  const h = runtime.register({ id: 'looped', load: async () => looped });
  await assert.rejects(h.session());
  assert.match(
    warnings(log)
      .map((w) => w.msg)
      .join('\n'),
    /model looped keeps its float16 inputs and outputs: Relu node .*subgraphs/,
  );
});

test("the inputs and outputs read from a file's few bytes equal those read from the whole file", async () => {
  const files = [join(projectRoot, 'data', 'models', 'centernet-coco')];
  const { readdir } = await import('node:fs/promises');
  const paths: string[] = [];
  for (const dir of files)
    for (const f of await readdir(dir).catch(() => [] as string[])) if (f.endsWith('.onnx')) paths.push(join(dir, f));
  if (!byoModelsSkip(YOLO)) paths.push(byoPath(YOLO));
  assert.ok(paths.length > 0, 'no model file to read');
  for (const p of paths) {
    const whole = readOnnxInfo(new Uint8Array(await readFile(p)));
    const few = await readOnnxIoFromFile(p);
    // readOnnxInfo leaves out old exporters' initialisers listed as inputs; these files list none.
    assert.deepEqual(few, { inputs: whole.inputs, outputs: whole.outputs }, p);
  }
  await assert.rejects(readOnnxIoFromFile(join(projectRoot, 'package.json')), /not a readable ONNX model/);
});
