// Real exports (yolov8n int8 at 640, yolo11n int8 at 320, a one-class face model, found through
// eval/byo-dir.ts; skipped without them) added with the real CLI while `sightflow serve` runs on
// the same data dir: each is checked on the sample image (people found), and the running server serves it
// within a few seconds without a restart; `models remove` takes it away again. The YOLOv8 export made float16
// (test/helpers/half-export.ts) is added and served the same way.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli, serve } from '../helpers/cli.js';
import { BYO_MODELS, byoModelsSkip, byoPath, type ByoModelId } from '../../eval/byo-dir.js';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { halfExport } from '../helpers/half-export.js';
import { modelsDirWithBuiltins } from '../helpers/inference.js';
import { SAMPLE_IMAGE } from '../../src/detection/model-check.js';

const sample = readFileSync(SAMPLE_IMAGE).toString('base64');
const skip = byoModelsSkip(BYO_MODELS['yolov8n-int8'], BYO_MODELS['yolo11n-int8-320'], BYO_MODELS['yolo11n-face-int8']);
const byoModelPath = (id: ByoModelId) => byoPath(BYO_MODELS[id]);
// Their sha256, from the exports' README.
const SHA256 = {
  'yolov8n-int8': '8c6f0ca55e9b86c15fd6788a9edb78da087881df55cb225a64842284b84e250c',
  'yolo11n-int8-320': '5ea9b19c6c4d89041175fd2d4f9d2e1581d16f37b817021d547278fc5e2f2b58',
} as const;

async function until<T>(what: string, ms: number, fn: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('sightflow models add: real YOLO exports, added while a server runs, served without a restart', {
  skip,
  timeout: 240_000,
}, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'sightflow-byo-'));
  const modelsDir = await modelsDirWithBuiltins(t);
  const ids = ['yolov8n-int8', 'yolo11n-int8-320'];
  t.after(() => rm(dir, { recursive: true, force: true }));
  const env = { SIGHTFLOW_MODELS_DIR: modelsDir, SIGHTFLOW_MODELS_SYNC_MS: '250', SIGHTFLOW_ADMIN_TOKEN: 'byo-admin' };
  const server = await serve(['--data-dir', dir], env);
  t.after(async () => {
    server.child.kill('SIGTERM');
    await server.exited;
  });
  const key = /API key (\S+)/.exec(server.lines.join('\n'))?.[1];
  assert.ok(key, 'bootstrap key printed');
  const get = async (id: string) => {
    const res = await fetch(`http://127.0.0.1:${server.port}/v1/models/${id}`, {
      headers: { authorization: `Bearer ${key}` },
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  for (const [name, id, size] of [
    ['yolov8n-int8', ids[0], 640],
    ['yolo11n-int8-320', ids[1], 320],
  ] as const) {
    assert.equal((await get(id)).status, 404);
    const r = await runCli(['models', 'add', byoModelPath(name), '--id', id, '--data-dir', dir, '--json'], env);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').at(-1)!);
    assert.equal(out.sha256, SHA256[name]);
    // The astronaut photo: a person, found by both exports.
    assert.ok(
      out.check.objects.some((o: { class: string; confidence: number }) => o.class === 'person' && o.confidence > 0.5),
      JSON.stringify(out.check),
    );
    t.diagnostic(`${name}: ${out.check.summary}`);
    const served = await until(`${id} served`, 5000, async () => {
      const g = await get(id);
      return g.status === 200 ? g.body : undefined;
    });
    assert.equal(served.sha256, SHA256[name]);
    assert.equal(served.prepared, true);
    assert.equal(served.task, 'detect');
    assert.equal(served.serving.state, 'unloaded');
    assert.equal(served.serving.devices, null);
    assert.equal(served.origin, byoModelPath(name));
    assert.equal(served.source, 'bring-your-own');
    assert.deepEqual(served.input_size, [size, size]);
    // Served: a detect request naming it finds the astronaut.
    const det: Response = await fetch(`http://127.0.0.1:${server.port}/v1/vision/detect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ image_base64: sample, model: id }),
    });
    assert.equal(det.status, 200);
    assert.ok(((await det.json()) as { objects: { class: string }[] }).objects.some((o) => o.class === 'person'));
    const used = (await get(id)).body.serving;
    assert.equal(used.state, 'loaded');
    assert.equal(used.requests, 1);
    assert.ok(used.p50_ms > 0);
  }

  // The same YOLOv8 as a float16 export (inputs and outputs float16, as `export half=True` makes it for a GPU):
  // before, its check failed on the input's type.
  const halfFile = join(dir, 'yolov8n-half.onnx');
  writeFileSync(halfFile, halfExport(readFileSync(byoModelPath('yolov8n-int8'))));
  const half = await runCli(['models', 'add', halfFile, '--id', 'yolov8n-half', '--data-dir', dir, '--json'], env);
  assert.equal(half.code, 0, half.stderr);
  const halfOut = JSON.parse(half.stdout.trim().split('\n').at(-1)!);
  assert.ok(
    halfOut.check.objects.some(
      (o: { class: string; confidence: number }) => o.class === 'person' && o.confidence > 0.5,
    ),
    JSON.stringify(halfOut.check),
  );
  await until('yolov8n-half served', 5000, async () => ((await get('yolov8n-half')).status === 200 ? true : undefined));
  const halfDet: Response = await fetch(`http://127.0.0.1:${server.port}/v1/vision/detect`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ image_base64: sample, model: 'yolov8n-half' }),
  });
  assert.equal(halfDet.status, 200);
  assert.ok(((await halfDet.json()) as { objects: { class: string }[] }).objects.some((o) => o.class === 'person'));

  // A one-class export with its own labels and serving settings: preloaded by the server on sight, on cpu after
  // an honest warning about cuda (this host has no GPU).
  const face = await runCli(
    [
      'models',
      'add',
      byoModelPath('yolo11n-face-int8'),
      '--id',
      'faces',
      '--labels',
      'face',
      '--preload',
      '--idle-unload-s',
      '600',
      '--providers',
      'cuda,cpu',
      '--queue-depth',
      '4',
      '--devices',
      '1,0,1',
      '--sessions',
      '2',
      '--max-batch',
      '4',
      '--max-batch-delay-ms',
      '3',
      '--batch-sizes',
      '4,1',
      '--warmup',
      'on',
      '--data-dir',
      dir,
    ],
    env,
  );
  assert.equal(face.code, 0, face.stderr);
  assert.match(
    face.stderr,
    /warning: model faces: execution provider cuda requested but not available on this host \(.+\); falling back to cpu/,
  );
  const loaded = await until('faces preloaded', 10_000, async () => {
    const g = await get('faces');
    return g.status === 200 && g.body.serving.state === 'loaded' ? g.body : undefined;
  });
  assert.deepEqual(loaded.settings, {
    preload: true,
    idle_unload_s: 600,
    providers: ['cuda', 'cpu'],
    queue_depth: 4,
    devices: [1, 0],
    sessions: 2,
    max_batch_size: 4,
    max_batch_delay_ms: 3,
    batch_sizes: [1, 4],
    warmup: 'on',
  });
  // Its own sessions and batching in force: the export's graph took a batch axis, so up to 4 images a call.
  assert.equal(loaded.serving.sessions.max, 2);
  assert.ok(loaded.serving.sessions.loaded >= 1);
  assert.deepEqual(loaded.serving.batch, { max_size: 4, max_delay_ms: 3, sizes: [1, 4] });
  // Its session ran both sizes on blank images as it loaded, the largest first.
  assert.deepEqual(loaded.serving.warmup.batch_sizes, [4, 1], JSON.stringify(loaded.serving.warmup));
  assert.equal(loaded.serving.warmup.ms.length, 2);
  assert.deepEqual(loaded.serving.providers, ['cpu']);
  assert.equal(loaded.serving.devices, null, 'asked for cuda, fell back to the CPU: no device');
  assert.equal(loaded.serving.queue_depth, 4);
  assert.equal(loaded.serving.idle_unload_s, 600);
  assert.equal(loaded.labels_count, 1);
  // At least the weights, however the process's other memory moved while it loaded.
  assert.ok(
    loaded.serving.memory_bytes >= statSync(byoModelPath('yolo11n-face-int8')).size,
    String(loaded.serving.memory_bytes),
  );
  t.diagnostic(
    `faces preloaded: ${Math.round(loaded.serving.memory_bytes / 1048576)} MB (RSS growth while loading, at least the weights)`,
  );

  const rmr = await runCli(['models', 'remove', ids[0], '--data-dir', dir], env);
  assert.equal(rmr.code, 0, rmr.stderr);
  await until(`${ids[0]} gone`, 5000, async () => ((await get(ids[0])).status === 404 ? true : undefined));
  assert.equal((await get(ids[1])).status, 200);
});
