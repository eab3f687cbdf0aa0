// Bring-your-own detectors over HTTP, with real public exports (eval/byo-dir.ts): registered by bare
// manifests in <data-dir>/manifests (no size, layout or labels given), chosen per request with `model`,
// listed by GET /v1/models, checked against their own class names, and run by a video task's detect step.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BYO_MODELS, byoModelsSkip, byoPath, type ByoModelId } from '../../eval/byo-dir.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { carPhoto, cocoSkip } from '../helpers/eval-data.js';
import { serveFile } from '../helpers/media-server.js';
import { chunksOf, createTask, readStream, waitStatus } from '../helpers/video-tasks.js';
import { stillClip } from '../helpers/videos.js';

const IDS = Object.keys(BYO_MODELS) as ByoModelId[];
const skip = byoModelsSkip(...Object.values(BYO_MODELS)) || cocoSkip;
let t: TestApp;
let dataDir: string;
let photo: string;

before(async () => {
  if (skip) return;
  dataDir = mkdtempSync(join(tmpdir(), 'sightflow-byo-'));
  for (const id of IDS) await writeByoManifest(dataDir, { id, task: 'detect', file: byoPath(BYO_MODELS[id]) });
  t = await startTestApp({}, { dataDir });
  await t.app.services.models.ready;
  photo = readFileSync(carPhoto()!).toString('base64');
});
after(async () => {
  await t?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

const detect = (json: Record<string, unknown>) =>
  api(t, '/v1/vision/detect', { method: 'POST', json: { image_base64: photo, ...json } });

test('GET /v1/models lists every served model; the exports configure themselves from their metadata', {
  skip,
}, async () => {
  const r = await api(t, '/v1/models');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.object, 'list');
  const by = new Map<string, any>(r.body.data.map((m: any) => [m.id, m]));
  assert.deepEqual(
    [...by.values()]
      .filter((m) => m.task === 'detect')
      .map((m) => [m.id, m.default, m.source, m.labels_count, m.input_size, m.layout]),
    [
      ['centernet-coco', true, 'builtin', 80, [512, 512], 'xyxy-score-class'],
      ['yolo11n-face-int8', false, 'bring-your-own', 1, [640, 640], 'yolov8'],
      ['yolo11n-int8-320', false, 'bring-your-own', 80, [320, 320], 'yolov8'],
      ['yolov8n-int8', false, 'bring-your-own', 80, [640, 640], 'yolov8'],
    ],
  );
  assert.equal(by.get('pp-ocrv4')?.task, 'ocr');
  assert.equal(by.get('sightflow-describe-v1')?.task, 'describe');
  assert.deepEqual(
    by.get('multimodal-embedding-v1')?.types?.length > 0 && by.get('multimodal-embedding-v1').default,
    true,
  );

  const face = await api(t, '/v1/models/yolo11n-face-int8');
  assert.equal(face.status, 200, face.text);
  assert.deepEqual(face.body.labels, ['face']);
  const missing = await api(t, '/v1/models/no-such-model');
  assert.equal(missing.status, 404);
  assert.equal(missing.body.error.code, 'not_found');
});

test('model picks the detector; the answer says which ran', { skip }, async () => {
  const builtin = await detect({});
  assert.equal(builtin.status, 200, builtin.text);
  assert.equal(builtin.body.model, 'centernet-coco');
  for (const id of ['yolov8n-int8', 'yolo11n-int8-320'] as const) {
    const r = await detect({ model: id, confidence_threshold: 0.4 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.model, id);
    const train = r.body.objects.find((o: any) => o.class === 'train');
    assert.ok(train && train.confidence > 0.6, `${id} finds the train: ${JSON.stringify(r.body.objects)}`);
    // The train spans most of the 612x407 photo's width in its middle band.
    assert.ok(
      train.bbox[0] < 60 && train.bbox[2] > 480 && train.bbox[1] > 150 && train.bbox[3] < 330,
      JSON.stringify(train.bbox),
    );
  }
  const person = await detect({ model: 'yolov8n-int8', classes: ['car'], confidence_threshold: 0.3 });
  assert.ok(person.body.objects.length > 0 && person.body.objects.every((o: any) => o.class === 'car'), person.text);
});

test("an unknown model is a 400 naming the detectors; classes are checked against the model's own labels", {
  skip,
}, async () => {
  const r = await detect({ model: 'yolov9000' });
  assert.equal(r.status, 400);
  assert.deepEqual(r.body.error, {
    type: 'invalid_request_error',
    code: 'unknown_model',
    param: 'model',
    message:
      'Unknown detect model "yolov9000"; models that serve detect: centernet-coco, yolo11n-face-int8, yolo11n-int8-320, yolov8n-int8',
  });
  const face = await detect({ model: 'yolo11n-face-int8', classes: ['person'] });
  assert.equal(face.status, 400);
  assert.deepEqual(face.body.error, {
    type: 'invalid_request_error',
    code: 'unknown_class',
    param: 'classes',
    message: 'Unknown class "person"; valid classes: face',
  });
  const ok = await detect({ model: 'yolo11n-face-int8', classes: ['face'] });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.body.model, 'yolo11n-face-int8');

  const ocr = await api(t, '/v1/vision/ocr', { method: 'POST', json: { image_base64: photo, model: 'tesseract-9' } });
  assert.equal(ocr.status, 400);
  assert.equal(ocr.body.error.message, 'Unknown ocr model "tesseract-9"; models that serve ocr: pp-ocrv4');
  const describe = await api(t, '/v1/vision/describe', {
    method: 'POST',
    json: { image_base64: photo, model: 'gpt-9' },
  });
  assert.equal(describe.status, 400);
  assert.equal(describe.body.error.param, 'model');
  const video = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: 'http://127.0.0.1:9/x.mp4' }],
      steps: [{ model: 'detect', parameters: { model: 'nope' } }],
    },
  });
  assert.equal(video.status, 400);
  assert.equal(video.body.error.param, 'steps[0].parameters.model');
  assert.equal(video.body.error.code, 'unknown_model');
  const videoClass = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: 'http://127.0.0.1:9/x.mp4' }],
      steps: [{ model: 'detect', parameters: { model: 'yolo11n-face-int8', classes: ['car'] } }],
    },
  });
  assert.equal(videoClass.status, 400);
  assert.equal(videoClass.body.error.message, 'Unknown class "car"; valid classes: face');
});

test("a video task whose detect step names yolov8n-int8 streams that model's boxes, tracked", {
  skip,
  timeout: 300_000,
}, async () => {
  const server = await serveFile(await stillClip(carPhoto()!, 2), 'video/mp4');
  try {
    const id = await createTask(t, {
      input: [{ type: 'video_url', url: `${server.url}/clip.mp4`, sampling: { mode: 'fps', value: 2 } }],
      steps: [{ model: 'detect', parameters: { model: 'yolov8n-int8', confidence_threshold: 0.4 } }],
    });
    await waitStatus(t, id, ['succeeded'], 240_000);
    const frames = chunksOf((await readStream(t, id)).bytes).filter((c) => c.delta?.results?.[0]?.targets);
    assert.ok(frames.length >= 3, `frames: ${frames.length}`);
    const trains = frames.map((c) => c.delta.results[0].targets.find((x: any) => x.class === 'train'));
    assert.ok(trains.every(Boolean), 'every frame has the train');
    // Same object on a still clip: one track id throughout. CenterNet scores it 0.60; this model 0.76.
    assert.equal(new Set(trains.map((x: any) => x.track_id)).size, 1);
    assert.ok(
      trains.every((x: any) => x.confidence > 0.7),
      JSON.stringify(trains.map((x: any) => x.confidence)),
    );
  } finally {
    await server.close();
  }
});
