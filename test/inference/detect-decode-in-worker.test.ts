// A detector's output is decoded in the worker thread that ran its session, and only the boxes come back
// (a YOLOv8's raw output is 2.7 MB a run: a new buffer that size on the main thread each run made V8 collect
// the whole main heap about every second under load). With a real export (yolov8n-int8) on COCO photos the
// boxes are exactly those the raw output decoded on this thread gives, and the run answers only the boxes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { BYO_MODELS, byoModelsSkip, byoPath } from '../../eval/byo-dir.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { Detector, modelInput } from '../../src/detection/detect.js';
import { DECODED_BOXES, decodeYolo, unletterbox } from '../../src/detection/yolo.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { collectingLog, loadRgb, tempDataDir } from '../helpers/inference.js';

const skip = byoModelsSkip(BYO_MODELS['yolov8n-int8']) || cocoSkip;

test('a YOLOv8 export decoded in its worker: the same boxes as its raw output decoded here, and only the boxes cross', {
  skip,
}, async (t) => {
  const dataDir = await tempDataDir(t);
  await writeByoManifest(dataDir, { id: 'yolov8n-int8', task: 'detect', file: byoPath(BYO_MODELS['yolov8n-int8']) });
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare('yolov8n-int8');
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 2, log: collectingLog() });
  t.after(() => runtime.release());
  const det = await Detector.create(runtime, registry, 'yolov8n-int8');
  assert.equal(det.layout, 'yolov8');

  for (const name of ['000000000025', '000000000071', '000000000094']) {
    const img = await loadRgb(join(cocoDir(), 'images', `${name}.jpg`));
    const inWorker = await det.detectRaw(img, 0.25, 0.45);
    const input = await modelInput(img, det.pre);
    const raw = await det.handle.run({ [det.pre.inputName]: input.tensor });
    const out = Object.values(raw)[0]!;
    assert.deepEqual(out.dims, [1, 84, 8400]);
    const here = decodeYolo(out.data as Float32Array, out.dims, {
      layout: 'yolov8',
      numClasses: det.labels.length,
      minScore: 0.25,
      iouThreshold: 0.45,
      input: { width: det.pre.width, height: det.pre.height },
    }).map((b) => ({ ...b, box: unletterbox(b.box, input.letterbox!, img.width, img.height) }));
    assert.ok(here.length >= 1, `${name}: something found`);
    assert.deepEqual(inWorker, here, name);
  }

  // What crosses: one small tensor of boxes, six numbers each.
  const img = await loadRgb(join(cocoDir(), 'images', '000000000025.jpg'));
  const input = await modelInput(img, det.pre);
  const decoded = await det.handle.run({ [det.pre.inputName]: input.tensor }, undefined, undefined, {
    decode: { options: { layout: 'yolov8', numClasses: 80, minScore: 0.25, iouThreshold: 0.45 } },
  });
  assert.deepEqual(Object.keys(decoded), [DECODED_BOXES]);
  const boxes = decoded[DECODED_BOXES]!;
  assert.equal(boxes.dims[1], 6);
  assert.ok(boxes.dims[0]! >= 1 && (boxes.data as Float64Array).length === boxes.dims[0]! * 6);
});
