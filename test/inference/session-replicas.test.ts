// Several sessions of one model on real ONNX Runtime workers: one client uses one session (no second is
// loaded for it), concurrent runs load a second and run side by side, the queue bound counts waiting runs
// beyond the running ones, and unloading ends every session's worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/errors.js';
import { InferenceRuntime, Tensor } from '../../src/inference/runtime.js';
import { collectingLog, tinyYoloOnnx } from '../helpers/inference.js';

const bytes = tinyYoloOnnx('yolov8', [{ cx: 10, cy: 10, w: 4, h: 4, cls: 0, score: 0.9 }], 2, 32);
const feeds = () => ({ images: new Tensor('float32', new Float32Array(3 * 32 * 32).fill(1), [1, 3, 32, 32]) });

test('one client at a time runs on one session; concurrent runs load a second session and share both', async (t) => {
  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 2, sessions: 2, log });
  t.after(() => runtime.close());
  const h = runtime.register({ id: 'tiny', load: async () => bytes });
  for (let i = 0; i < 5; i++) await h.run(feeds());
  assert.equal(h.loadedSessions, 1, 'sequential runs never need a second session');
  assert.equal(runtime.threads.length, 1);
  const outs = await Promise.all(Array.from({ length: 12 }, () => h.run(feeds())));
  assert.equal(outs.length, 12);
  for (const o of outs) assert.ok(Object.keys(o).length > 0);
  // The second session was started by a run that found the first busy; it may finish loading after the runs.
  for (const end = Date.now() + 15_000; h.loadedSessions < 2 && Date.now() < end;) await new Promise((r) => setTimeout(r, 20));
  assert.equal(h.loadedSessions, 2, 'runs that waited loaded a second session');
  assert.equal(runtime.threads.length, 2, 'each session in its own worker thread');
  assert.ok(log.lines.some((l) => /session 2 loaded for concurrent runs/.test(l.msg) && (l.obj as { threads?: number }).threads === 1),
    'the second session shares the cores (2 threads / 2 sessions)');
  assert.equal(h.state().state, 'loaded');
  await h.unload();
  assert.equal(runtime.threads.length, 0, 'unloading ends both workers');
  assert.equal(h.loadedSessions, 0);
  await h.run(feeds());
  assert.equal(h.loadedSessions, 1, 'loads again on the next run');
});

test('the queue bound counts waiting runs beyond those running on every session', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, sessions: 2, log: collectingLog() });
  t.after(() => runtime.close());
  const h = runtime.register({ id: 'tiny', load: async () => bytes, queueDepth: 1 });
  const results = await Promise.allSettled([1, 2, 3, 4, 5].map(() => h.run(feeds())));
  const rejected = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason);
  assert.equal(rejected.length, 2, 'two running, one waiting, two refused');
  for (const e of rejected) assert.ok(e instanceof ApiError && e.status === 503 && e.headers['Retry-After'] === '1');
});

test('the shared worker mode keeps one session per model', () => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], sessions: 4, workers: 'shared', log: collectingLog() });
  assert.equal(runtime.sessions, 1);
  assert.equal(runtime.register({ id: 'tiny', load: async () => bytes }).maxSessions, 1);
});
