// POST /v1/vision/detect through a real server with SIGHTFLOW_INFERENCE_UINT8_INPUT=on (the detector's graph
// takes bytes, here on the CPU) answers what the default server answers: the same confident objects (twins
// within the bytes-vs-float tolerances), the same model and usage.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { assertTwins, type AnyBox } from '../helpers/detection-twins.js';
import { BYTES_VS_FLOAT } from '../helpers/bytes-vs-float.js';

let floats: TestApp | undefined;
let bytes: TestApp | undefined;
before(async () => {
  if (cocoSkip) return;
  floats = await startTestApp();
  bytes = await startTestApp({ SIGHTFLOW_INFERENCE_UINT8_INPUT: 'on' });
});
after(async () => {
  await floats?.close();
  await bytes?.close();
});

const dataUri = (name: string) =>
  `data:image/jpeg;base64,${readFileSync(join(cocoDir(), 'images', `${name}.jpg`)).toString('base64')}`;

type ApiObject = { class: string; confidence: number; bbox: number[] };
const boxes = (objects: ApiObject[]): AnyBox[] =>
  objects.map((o) => ({ classId: o.class, score: o.confidence, box: o.bbox }));

test('a server with the bytes input answers detect as the default one does', { skip: cocoSkip }, async () => {
  const tol = BYTES_VS_FLOAT['centernet-coco'];
  assert.equal(await (await floats!.app.services.taskModels.detector()).handle.imageInput(), 'float32');
  assert.equal(await (await bytes!.app.services.taskModels.detector()).handle.imageInput(), 'uint8');
  let confident = 0;
  for (const name of ['000000000025', '000000000036', '000000000073', '000000000081']) {
    const json = { image_base64: dataUri(name), confidence_threshold: tol.threshold - tol.margin };
    const a = await api(floats!, '/v1/vision/detect', { method: 'POST', json });
    const b = await api(bytes!, '/v1/vision/detect', { method: 'POST', json });
    assert.equal(a.status, 200, a.text);
    assert.equal(b.status, 200, b.text);
    assert.equal(b.body.model, a.body.model);
    assert.equal(b.body.usage.input_tokens, a.body.usage.input_tokens);
    confident += assertTwins(boxes(a.body.objects), boxes(b.body.objects), tol, name);
  }
  assert.ok(confident >= 4, `only ${confident} confident objects`);
});
