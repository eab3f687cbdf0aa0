// A model's life in the runtime on real ONNX Runtime sessions: load on first use or at start (preload),
// idle unload (session released, its worker thread ended, loaded again on the next run), per-model execution
// providers (cuda asked for on this CPU-only host: a warning naming the model, and the model runs on cpu),
// a per-model queue depth, and the serving state GET /v1/models/:id shows.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ApiError } from '../../src/base/errors.js';
import { InferenceRuntime, Tensor } from '../../src/inference/runtime.js';
import { availableProviders, whyUnavailable } from '../../src/inference/execution-providers.js';
import { ModelsService } from '../../src/models/models-service.js';
import { createLogger } from '../../src/base/log.js';
import { collectingLog, modelsDirWithBuiltins, tempDataDir, tinyYoloOnnx } from '../helpers/inference.js';

const bytes = tinyYoloOnnx('yolov8', [{ cx: 10, cy: 10, w: 4, h: 4, cls: 0, score: 0.9 }], 2, 32);
const feeds = () => ({ images: new Tensor('float32', new Float32Array(3 * 32 * 32).fill(1), [1, 3, 32, 32]) });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('idle unload: the session and its worker go after the idle time; the next run loads it again', async (t) => {
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    log: collectingLog(),
    idleUnloadMs: 300,
  });
  t.after(() => runtime.close());
  const h = runtime.register({ id: 'tiny', load: async () => bytes });
  assert.equal(h.state().state, 'unloaded');
  await h.run(feeds());
  await h.run(feeds());
  const loaded = h.state();
  assert.equal(loaded.state, 'loaded');
  assert.deepEqual(loaded.providers, ['cpu']);
  assert.equal(loaded.requests, 2);
  assert.ok(loaded.p50_ms !== null && loaded.p50_ms >= 0);
  assert.ok(loaded.memory_bytes !== null);
  assert.equal(loaded.idle_unload_s, 0.3);
  assert.equal(runtime.threads.length, 1);
  await sleep(200);
  await h.run(feeds()); // a run restarts the idle clock
  await sleep(200);
  assert.equal(h.state().state, 'loaded');
  await sleep(400);
  const idle = h.state();
  assert.equal(idle.state, 'unloaded');
  assert.equal(idle.unloads, 1);
  assert.equal(runtime.threads.length, 0, "the model's worker thread ended");
  await h.run(feeds());
  assert.equal(h.state().state, 'loaded');
  assert.equal(h.state().requests, 4);
  // The count moves with the state: read while the worker is still ending, an unloaded model has counted it.
  const going = h.unload();
  assert.deepEqual([h.state().state, h.state().unloads], ['unloaded', 2]);
  // A run that comes while the worker ends loads the model again in a new worker, not in the one being ended.
  const during = h.run(feeds());
  await going;
  assert.ok(Object.keys(await during).length > 0);
  assert.equal(h.state().unloads, 2);
  assert.equal(h.state().state, 'loaded');
  assert.equal(runtime.threads.length, 1);
  const after = await h.run(feeds());
  assert.ok(Object.keys(after).length > 0, 'the new worker runs it');
  assert.equal(h.state().requests, 6);
});

test("a model may keep its own idle time (0: never), overriding the runtime's", async (t) => {
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    log: collectingLog(),
    idleUnloadMs: 100,
  });
  t.after(() => runtime.close());
  const kept = runtime.register({ id: 'kept', load: async () => bytes, idleUnloadMs: 0 });
  await kept.run(feeds());
  await sleep(300);
  assert.equal(kept.state().state, 'loaded');
});

test('per-model providers: cuda asked for on a host without it warns and runs on cpu', async (t) => {
  assert.ok(!availableProviders().includes('cuda'), 'this test expects a CPU-only host');
  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log });
  t.after(() => runtime.close());
  const h = runtime.register({ id: 'wants-gpu', load: async () => bytes, providers: ['tensorrt', 'cuda', 'cpu'] });
  await h.run(feeds());
  assert.deepEqual(h.state().providers, ['cpu']);
  const warnings = log.lines.filter((l) => l.level === 'warn').map((l) => l.msg);
  assert.deepEqual(warnings, [
    `model wants-gpu: execution provider tensorrt requested but not available on this host (${whyUnavailable('tensorrt')}); falling back to cpu`,
    `model wants-gpu: execution provider cuda requested but not available on this host (${whyUnavailable('cuda')}); falling back to cpu`,
  ]);
});

test('per-model queue depth: beyond it, 503 at once', async (t) => {
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    sessions: 1,
    log: collectingLog(),
    queueDepth: 32,
  });
  t.after(() => runtime.close());
  const h = runtime.register({ id: 'narrow', load: async () => bytes, queueDepth: 1 });
  const results = await Promise.allSettled([1, 2, 3, 4].map(() => h.run(feeds())));
  const rejected = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
  assert.equal(rejected.length, 2, 'one running, one waiting, two refused');
  for (const e of rejected) assert.ok(e instanceof ApiError && e.status === 503);
  assert.equal(h.state().queue_depth, 1);
  assert.equal(h.state().errors, 2);
});

test('preload: a manifest with runtime.preload is loaded at start', async (t) => {
  const dataDir = await tempDataDir(t);
  await mkdir(join(dataDir, 'manifests'), { recursive: true });
  await writeFile(join(dataDir, 'tiny.onnx'), bytes);
  await writeFile(
    join(dataDir, 'manifests', 'tiny-preloaded.json'),
    JSON.stringify({
      id: 'tiny-preloaded',
      task: 'detect',
      format: 'onnx',
      source: { file: '../tiny.onnx' },
      runtime: { preload: true },
    }),
  );
  const service = await ModelsService.open(dataDir, await modelsDirWithBuiltins(t), createLogger('silent'), {
    providers: ['cpu'],
    intraOpThreads: 1,
  });
  t.after(() => service.close());
  await service.ready;
  assert.equal(service.runtime.model('tiny-preloaded')?.state().state, 'loaded');
  assert.equal(service.runtime.model('centernet-coco'), undefined, 'others still load on first use');
});
