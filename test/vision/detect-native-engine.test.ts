// POST /v1/vision/detect through a real server with SIGHTFLOW_INFERENCE_ENGINE=native (the native ONNX Runtime
// engine, here on the CPU) answers what the default server (onnxruntime-node's binding) answers: the same objects,
// scores and boxes, since both run the same ONNX Runtime; and the engine's setting reaches the runtime.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';

let binding: TestApp | undefined;
let native: TestApp | undefined;
before(async () => {
  if (cocoSkip) return;
  binding = await startTestApp();
  native = await startTestApp({ SIGHTFLOW_INFERENCE_ENGINE: 'native', SIGHTFLOW_CUDNN_CONV_ALGO_SEARCH: 'heuristic' });
});
after(async () => {
  await binding?.close();
  await native?.close();
});

const dataUri = (name: string) =>
  `data:image/jpeg;base64,${readFileSync(join(cocoDir(), 'images', `${name}.jpg`)).toString('base64')}`;

test('a server on the native engine answers detect as the binding’s does', { skip: cocoSkip }, async () => {
  const runtime = native!.app.services.models.runtime;
  assert.equal(runtime.engine.kind, 'native');
  assert.equal(runtime.engine.cudnnSearch, 'heuristic');
  assert.equal(runtime.engine.tensorrtCacheDir, join(native!.dataDir, 'tensorrt-cache'));
  assert.equal(binding!.app.services.models.runtime.engine.kind, 'binding');
  let objects = 0;
  for (const name of ['000000000025', '000000000036', '000000000073', '000000000081']) {
    const json = { image_base64: dataUri(name), confidence_threshold: 0.2 };
    const a = await api(binding!, '/v1/vision/detect', { method: 'POST', json });
    const b = await api(native!, '/v1/vision/detect', { method: 'POST', json });
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
    assert.equal(b.body.model, a.body.model);
    assert.deepEqual(b.body.objects, a.body.objects, name);
    objects += a.body.objects.length;
  }
  assert.ok(objects >= 4, `only ${objects} objects`);
});
