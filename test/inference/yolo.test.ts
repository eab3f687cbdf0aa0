// Bring-your-own YOLO detectors: a tiny ONNX model generated here (its weights make the boxes known) is
// registered by a manifest pointing at the local file, prepared, and run through Detector end to end.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { Detector } from '../../src/detection/detect.js';
import { decodeYolo, nms, unletterbox, type Letterbox } from '../../src/detection/yolo.js';
import { collectingLog, solidImage, tempDataDir, tinyYoloOnnx, type TinyBox } from '../helpers/inference.js';

const SIZE = 64;
const LABELS = ['cat', 'dog', 'car'];
// Model-input pixels (64x64 letterboxed). Box 1 overlaps box 0 heavily (same class): NMS must drop it.
const BOXES: TinyBox[] = [
  { cx: 32, cy: 32, w: 20, h: 10, cls: 1, score: 0.9 },
  { cx: 33, cy: 32, w: 20, h: 10, cls: 1, score: 0.6 },
  { cx: 10, cy: 40, w: 8, h: 8, cls: 2, score: 0.8 },
  { cx: 50, cy: 20, w: 6, h: 6, cls: 0, score: 0.3 },
];

async function byoDetector(
  t: Parameters<typeof tempDataDir>[0],
  layout: 'yolov8' | 'yolov5',
  batch?: { maxBatch: number; maxWaitMs: number },
) {
  const dataDir = await tempDataDir(t);
  const manifests = join(dataDir, 'manifests');
  await mkdir(manifests, { recursive: true });
  await writeFile(join(manifests, `tiny-${layout}.onnx`), tinyYoloOnnx(layout, BOXES, LABELS.length, SIZE));
  await writeFile(
    join(manifests, `tiny-${layout}.json`),
    JSON.stringify({
      id: `tiny-${layout}`,
      task: 'detect',
      format: 'onnx',
      source: { file: `tiny-${layout}.onnx` },
      inputs: [{ name: 'images', shape: ['batch', 3, SIZE, SIZE], layout: 'nchw' }],
      outputs: [{ name: 'output0', shape: [] }],
      labels: LABELS,
      preprocess: { resize: 'letterbox', width: SIZE, height: SIZE, scale: 1 / 255 },
      postprocess: { type: 'yolo', layout, nmsIou: 0.45 },
      ...(batch ? { batch } : {}),
    }),
  );
  const registry = await ModelRegistry.open(dataDir);
  const prep = await registry.prepare(`tiny-${layout}`);
  assert.equal(prep.action, 'copied');
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log: collectingLog() });
  t.after(() => runtime.release());
  return Detector.create(runtime, registry, `tiny-${layout}`);
}

for (const layout of ['yolov8', 'yolov5'] as const) {
  test(`${layout} layout: known boxes come back in source pixels, NMS applied`, async (t) => {
    const det = await byoDetector(t, layout);
    // 128x64 white image: letterboxed to 64x32 at scale 0.5 with 16 grey (114) rows above and below.
    const img = solidImage(128, 64, [255, 255, 255]);
    const brightness = (32 * 255 + 32 * 114) / 64 / 255;
    const objs = await det.detect(img, { confidence_threshold: 0.2 });
    const expectScore = (s: number) => (layout === 'yolov5' ? brightness * brightness * s : brightness * s);
    const got = objs.map((o) => o.class);
    assert.deepEqual(
      got,
      ['dog', 'car', 'cat'].filter(
        (_, i) => [0.9, 0.8, 0.3][i] * (layout === 'yolov5' ? brightness ** 2 : brightness) >= 0.2,
      ),
    );
    const dog = objs.find((o) => o.class === 'dog')!;
    // cx 32, cy 32, w 20, h 10 in model pixels -> x (22..42)/0.5, y (27-16..37-16)/0.5
    assert.deepEqual(
      dog.bbox.map((v) => Math.round(v)),
      [44, 22, 84, 42],
    );
    assert.ok(Math.abs(dog.confidence - expectScore(0.9)) < 1e-3, `score ${dog.confidence}`);
    assert.equal(dog.attributes.color, 'white');
    assert.equal(objs.filter((o) => o.class === 'dog').length, 1, 'the overlapping duplicate is suppressed');
  });
}

test('a dark image gives no detections; classes filter and unknown class 400', async (t) => {
  const det = await byoDetector(t, 'yolov8');
  assert.deepEqual(await det.detect(solidImage(64, 64, [0, 0, 0])), []);
  const white = solidImage(64, 64, [255, 255, 255]);
  const onlyCars = await det.detect(white, { classes: ['car'], confidence_threshold: 0.1 });
  assert.deepEqual(
    onlyCars.map((o) => o.class),
    ['car'],
  );
  // Square source: no letterbox, boxes at scale 1.
  assert.deepEqual(onlyCars[0].bbox, [6, 36, 14, 44]);
  await assert.rejects(det.detect(white, { classes: ['unicorn'] }), (e: unknown) => {
    const err = e as { status: number; code: string; param: string; message: string };
    assert.equal(err.status, 400);
    assert.equal(err.code, 'unknown_class');
    assert.equal(err.param, 'classes');
    assert.match(err.message, /Unknown class "unicorn"; valid classes: cat, dog, car/);
    return true;
  });
});

test('a detector with a batch axis micro-batches concurrent images and returns each its own boxes', async (t) => {
  const det = await byoDetector(t, 'yolov8', { maxBatch: 4, maxWaitMs: 250 }); // generous: the machine is loaded
  const grey = (v: number) => solidImage(64, 64, [v, v, v]);
  const [white, mid, black] = await Promise.all(
    [grey(255), grey(128), grey(0)].map((img) => det.detect(img, { confidence_threshold: 0.05 })),
  );
  assert.deepEqual(
    white.map((o) => [o.class, o.confidence]),
    [
      ['dog', 0.9],
      ['car', 0.8],
      ['cat', 0.3],
    ],
  );
  const k = 128 / 255;
  assert.deepEqual(
    mid.map((o) => [o.class, o.confidence]),
    [
      ['dog', 0.9 * k],
      ['car', 0.8 * k],
      ['cat', 0.3 * k],
    ].map(([c, v]) => [c, Math.round((v as number) * 1e4) / 1e4]),
  );
  assert.deepEqual(black, []);
  assert.deepEqual(det.handle.stats, { runs: 1, items: 3, padded: 0 }, 'the three images ran as one batch');
});

test('decodeYolo layouts, unletterbox and NMS on plain arrays', () => {
  // v8: [1, 4+2, 2] channels first
  const v8 = Float32Array.from([10, 50, 10, 50, 4, 4, 4, 4, 0.9, 0.1, 0.2, 0.7]);
  assert.deepEqual(
    decodeYolo(v8, [1, 6, 2], { layout: 'auto', numClasses: 2, minScore: 0.5, iouThreshold: 0.5 }).map((b) => [
      b.classId,
      b.box,
    ]),
    [
      [0, [8, 8, 12, 12]],
      [1, [48, 48, 52, 52]],
    ],
  );
  const lb: Letterbox = { scale: 1, padX: 0, padY: 80, width: 640, height: 480 }; // 640x480 in 640x640
  assert.deepEqual(unletterbox([0, 80, 640, 560], lb, 640, 480), [0, 0, 640, 480]);
  const kept = nms(
    [
      { box: [0, 0, 10, 10], score: 0.9, classId: 0 },
      { box: [1, 0, 11, 10], score: 0.8, classId: 0 },
      { box: [1, 0, 11, 10], score: 0.7, classId: 1 },
    ],
    0.5,
  );
  assert.deepEqual(
    kept.map((k) => k.score),
    [0.9, 0.7],
  );
});

test('NMS with a limit keeps exactly the first boxes NMS without one keeps', () => {
  let seed = 11;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 16777216;
  const boxes = Array.from({ length: 400 }, () => {
    const x = rnd() * 300,
      y = rnd() * 300;
    return {
      box: [x, y, x + 20 + rnd() * 60, y + 20 + rnd() * 60] as [number, number, number, number],
      score: Math.round(rnd() * 50) / 50,
      classId: Math.floor(rnd() * 3),
    };
  });
  for (const agnostic of [false, true]) {
    const all = nms(boxes, 0.5, agnostic);
    assert.ok(all.length > 30, `${all.length} kept`);
    for (const limit of [1, 10, 30, all.length + 5])
      assert.deepEqual(nms(boxes, 0.5, agnostic, limit), all.slice(0, limit));
  }
});
