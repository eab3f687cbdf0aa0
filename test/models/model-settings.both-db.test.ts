// A model's serving settings changed while the server runs (PATCH /admin/v1/models/:id), for a built-in model
// whose manifest has none: its sessions load again with them at its next run (queue depth, batch delay, idle time
// and preload apply in place, the sessions kept), they outlive a restart (the
// data dir's model-settings.json), null puts one back to the server's default, and junk is a 400 that
// changes nothing; and through `sightflow models settings` on the data dir of the running server. On both
// databases; across nodes: models-cluster.both-db.test.ts.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SAMPLE_IMAGE } from '../../src/detection/model-check.js';
import { admin, api, freshDatabaseUrl, startTestApp, type TestApp } from '../helpers/app.js';
import { runCli } from '../helpers/cli.js';

const sample = readFileSync(SAMPLE_IMAGE).toString('base64');
const dataDir = mkdtempSync(join(tmpdir(), 'sf-settings-'));
let app: TestApp | undefined;
after(async () => {
  await app?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const detect = (t: TestApp) =>
  api(t, '/v1/vision/detect', { method: 'POST', json: { image_base64: sample, model: 'centernet-coco' } });
const model = async (t: TestApp) => (await api(t, '/v1/models/centernet-coco')).body;
const ocr = (t: TestApp) => api(t, '/v1/vision/ocr', { method: 'POST', json: { image_base64: sample } });

test('a built-in detector given sessions, batching and a warm-up while running; kept over a restart; reset by null', {
  timeout: 180_000,
}, async () => {
  const databaseUrl = await freshDatabaseUrl();
  app = await startTestApp({ SIGHTFLOW_INFERENCE_SESSIONS: '1' }, { dataDir, databaseUrl });
  assert.equal((await detect(app)).status, 200);
  const before = await model(app);
  assert.equal(before.settings.sessions, null);
  assert.deepEqual(before.serving.batch, { max_size: 1, max_delay_ms: 0, sizes: null }, 'the CPU defaults');
  assert.equal(before.serving.warmup, null);

  const set = await admin(app, '/admin/v1/models/centernet-coco', {
    method: 'PATCH',
    json: { sessions: 2, max_batch_size: 4, max_batch_delay_ms: 5, batch_sizes: [4, 1, 1], warmup: 'on' },
  });
  assert.equal(set.status, 200, set.text);
  assert.equal(set.body.id, 'centernet-coco');
  assert.equal(set.body.builtin, true);
  assert.deepEqual(
    { ...set.body.settings },
    {
      preload: false,
      idle_unload_s: null,
      providers: null,
      queue_depth: null,
      devices: null,
      sessions: 2,
      max_batch_size: 4,
      max_batch_delay_ms: 5,
      batch_sizes: [1, 4],
      warmup: 'on',
    },
  );
  // Its loaded session was let go; the next run loads it with the new settings.
  assert.equal(set.body.serving.state, 'unloaded');
  assert.equal((await detect(app)).status, 200);
  const after1 = await model(app);
  assert.equal(after1.serving.sessions.max, 2);
  assert.deepEqual(after1.serving.batch, { max_size: 4, max_delay_ms: 5, sizes: [1, 4] });
  assert.deepEqual(after1.serving.warmup?.batch_sizes, [4, 1], JSON.stringify(after1.serving.warmup));
  assert.ok(existsSync(join(dataDir, 'model-settings.json')));

  // Junk: a 400 naming the field, and nothing changes.
  for (const [body, field] of [
    [{ sessions: 0 }, 'sessions'],
    [{ batch_sizes: [0] }, 'batch_sizes'],
    [{ batch_sizes: 'some' }, 'batch_sizes'],
    [{ warmup: true }, 'warmup'],
    [{ nonsense: 1 }, null],
  ] as const) {
    const r = await admin(app, '/admin/v1/models/centernet-coco', { method: 'PATCH', json: body });
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.text}`);
    assert.ok(r.body.error?.message, r.text);
    if (field) assert.match(JSON.stringify(r.body.error), new RegExp(field), r.text);
  }
  const missing = await admin(app, '/admin/v1/models/no-such-model', { method: 'PATCH', json: { sessions: 2 } });
  assert.equal(missing.status, 404, missing.text);
  const anon = await api(app, '/admin/v1/models/centernet-coco', { method: 'PATCH', json: { sessions: 3 } });
  assert.equal(anon.status, 401, 'the admin token guards it, not a project key');
  assert.equal((await model(app)).settings.sessions, 2, 'unchanged');

  // A restart on the same data dir keeps them.
  await app.close();
  app = await startTestApp({ SIGHTFLOW_INFERENCE_SESSIONS: '1' }, { dataDir, databaseUrl });
  assert.equal((await model(app)).settings.max_batch_size, 4);
  assert.equal((await detect(app)).status, 200);
  assert.deepEqual((await model(app)).serving.batch, { max_size: 4, max_delay_ms: 5, sizes: [1, 4] });

  // null: back to the server's; fields left out keep theirs.
  const reset = await admin(app, '/admin/v1/models/centernet-coco', {
    method: 'PATCH',
    json: { max_batch_size: null, max_batch_delay_ms: null, batch_sizes: null, warmup: null },
  });
  assert.equal(reset.status, 200, reset.text);
  assert.equal(reset.body.settings.sessions, 2);
  assert.equal(reset.body.settings.max_batch_size, null);
  assert.equal(reset.body.settings.warmup, null);
  assert.equal((await detect(app)).status, 200);
  const after2 = await model(app);
  assert.deepEqual(after2.serving.batch, { max_size: 1, max_delay_ms: 0, sizes: null });
  assert.equal(after2.serving.warmup, null);
  assert.equal(after2.serving.sessions.max, 2);
});

test('sightflow models settings: changed on the data dir of a running server, taken within its re-read; "default" resets', {
  timeout: 180_000,
}, async () => {
  assert.ok(app, 'the server of the test before');
  const env = {
    ...(app.databaseUrl ? { DATABASE_URL: app.databaseUrl } : {}),
    SIGHTFLOW_MODELS_DIR: app.config.modelsDir,
  };
  // OCR runs first, so it holds its models when their settings change.
  assert.equal((await ocr(app)).status, 200);
  const set = await runCli(
    ['models', 'settings', 'ppocr-det', '--sessions', '3', '--batch-sizes', '8,2', '--data-dir', dataDir, '--json'],
    env,
  );
  assert.equal(set.code, 0, set.stderr);
  const shown = JSON.parse(set.stdout.trim().split('\n').at(-1)!);
  assert.equal(shown.id, 'ppocr-det');
  assert.equal(shown.settings.sessions, 3);
  assert.deepEqual(shown.settings.batch_sizes, [2, 8]);
  await within('taken by the server', 10_000, async () => {
    const m = (await admin(app!, '/admin/v1/models')).body.data.find((x: { id: string }) => x.id === 'ppocr-det');
    return m?.settings.sessions === 3 ? true : undefined;
  });

  // OCR, which holds its models from its first request, runs with the new settings: the handle it runs on is
  // the one registered now (on a forgotten one the registered model would show no sessions at all).
  assert.equal((await ocr(app)).status, 200);
  const det = (await admin(app, '/admin/v1/models')).body.data.find((x: { id: string }) => x.id === 'ppocr-det');
  assert.equal(det.serving.sessions?.max, 3, JSON.stringify(det.serving));

  const bad = await runCli(['models', 'settings', 'ppocr-det', '--warmup', 'sometimes', '--data-dir', dataDir], env);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /sightflow: .*warmup/s);
  const missing = await runCli(['models', 'settings', 'no-such', '--sessions', '2', '--data-dir', dataDir], env);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no model no-such/);

  const reset = await runCli(
    ['models', 'settings', 'ppocr-det', '--sessions', 'default', '--batch-sizes', 'default', '--data-dir', dataDir],
    env,
  );
  assert.equal(reset.code, 0, reset.stderr);
  assert.match(reset.stdout, /ppocr-det: .*sessions default.*batch_sizes default.*\(saved\)/);
  await within('reset on the server', 10_000, async () => {
    const m = (await admin(app!, '/admin/v1/models')).body.data.find((x: { id: string }) => x.id === 'ppocr-det');
    return m?.settings.sessions === null ? true : undefined;
  });
});

test('settings changed under load fail no request: runs queued on the old sessions finish there', {
  timeout: 120_000,
}, async () => {
  assert.ok(app, 'the server of the tests before');
  const t = app;
  const codes: Record<number, number> = {};
  const failures: string[] = [];
  let stop = false;
  const client = async () => {
    while (!stop) {
      const r = await detect(t);
      codes[r.status] = (codes[r.status] ?? 0) + 1;
      if (r.status !== 200) failures.push(r.text.slice(0, 200));
    }
  };
  const clients = Array.from({ length: 6 }, client);
  for (const body of [
    { sessions: 1, max_batch_size: 4 },
    { sessions: 2, max_batch_size: null },
    { sessions: 1, warmup: 'on' },
    { sessions: null, warmup: null },
  ]) {
    await new Promise((r) => setTimeout(r, 800));
    const p = await admin(t, '/admin/v1/models/centernet-coco', { method: 'PATCH', json: body });
    assert.equal(p.status, 200, p.text);
  }
  await new Promise((r) => setTimeout(r, 800));
  stop = true;
  await Promise.all(clients);
  assert.deepEqual(failures, [], JSON.stringify(codes));
  assert.ok((codes[200] ?? 0) >= 12, JSON.stringify(codes));
  const m = await model(t);
  assert.equal(m.settings.sessions, null);
  assert.equal(m.settings.max_batch_size, null);
});

test('queue depth, batch delay, idle time and preload apply in place: the loaded sessions stay; sessions load again', {
  timeout: 120_000,
}, async () => {
  assert.ok(app, 'the server of the tests before');
  const t = app;
  const patch = (json: object) => admin(t, '/admin/v1/models/centernet-coco', { method: 'PATCH', json });
  assert.equal((await patch({ max_batch_size: 4 })).status, 200);
  assert.equal((await detect(t)).status, 200);
  const loaded = (await model(t)).serving;
  assert.equal(loaded.state, 'loaded');
  assert.equal(loaded.batch.max_size, 4);

  const p = await patch({ queue_depth: 5, max_batch_delay_ms: 7, idle_unload_s: 600 });
  assert.equal(p.status, 200, p.text);
  assert.equal(p.body.serving.state, 'loaded', 'not let go');
  assert.equal(p.body.serving.loaded_at, loaded.loaded_at, 'the same sessions');
  assert.equal(p.body.serving.queue_depth, 5);
  assert.equal(p.body.serving.idle_unload_s, 600);
  assert.deepEqual(p.body.serving.batch, { ...loaded.batch, max_delay_ms: 7 });
  assert.equal((await detect(t)).status, 200);
  assert.equal((await model(t)).serving.loaded_at, loaded.loaded_at);

  // A short idle time: unloaded after it, with no run to start the count.
  assert.equal((await patch({ idle_unload_s: 1 })).body.serving.state, 'loaded');
  const unloaded = await within('idle unload', 10_000, async () => {
    const s = (await model(t)).serving;
    return s.state === 'unloaded' ? s : undefined;
  });
  assert.equal(unloaded.unloads, loaded.unloads + 1);
  // Preload turned on loads it at once (the answer comes once it has).
  const pre = await patch({ preload: true, idle_unload_s: null });
  assert.equal(pre.body.serving.state, 'loaded', pre.text);
  assert.notEqual(pre.body.serving.loaded_at, loaded.loaded_at);
  assert.equal(pre.body.serving.queue_depth, 5);

  // Sessions are not one of them: let go and, as it preloads, loaded again with two.
  const more = await patch({ sessions: 2 });
  assert.equal(more.body.serving.state, 'loaded', more.text);
  assert.notEqual(more.body.serving.loaded_at, pre.body.serving.loaded_at);
  assert.equal(more.body.serving.sessions.max, 2);

  const reset = await patch({
    preload: null,
    queue_depth: null,
    max_batch_delay_ms: null,
    sessions: null,
    max_batch_size: null,
  });
  assert.equal(reset.status, 200, reset.text);
  assert.equal(reset.body.settings.queue_depth, null);
});

test('a model loaded and unloaded on request: now, idempotent, and under load without a failed request', {
  timeout: 120_000,
}, async () => {
  assert.ok(app, 'the server of the tests before');
  const t = app;
  const call = (id: string, what: 'load' | 'unload') => admin(t, `/admin/v1/models/${id}/${what}`, { method: 'POST' });
  const off = await call('centernet-coco', 'unload');
  assert.equal(off.status, 200, off.text);
  assert.equal(off.body.serving.state, 'unloaded');
  assert.equal(off.body.id, 'centernet-coco');
  const on = await call('centernet-coco', 'load');
  assert.equal(on.status, 200, on.text);
  assert.equal(on.body.serving.state, 'loaded', 'loaded when it answers');
  assert.ok(on.body.serving.loaded_at);
  const again = await call('centernet-coco', 'load');
  assert.equal(again.body.serving.loaded_at, on.body.serving.loaded_at, 'loading a loaded model changes nothing');
  assert.equal((await detect(t)).status, 200);
  assert.equal((await model(t)).serving.requests, 1, 'the run went to the session loaded');

  assert.equal((await call('no-such-model', 'load')).status, 404);
  assert.equal((await call('no-such-model', 'unload')).status, 404);
  const anon = await api(t, '/admin/v1/models/centernet-coco/unload', { method: 'POST' });
  assert.equal(anon.status, 401, 'the admin token guards it');

  // Unloaded and loaded three times while four clients detect: every request answered 200.
  const codes: Record<number, number> = {};
  let stop = false;
  const client = async () => {
    while (!stop) {
      const r = await detect(t);
      codes[r.status] = (codes[r.status] ?? 0) + 1;
    }
  };
  const clients = Array.from({ length: 4 }, client);
  for (let i = 0; i < 3; i++) {
    await new Promise((r) => setTimeout(r, 400));
    assert.equal((await call('centernet-coco', 'unload')).status, 200);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal((await call('centernet-coco', 'load')).status, 200);
  }
  stop = true;
  await Promise.all(clients);
  assert.deepEqual(Object.keys(codes), ['200'], JSON.stringify(codes));
  assert.ok(codes[200]! >= 8, JSON.stringify(codes));
});

test('the settings file held locked by another process: 503 settings_locked after the wait, nothing changed', {
  // The same path on either database; the wait is 10 s, so once.
  skip: process.env.SIGHTFLOW_TEST_DB === 'postgres' ? "runs with PGlite (the file lock is the data dir's)" : false,
  timeout: 60_000,
}, async () => {
  assert.ok(app, 'the server of the tests before');
  const lock = join(dataDir, 'model-settings.json.lock');
  // Held by a live process: this one (the server runs in it too, but holds no lock now).
  writeFileSync(lock, `${process.pid}\n`);
  try {
    const r = await admin(app, '/admin/v1/models/centernet-coco', { method: 'PATCH', json: { queue_depth: 3 } });
    assert.equal(r.status, 503, r.text);
    assert.equal(r.body.error.code, 'settings_locked');
    assert.match(r.body.error.message, new RegExp(`model-settings\\.json\\.lock is held by process ${process.pid}`));
    assert.equal(r.headers.get('retry-after'), '5');
  } finally {
    rmSync(lock, { force: true });
  }
  assert.equal((await model(app)).settings.queue_depth, null, 'unchanged');
  const ok = await admin(app, '/admin/v1/models/centernet-coco', { method: 'PATCH', json: { queue_depth: null } });
  assert.equal(ok.status, 200, ok.text);
});

async function within<T>(what: string, ms: number, fn: () => Promise<T | undefined>): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() - t0 > ms) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
