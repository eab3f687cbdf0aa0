// Two nodes on one PostgreSQL with different data dirs and models dirs (SIGHTFLOW_TEST_DB=postgres only;
// skipped on PGlite): a model added on node A (admin API from a hub URL; the CLI with DATABASE_URL for a real
// export) is served by node B within 10 s, its file having travelled through the database (B's models dir
// never saw it), and a removal on A reaches B the same way; serving settings changed on A while running
// (PATCH /admin/v1/models/:id, built-in or added) are in force on B as well.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { SAMPLE_IMAGE } from '../../src/detection/model-check.js';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { admin, api, backend, freshDatabaseUrl, startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';
import { modelsDirWithBuiltins, tinyYoloOnnx } from '../helpers/inference.js';
import { startModelHub, type ModelHub } from '../helpers/model-hub.js';
import { BYO_MODELS, byoModelsSkip, byoPath } from '../../eval/byo-dir.js';

const YOLO11N_320_SHA256 = '5ea9b19c6c4d89041175fd2d4f9d2e1581d16f37b817021d547278fc5e2f2b58';
const skip = backend !== 'postgres' ? 'PostgreSQL only (SIGHTFLOW_TEST_DB=postgres)' : false;
const SYNC = { SIGHTFLOW_MODELS_SYNC_MS: '500' };

let a: TestApp;
let b: TestApp;
let hub: ModelHub;
let databaseUrl: string;
const sample = readFileSync(SAMPLE_IMAGE).toString('base64');
const model = Buffer.from(tinyYoloOnnx('yolov8', [{ cx: 200, cy: 300, w: 150, h: 400, cls: 0, score: 0.9 }], 80, 320));
const sha = createHash('sha256').update(model).digest('hex');

/** A models dir of its own for a node, with the prepared built-in models linked in (no conversion at start). */
const ownModelsDir = () =>
  modelsDirWithBuiltins({
    after: (fn) => {
      cleanups.push(fn);
    },
  });
const cleanups: Array<() => Promise<void>> = [];

async function within<T>(
  what: string,
  ms: number,
  fn: () => Promise<T | undefined>,
): Promise<{ value: T; ms: number }> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return { value: v, ms: Date.now() - t0 };
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

before(async () => {
  if (skip) return;
  databaseUrl = (await freshDatabaseUrl())!;
  hub = await startModelHub([{ owner: 'acme', repo: 'tiny', path: 'tiny.onnx', bytes: model }]);
  a = await startTestApp(
    { ...SYNC, SIGHTFLOW_MODELS_DIR: await ownModelsDir(), SIGHTFLOW_MODEL_HUB_URL: hub.url },
    { databaseUrl },
  );
  b = await startTestApp({ ...SYNC, SIGHTFLOW_MODELS_DIR: await ownModelsDir() }, { databaseUrl });
});

after(async () => {
  await b?.close();
  await a?.close();
  await hub?.close();
  for (const fn of cleanups) await fn();
});

test('a model added on node A through the admin API is served by node B within 10 s; removal follows', {
  skip,
  timeout: 120_000,
}, async () => {
  const added = await admin(a, '/admin/v1/models', {
    method: 'POST',
    json: {
      source: 'acme/tiny:tiny.onnx',
      id: 'tiny-cluster',
      queue_depth: 4,
      devices: [0],
      sessions: 3,
      max_batch_size: 16,
      max_batch_delay_ms: 1.5,
      batch_sizes: [8, 1],
      warmup: 'off',
    },
  });
  assert.equal(added.status, 201, added.text);
  assert.deepEqual(added.body.settings.devices, [0]);
  assert.equal(added.body.settings.sessions, 3);
  assert.equal(added.body.settings.max_batch_size, 16);
  assert.equal(added.body.settings.max_batch_delay_ms, 1.5);
  assert.deepEqual(added.body.settings.batch_sizes, [1, 8], 'kept in order, as the server reads it');
  assert.equal(added.body.settings.warmup, 'off');
  assert.equal(added.body.sha256, sha);
  assert.match(added.body.check.summary, /1 person/);
  assert.equal(added.body.settings.queue_depth, 4);

  const onB = await within('served by B', 10_000, async () => {
    const r = await api(b, '/v1/models/tiny-cluster');
    return r.status === 200 ? r.body : undefined;
  });
  assert.equal(onB.value.sha256, sha);
  assert.equal(onB.value.prepared, true);
  assert.equal(onB.value.serving.queue_depth, 4);
  assert.ok(existsSync(join(b.config.modelsDir, 'tiny-cluster', `${sha}.onnx`)), "the file is in B's own models dir");
  assert.ok(b.config.modelsDir !== a.config.modelsDir && b.dataDir !== a.dataDir);
  const det = await api(b, '/v1/vision/detect', {
    method: 'POST',
    json: { image_base64: sample, model: 'tiny-cluster', confidence_threshold: 0.25 },
  });
  assert.equal(det.status, 200, det.text);
  assert.deepEqual(
    det.body.objects.map((o: { class: string }) => o.class),
    ['person'],
  );

  // Its settings changed on A while it runs reach B; removing the model drops them on both.
  const patched = await admin(a, '/admin/v1/models/tiny-cluster', {
    method: 'PATCH',
    json: { queue_depth: 9, sessions: null },
  });
  assert.equal(patched.status, 200, patched.text);
  assert.equal(patched.body.settings.sessions, null, 'back to the server default');
  assert.equal(patched.body.settings.max_batch_size, 16, 'left out, kept');
  await within('settings on B', 10_000, async () => {
    const r = await api(b, '/v1/models/tiny-cluster');
    return r.body?.settings?.queue_depth === 9 ? true : undefined;
  });
  assert.equal((await api(b, '/v1/models/tiny-cluster')).body.settings.sessions, null);

  const gone = await admin(a, '/admin/v1/models/tiny-cluster', { method: 'DELETE' });
  assert.deepEqual(gone.body, { id: 'tiny-cluster', object: 'model', deleted: true });
  await within('removed from B', 10_000, async () =>
    (await api(b, '/v1/models/tiny-cluster')).status === 404 ? true : undefined,
  );
  assert.ok(!existsSync(join(b.config.modelsDir, 'tiny-cluster')));
  for (const node of [a, b]) {
    const file = join(node.dataDir, 'model-settings.json');
    const kept = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    assert.equal(kept['tiny-cluster'], undefined, `its settings are gone from ${node === a ? 'A' : 'B'}`);
  }
});

test("a built-in model's settings changed on node A are in force on node B within 10 s", {
  skip,
  timeout: 60_000,
}, async () => {
  const r = await admin(a, '/admin/v1/models/centernet-coco', {
    method: 'PATCH',
    json: { sessions: 3, max_batch_size: 2, warmup: 'on' },
  });
  assert.equal(r.status, 200, r.text);
  const onB = await within('settings on B', 10_000, async () => {
    const g = await api(b, '/v1/models/centernet-coco');
    return g.body?.settings?.sessions === 3 ? g.body : undefined;
  });
  assert.equal(onB.value.settings.max_batch_size, 2);
  const det = await api(b, '/v1/vision/detect', {
    method: 'POST',
    json: { image_base64: sample, model: 'centernet-coco' },
  });
  assert.equal(det.status, 200, det.text);
  const served = (await api(b, '/v1/models/centernet-coco')).body.serving;
  assert.equal(served.sessions.max, 3);
  assert.equal(served.batch.max_size, 2);
  assert.deepEqual(served.warmup?.batch_sizes, [2, 1], JSON.stringify(served.warmup));
  // A queue depth alone: B's running model takes it in place, its sessions kept.
  const depth = await admin(a, '/admin/v1/models/centernet-coco', { method: 'PATCH', json: { queue_depth: 7 } });
  assert.equal(depth.status, 200, depth.text);
  const { value: retuned } = await within('queue depth on B', 10_000, async () => {
    const g = (await api(b, '/v1/models/centernet-coco')).body;
    return g?.serving?.queue_depth === 7 ? g.serving : undefined;
  });
  assert.equal(retuned.state, 'loaded');
  assert.equal(retuned.loaded_at, served.loaded_at, 'the same sessions on B');
  // Back to the defaults everywhere.
  const reset = await admin(a, '/admin/v1/models/centernet-coco', {
    method: 'PATCH',
    json: { sessions: null, max_batch_size: null, warmup: null, queue_depth: null },
  });
  assert.equal(reset.status, 200, reset.text);
  await within('defaults on B', 10_000, async () =>
    (await api(b, '/v1/models/centernet-coco')).body?.settings?.sessions === null ? true : undefined,
  );
});

test("a real export added with the CLI on node A's data dir (DATABASE_URL set) is served by node B within 10 s", {
  skip: skip || byoModelsSkip(BYO_MODELS['yolo11n-int8-320']),
  timeout: 120_000,
}, async (t) => {
  const t0 = Date.now();
  const r = await runCli(
    ['models', 'add', byoPath(BYO_MODELS['yolo11n-int8-320']), '--id', 'yolo11n-320-cluster', '--data-dir', a.dataDir],
    { DATABASE_URL: databaseUrl, SIGHTFLOW_MODELS_DIR: a.config.modelsDir },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /stored in the shared database/);
  const added = Date.now();
  const onB = await within('served by B', 10_000, async () => {
    const g = await api(b, '/v1/models/yolo11n-320-cluster');
    return g.status === 200 ? g.body : undefined;
  });
  assert.equal(onB.value.sha256, YOLO11N_320_SHA256);
  t.diagnostic(`CLI add took ${added - t0} ms; node B served it ${onB.ms} ms later`);
  const list = await admin(b, '/admin/v1/models');
  assert.ok(list.body.data.some((m: { id: string }) => m.id === 'yolo11n-320-cluster'));
  assert.ok(readdirSync(join(b.config.modelsDir, 'yolo11n-320-cluster')).includes(`${YOLO11N_320_SHA256}.onnx`));
});
