// Zero-config detectors: a bare manifest (id, task, format, source) over an ONNX file is enough; input size,
// pixel format, output layout and class names come from the file's metadata_props and declared shapes
// (src/detection/detector-config.ts). Generated models with known outputs cover the layouts the real exports in
// byo-models.test.ts do not: YOLOX's raw grid and DETR-style normalised queries with logits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { readOnnxInfo } from '../../src/inference/onnx-metadata.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { Detector } from '../../src/detection/detect.js';
import { parseImgsz, parseNames } from '../../src/detection/detector-config.js';
import { decodeYolo, detectLayout, gridCells } from '../../src/detection/yolo.js';
import { collectingLog, fixedOutputOnnx, solidImage, tempDataDir } from '../helpers/inference.js';

async function bareDetector(t: Parameters<typeof tempDataDir>[0], id: string, onnx: Uint8Array, extra?: object) {
  const dataDir = await tempDataDir(t);
  const file = join(dataDir, `${id}.onnx`);
  await writeFile(file, onnx);
  await writeByoManifest(dataDir, { id, task: 'detect', file, extra });
  const registry = await ModelRegistry.open(dataDir);
  assert.deepEqual(registry.problems, []);
  await registry.prepare(id);
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log: collectingLog() });
  t.after(() => runtime.release());
  return Detector.create(runtime, registry, id);
}

test('metadata values: Ultralytics names and imgsz, JSON and list forms', () => {
  assert.deepEqual(parseNames("{0: 'person', 1: \"o'clock\", 2: 'traffic light'}"), [
    'person',
    "o'clock",
    'traffic light',
  ]);
  assert.deepEqual(parseNames('{"0": "face"}'), ['face']);
  assert.deepEqual(parseNames("['cat', 'dog']"), ['cat', 'dog']);
  assert.deepEqual(parseNames(''), []);
  assert.deepEqual(parseImgsz('[640, 480]'), { width: 480, height: 640 });
  assert.deepEqual(parseImgsz('320'), { width: 320, height: 320 });
  assert.equal(parseImgsz('none'), undefined);
});

test('the ONNX reader finds metadata_props and declared shapes in a generated model', () => {
  const bytes = fixedOutputOnnx(new Float32Array(6 * 3), [6, 3], ['batch', 3, 'h', 'w'], {
    names: "{0: 'a', 1: 'b'}",
    imgsz: '[32, 48]',
  });
  const info = readOnnxInfo(bytes);
  assert.deepEqual(info.metadata, { names: "{0: 'a', 1: 'b'}", imgsz: '[32, 48]' });
  assert.deepEqual(info.inputs, [{ name: 'images', shape: ['batch', 3, 'h', 'w'], elemType: 1 }]);
  assert.deepEqual(info.outputs, [{ name: 'output0', shape: ['batch', 6, 3], elemType: 1 }]);
  assert.throws(() => readOnnxInfo(new Uint8Array([0x0a, 0xff])), /not a readable ONNX model/);
});

test('layout from shape and input size: YOLOX grid vs YOLOv5 anchors, DETR queries vs transposed YOLOv8', () => {
  const input = { width: 640, height: 640 };
  assert.equal(gridCells(input), 8400);
  assert.equal(detectLayout([1, 8400, 85], 80, input), 'yolox');
  assert.equal(detectLayout([1, 25200, 85], 80, input), 'yolov5');
  assert.equal(detectLayout([1, 300, 84], 80, input), 'rtdetr');
  assert.equal(detectLayout([1, 8400, 84], 80, input), 'yolov8-t');
  assert.equal(detectLayout([1, 84, 8400], 80, input), 'yolov8');
  assert.equal(detectLayout([1, 300, 6], 80, input), 'xyxy-score-class');
});

test('dynamic input: size from metadata imgsz, names from metadata, classes checked against them', async (t) => {
  // [1, 4+C, N] with C = 2, N = 3: one box of class "b" at (24, 16) 8x4 in a 48x32 input.
  const N = 3,
    F = 6;
  const v = new Float32Array(F * N);
  v[0] = 24;
  v[N] = 16;
  v[2 * N] = 8;
  v[3 * N] = 4;
  v[5 * N] = 0.9;
  const det = await bareDetector(
    t,
    'meta-yolo',
    fixedOutputOnnx(v, [F, N], ['batch', 3, 'h', 'w'], {
      names: "{0: 'a', 1: 'B'}",
      imgsz: '[32, 48]',
      stride: '32',
      task: 'detect',
    }),
  );
  assert.deepEqual([det.pre.width, det.pre.height], [48, 32]);
  assert.deepEqual(det.labels, ['a', 'B']);
  assert.deepEqual(det.origin, { labels: 'metadata', size: 'metadata' });
  assert.equal(det.layout, 'yolov8');
  const objs = await det.detect(solidImage(48, 32, [200, 200, 200]), { classes: ['b'] });
  assert.deepEqual(
    objs.map((o) => [o.class, o.confidence, o.bbox]),
    [['B', 0.9, [20, 14, 28, 18]]],
  );
  assert.throws(() => det.classFilter(['person']), /Unknown class "person"; valid classes: a, B/);
});

test('YOLOX raw grid output: cells decoded with their strides, BGR 0-255 input, top-left letterbox', async (t) => {
  const size = 64,
    C = 2,
    F = 5 + C;
  const cells = gridCells({ width: size, height: size });
  const v = new Float32Array(cells * F);
  // Stride 8, cell (gx 3, gy 2) is row 2 * 8 + 3 = 19: centre (3.5, 2.5) * 8, w 10, h 6.
  const row = 19;
  v.set([0.5, 0.5, Math.log(10 / 8), Math.log(6 / 8), 0.9, 0.1, 0.8], row * F);
  // Stride 32, cell (1, 1) is row 64 + 16 + 3: below the threshold (0.5 * 0.5).
  v.set([0, 0, 0, 0, 0.5, 0.5, 0], (64 + 16 + 3) * F);
  const det = await bareDetector(t, 'tiny-yolox', fixedOutputOnnx(v, [cells, F], [1, 3, size, size]), {
    labels: ['cat', 'dog'],
  });
  assert.equal(det.layout, 'yolox');
  assert.equal(det.pre.channelOrder, 'bgr');
  assert.equal(det.pre.scale, 1);
  assert.equal(det.pre.center, false);
  const objs = await det.detect(solidImage(size, size, [10, 20, 30]));
  assert.deepEqual(
    objs.map((o) => [o.class, o.confidence, o.bbox]),
    [['dog', 0.72, [23, 17, 33, 23]]],
  );
  // A 128x64 source letterboxed top-left at scale 0.5: no vertical offset to take away.
  const wide = await det.detect(solidImage(128, 64, [10, 20, 30]));
  assert.deepEqual(
    wide.map((o) => o.bbox),
    [[46, 34, 66, 46]],
  );
});

test('DETR-style queries: normalised cxcywh and class logits, stretched input, no NMS', async (t) => {
  const size = 64,
    C = 3,
    F = 4 + C,
    N = 10;
  const v = new Float32Array(N * F).fill(-10);
  v.set([0.5, 0.25, 0.25, 0.5, -5, 3, -5], 0);
  v.set([0.5, 0.25, 0.25, 0.5, -5, 2, -5], F); // a near-duplicate: DETR outputs are not NMS-ed
  const det = await bareDetector(
    t,
    'tiny-detr',
    fixedOutputOnnx(v, [N, F], [1, 3, size, size], { names: "{0: 'cat', 1: 'dog', 2: 'bird'}" }),
  );
  assert.equal(det.layout, 'rtdetr');
  assert.equal(det.pre.resize, 'stretch');
  const objs = await det.detect(solidImage(128, 64, [0, 0, 0]));
  const sig = (x: number) => Math.round(1e4 / (1 + Math.exp(-x))) / 1e4;
  assert.deepEqual(
    objs.map((o) => [o.class, o.confidence, o.bbox]),
    [
      ['dog', sig(3), [48, 0, 80, 32]],
      ['dog', sig(2), [48, 0, 80, 32]],
    ],
  );
  // The same numbers as probabilities are taken as they are.
  const probs = decodeYolo(new Float32Array([0.5, 0.5, 0.5, 0.5, 0.1, 0.7, 0.2]), [1, 1, 7], {
    layout: 'rtdetr',
    numClasses: 3,
    minScore: 0.5,
    iouThreshold: 0,
    input: { width: 10, height: 10 },
  });
  assert.deepEqual(
    probs.map((d) => ({ ...d, score: Math.round(d.score * 1e6) / 1e6 })),
    [{ box: [2.5, 2.5, 7.5, 7.5], score: 0.7, classId: 1 }],
  );
});

test('an Ultralytics export of another task is refused with the reason', async (t) => {
  await assert.rejects(
    bareDetector(t, 'tiny-cls', fixedOutputOnnx(new Float32Array(10), [1, 10], [1, 3, 32, 32], { task: 'classify' })),
    /is an Ultralytics classify export; detect, segment and pose exports can detect/,
  );
});
