// A YOLO output reduced in the graph to what decoding reads (src/inference/best-class.ts): a channels-first one
// (YOLOv8) to box, best score and class, one with an anchor a row (YOLOv5) to box, objectness, best score and
// class. The twin holds exactly the raw output's per-anchor maximum and its first class, in either ReduceMax form
// (axes as an attribute before opset 18, as an input from 18); a detector decoding it finds exactly the boxes it
// finds from the whole output, alone, batched and fed bytes; a graph the step cannot vouch for is refused with a
// reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import ort from 'onnxruntime-node';
import { BYO_MODELS, byoModelsSkip, byoPath } from '../../eval/byo-dir.js';
import { withBestClass } from '../../src/inference/best-class.js';
import { bestClassOutput, reducibleOutput, twinForm } from '../../src/inference/best-class-output.js';
import { graphPlan, makeGraph } from '../../src/inference/graph-steps.js';
import { DT } from '../../src/inference/onnx-tensors.js';
import { OnnxGraphBuilder, DataType } from '../../src/inference/tfjs-import/onnx-builder.js';
import { decodeYolo, decodeYoloBest } from '../../src/detection/yolo.js';
import { Detector, modelInput, modelInputBytes, type RawDetection } from '../../src/detection/detect.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { cpuDetector } from '../helpers/detectors.js';
import { collectingLog, loadRgb, solidImage, tempDataDir, tinyYoloOnnx } from '../helpers/inference.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';

const YOLO = BYO_MODELS['yolov8n-int8'];
const skip = byoModelsSkip(YOLO) || cocoSkip;
const PHOTOS = ['000000000025', '000000000034', '000000000071', '000000000081', '000000000094'];

/** Each anchor's highest class score and first class of that score, read from a [N, 4 + C, A] output. */
function bestByHand(raw: Float32Array, n: number, f: number, a: number) {
  const out = new Float32Array(n * 6 * a);
  for (let b = 0; b < n; b++)
    for (let i = 0; i < a; i++) {
      let m = -Infinity,
        c = -1;
      for (let k = 4; k < f; k++) {
        const v = raw[(b * f + k) * a + i]!;
        if (v > m) {
          m = v;
          c = k - 4;
        }
      }
      for (let k = 0; k < 4; k++) out[(b * 6 + k) * a + i] = raw[(b * f + k) * a + i]!;
      out[(b * 6 + 4) * a + i] = m;
      out[(b * 6 + 5) * a + i] = c;
    }
  return out;
}

/** The same for rows [N, A, 5 + C]: each row's box and objectness, highest class score, first class of it. */
function rowsByHand(raw: Float32Array, n: number, a: number, f: number) {
  const out = new Float32Array(n * a * 7);
  for (let r = 0; r < n * a; r++) {
    let m = -Infinity,
      c = -1;
    for (let k = 5; k < f; k++) {
      const v = raw[r * f + k]!;
      if (v > m) {
        m = v;
        c = k - 5;
      }
    }
    for (let k = 0; k < 5; k++) out[r * 7 + k] = raw[r * f + k]!;
    out[r * 7 + 5] = m;
    out[r * 7 + 6] = c;
  }
  return out;
}

/** An identity graph, so the test writes the raw output itself (ties included). */
function identityYolo(opset: number, d1: number, d2: number, metadata?: Record<string, string>): Uint8Array {
  const b = new OnnxGraphBuilder();
  b.node('Identity', ['x'], ['output0']);
  return b.encode({
    name: 'identity',
    opset,
    metadata,
    inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: ['batch', d1, d2] }],
    outputs: [{ name: 'output0', elemType: DataType.FLOAT, shape: ['batch', d1, d2] }],
  });
}

for (const opset of [13, 18]) {
  test(`opset ${opset}: the twin holds each anchor's box, highest score and its first class, ties included`, async () => {
    const [n, f, a] = [3, 4 + 7, 50];
    const r = withBestClass(identityYolo(opset, f, a), ['output0']);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    const s = await ort.InferenceSession.create(r.bytes);
    assert.deepEqual(s.outputNames, ['output0', bestClassOutput('output0')]);
    // Scores on a coarse grid, so that several classes of an anchor often share its highest score.
    const x = Float32Array.from({ length: n * f * a }, (_, i) => ((i * 7919) % 13) / 4);
    const out = await s.run({ x: new ort.Tensor('float32', x, [n, f, a]) });
    assert.deepEqual(out[bestClassOutput('output0')]!.dims, [n, 6, a]);
    assert.deepEqual(out[bestClassOutput('output0')]!.data, bestByHand(x, n, f, a));
    assert.deepEqual(out.output0!.data, x, 'the raw output is still there, unchanged');
  });

  test(`opset ${opset}: a YOLOv5 output's twin holds each row's box, objectness, highest score and its first class`, async () => {
    const [n, a, f] = [2, 40, 5 + 6];
    const r = withBestClass(identityYolo(opset, a, f), ['output0']);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    const s = await ort.InferenceSession.create(r.bytes);
    const x = Float32Array.from({ length: n * a * f }, (_, i) => ((i * 7919) % 11) / 4);
    const out = await s.run({ x: new ort.Tensor('float32', x, [n, a, f]) });
    assert.deepEqual(out[bestClassOutput('output0')]!.dims, [n, a, 7]);
    assert.deepEqual(out[bestClassOutput('output0')]!.data, rowsByHand(x, n, a, f));
  });
}

test('decodeYoloBest over the twin answers what decodeYolo answers over the raw output', () => {
  const [f, a] = [4 + 5, 400];
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 16777216;
  const raw = Float32Array.from({ length: f * a }, (_, i) =>
    i < 4 * a ? 20 + rnd() * 200 : Math.round(rnd() * 8) / 8,
  );
  raw[5 * a + 3] = Number.NaN; // a NaN score is never a candidate
  const best = bestByHand(raw, 1, f, a);
  for (const minScore of [0, 0.5, 0.99]) {
    const o = { layout: 'yolov8', numClasses: 5, minScore, iouThreshold: 0.5, maxDetections: 50 } as const;
    assert.deepEqual(decodeYoloBest(best, [1, 6, a], o), decodeYolo(raw, [1, f, a], o), `minScore ${minScore}`);
  }
  // YOLOv5 rows: score = objectness x the best class's score, both skipped below the minimum.
  const rows = Float32Array.from({ length: a * 10 }, (_, i) =>
    i % 10 < 4 ? 20 + rnd() * 200 : Math.round(rnd() * 8) / 8,
  );
  for (const minScore of [0, 0.3, 0.9]) {
    const o = { layout: 'yolov5', numClasses: 5, minScore, iouThreshold: 0.5, maxDetections: 50 } as const;
    assert.deepEqual(
      decodeYoloBest(rowsByHand(rows, 1, a, 10), [1, a, 7], o),
      decodeYolo(rows, [1, a, 10], o),
      `yolov5, minScore ${minScore}`,
    );
  }
  // YOLOX: the same rows on its grid (a 64 x 64 input at strides 8, 16, 32: 84 cells), offsets and log sizes.
  const grid = Float32Array.from({ length: 84 * 8 }, (_, i) =>
    i % 8 < 4 ? rnd() * 2 - 0.5 : Math.round(rnd() * 8) / 8,
  );
  for (const minScore of [0, 0.3, 0.9]) {
    const o = {
      layout: 'yolox',
      numClasses: 3,
      minScore,
      iouThreshold: 0.5,
      input: { width: 64, height: 64 },
    } as const;
    assert.deepEqual(
      decodeYoloBest(rowsByHand(grid, 1, 84, 8), [1, 84, 7], o),
      decodeYolo(grid, [1, 84, 8], o),
      `yolox, minScore ${minScore}`,
    );
  }
});

test('which outputs are reduced: rank 3 with a fixed feature axis, channels-first or a row an anchor; the plan takes them', () => {
  const out = (shape: (number | string | null)[], elemType: number = DT.FLOAT) => ({ name: 'o', shape, elemType });
  assert.ok(reducibleOutput(out([1, 84, 8400])));
  assert.ok(reducibleOutput(out(['batch', 84, 'anchors'])));
  assert.ok(reducibleOutput(out([1, 84, 8400], DT.FLOAT16)));
  assert.equal(twinForm(out([1, 84, 8400])), 'channels');
  assert.equal(twinForm(out([1, 25200, 85])), 'rows', 'rows of a YOLOv5');
  assert.equal(twinForm(out(['batch', 'anchors', 85])), 'rows');
  assert.ok(!reducibleOutput(out([1, 100, 6])), 'end-to-end rows');
  assert.ok(!reducibleOutput(out([1, 'a', 'f'])), 'neither fixed');
  assert.ok(!reducibleOutput(out([1, 84, 8400], DT.INT64)));
  assert.ok(!reducibleOutput(out([84, 8400])));
  const base = { dequantize: 'off', fp16: 'off', uint8Input: 'off', providers: ['cpu'], batchAxis: false } as const;
  assert.deepEqual(graphPlan({ ...base, float16: true, yoloOutputs: ['output0'] }).bestClass, ['output0']);
  assert.equal(graphPlan({ ...base, float16: true, yoloOutputs: [] }).bestClass, undefined);
});

test("an output the exporter's metadata says is no detector's gets no twin: a segment export, other class counts", () => {
  const names = (n: number) => `{${Array.from({ length: n }, (_, i) => `${i}: 'c${i}'`).join(', ')}}`;
  const twin = (g: Uint8Array) => {
    const r = withBestClass(g, ['output0']);
    assert.ok(r.ok, r.ok ? '' : r.reason);
    return r.bytes !== g;
  };
  assert.ok(twin(identityYolo(13, 11, 40, { task: 'detect', names: names(7) })), 'YOLOv8, 7 classes');
  assert.ok(twin(identityYolo(13, 40, 12, { names: names(7) })), 'YOLOv5, 7 classes');
  assert.ok(!twin(identityYolo(13, 11, 40, { task: 'segment', names: names(7) })), 'a segment export');
  assert.ok(!twin(identityYolo(13, 11 + 32, 40, { task: 'pose', names: names(7) })), 'a pose export');
  assert.ok(!twin(identityYolo(13, 11, 40, { names: names(5) })), 'features beside the box and 5 classes');
  assert.ok(twin(identityYolo(13, 11, 40)), 'no metadata: the shape decides');
});

test('a graph the step cannot vouch for is refused with a reason, and the plan loads it as it was', async () => {
  const g = identityYolo(13, 9, 40);
  const no = withBestClass(g, ['missing']);
  assert.ok(!no.ok && /no output missing/.test(no.reason), JSON.stringify(no));
  const old = withBestClass(identityYolo(9, 9, 40), ['output0']);
  assert.ok(!old.ok && /opset 9/.test(old.reason), JSON.stringify(old));
  const twice = withBestClass((withBestClass(g, ['output0']) as { bytes: Uint8Array }).bytes, ['output0']);
  assert.ok(!twice.ok && /already names/.test(twice.reason), JSON.stringify(twice));
  const made = await makeGraph(g, { bestClass: ['missing'] });
  assert.match(made.refused.bestClass ?? '', /no output missing/);
  assert.equal(made.bytes, undefined);
});

test('yolov8n: its twin on a COCO photo is the raw output reduced, after every other step of a GPU load', {
  skip,
}, async () => {
  const made = await makeGraph(byoPath(YOLO), {
    dequantize: 'any',
    batchAxis: true,
    fp16: true,
    bestClass: ['output0'],
  });
  assert.deepEqual(made.refused, {});
  const s = await ort.InferenceSession.create(made.bytes!);
  const img = await loadRgb(join(cocoDir(), 'images', `${PHOTOS[0]}.jpg`));
  // The photo stretched to 640 x 640, NCHW in 0..1: any real input will do for the reduction.
  const x = new Float32Array(2 * 3 * 640 * 640);
  for (let y = 0; y < 640; y++)
    for (let xx = 0; xx < 640; xx++) {
      const sp = (Math.floor((y * img.height) / 640) * img.width + Math.floor((xx * img.width) / 640)) * 3;
      for (let c = 0; c < 3; c++) x[c * 640 * 640 + y * 640 + xx] = img.data[sp + c]! / 255;
    }
  x.copyWithin(3 * 640 * 640, 0, 3 * 640 * 640);
  const out = await s.run({ [s.inputNames[0]!]: new ort.Tensor('float32', x, [2, 3, 640, 640]) });
  const raw = out.output0!.data as Float32Array;
  assert.deepEqual(out[bestClassOutput('output0')]!.data, bestByHand(raw, 2, 84, 8400));
});

test('yolov8n detecting COCO photos from the twin finds exactly what it finds from the whole output', {
  skip,
}, async (t) => {
  const model = { id: 'yolov8n-int8', file: byoPath(YOLO) };
  const images = await Promise.all(PHOTOS.map((p) => loadRgb(join(cocoDir(), 'images', `${p}.jpg`))));
  const all = async (det: Awaited<ReturnType<typeof cpuDetector>>['det'], concurrent: boolean) => {
    const one = (i: number) => det.detectRaw(images[i]!, 0.05);
    if (concurrent) return Promise.all(images.map((_, i) => one(i)));
    const out: RawDetection[][] = [];
    for (let i = 0; i < images.length; i++) out.push(await one(i));
    return out;
  };
  for (const opts of [{}, { uint8Input: 'on' as const }, { batch: { maxBatch: 4, maxWaitMs: 50 } }]) {
    const what = JSON.stringify(opts);
    const whole = await cpuDetector(t, { ...opts, reduceYoloOutput: false }, model);
    const reduced = await cpuDetector(t, opts, model);
    assert.deepEqual((await whole.det.handle.session()).outputNames, ['output0'], what);
    assert.deepEqual((await reduced.det.handle.session()).outputNames, ['output0', bestClassOutput('output0')], what);
    const concurrent = 'batch' in opts;
    const a = await all(whole.det, concurrent);
    const b = await all(reduced.det, concurrent);
    assert.ok(
      a.every((l) => l.length > 0),
      `${what}: something found in each photo`,
    );
    assert.deepEqual(b, a, what);
    // A run that names no output gets the graph's own outputs, not the twin.
    const bytes = (await reduced.det.handle.imageInput()) === 'uint8';
    const input = await (bytes ? modelInputBytes : modelInput)(images[0]!, reduced.det.pre);
    const raw = await reduced.det.handle.run({ [reduced.det.pre.inputName]: input.tensor });
    assert.deepEqual(Object.keys(raw), ['output0'], what);
  }
  // The raw file is not touched: the twin exists only in the loaded graph.
  assert.equal((await readFile(byoPath(YOLO))).includes(Buffer.from('best-class')), false);
});

test('a YOLOv5 detector finds exactly the same boxes from its twin as from its whole output, alone and batched', async (t) => {
  const labels = ['cat', 'dog', 'car'];
  // Twelve rows, more than the 8 features a row, so the output reads as one anchor a row.
  const boxes = Array.from({ length: 12 }, (_, i) => ({
    cx: 6 + (i % 4) * 16,
    cy: 8 + Math.floor(i / 4) * 20,
    w: 10 + (i % 3) * 4,
    h: 8 + (i % 2) * 6,
    cls: i % 3,
    score: 0.2 + ((i * 37) % 80) / 100,
  }));
  const images = [255, 200, 128, 60].map((v) => solidImage(96, 64, [v, v, v]));
  const dataDir = await tempDataDir(t);
  const manifests = join(dataDir, 'manifests');
  await mkdir(manifests, { recursive: true });
  await writeFile(join(manifests, 'tiny-v5.onnx'), tinyYoloOnnx('yolov5', boxes, labels.length, 64));
  await writeFile(
    join(manifests, 'tiny-v5.json'),
    JSON.stringify({
      id: 'tiny-v5',
      task: 'detect',
      format: 'onnx',
      source: { file: 'tiny-v5.onnx' },
      labels,
      preprocess: { resize: 'letterbox', width: 64, height: 64, scale: 1 / 255 },
      postprocess: { type: 'yolo', layout: 'yolov5', nmsIou: 0.45 },
    }),
  );
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare('tiny-v5');
  for (const batch of [undefined, { maxBatch: 4, maxWaitMs: 50 }]) {
    const run = async (reduce: boolean) => {
      const runtime = new InferenceRuntime({
        providers: ['cpu'],
        intraOpThreads: 1,
        log: collectingLog(),
        reduceYoloOutput: reduce,
        ...(batch ? { batch } : {}),
      });
      t.after(() => runtime.release());
      const det = await Detector.create(runtime, registry, 'tiny-v5');
      const names = (await det.handle.session()).outputNames;
      return { names, found: await Promise.all(images.map((img) => det.detectRaw(img, 0.05))) };
    };
    const whole = await run(false);
    const reduced = await run(true);
    assert.deepEqual(whole.names, ['output0']);
    assert.deepEqual(reduced.names, ['output0', bestClassOutput('output0')]);
    assert.ok(
      whole.found.every((l) => l.length > 0),
      'something found in each image',
    );
    assert.deepEqual(reduced.found, whole.found, JSON.stringify(batch));
  }
});
