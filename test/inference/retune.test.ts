// Settings a running model takes in place (ModelHandle.retune): its loaded session stays, the queue takes the
// new depth at once, the next batch the new delay, the idle timer the new time, and on a GPU provider the
// number of sessions. Through the real runtime and worker (a GPU provider asked of the real binding, which
// falls back to the CPU here); the handle decides, from the spec the registry makes of the settings.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InferenceRuntime, type ModelSpec } from '../../src/inference/runtime.js';
import { affineModel, affineRow, collectingLog } from '../helpers/inference.js';

const spec = (extra: Partial<ModelSpec> = {}): ModelSpec => ({
  id: 'affine',
  load: async () => affineModel(),
  dynamicBatch: true,
  ...extra,
});

test('a running model retuned keeps its session; the queue takes the new depth, the next batch the new delay', async (t) => {
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    sessions: 1,
    queueDepth: 64,
    batch: { maxBatch: 4, maxWaitMs: 0 },
    batchSizes: 'all',
    log: collectingLog(),
  });
  t.after(() => runtime.release());
  const model = runtime.register(spec());
  await model.session();
  const loadedAt = model.state().loaded_at;
  assert.deepEqual(model.state().batch, { max_size: 4, max_delay_ms: 0, sizes: null });

  // Depth 2: of twelve runs at once the first two wait (the first for company), the rest are refused at once.
  model.retune(spec({ queueDepth: 2, batchLimits: { maxWaitMs: 1000 } }));
  assert.equal(model.state().queue_depth, 2);
  assert.equal(model.state().batch?.max_delay_ms, 1000);
  assert.equal(model.state().loaded_at, loadedAt, 'the same session');
  assert.equal(model.state().state, 'loaded');
  const settled = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => model.run(affineRow(i))));
  const refused = settled.filter((s) => s.status === 'rejected');
  assert.equal(refused.length, 10, 'two wait (the first for company), the other ten are refused at once');
  for (const r of refused)
    assert.match(
      String((r as PromiseRejectedResult).reason?.code ?? (r as PromiseRejectedResult).reason),
      /overloaded/,
    );
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') assert.equal((s.value.y.data as Float32Array)[0], 2 * i + 1, `run ${i}`);
  });

  // The delay applies from the next batch: two rows a tenth of a second apart join one call after a second (a
  // second, so that a busy machine's late timer cannot split them).
  const runs0 = model.stats.runs;
  const t0 = performance.now();
  const a = model.run(affineRow(1));
  await new Promise((r) => setTimeout(r, 100));
  const b = model.run(affineRow(2));
  await Promise.all([a, b]);
  assert.equal(model.stats.runs - runs0, 1, 'one call for both');
  assert.ok(performance.now() - t0 >= 990, 'the first waited for company');

  // Back to the runtime's: depth 64 and no delay; twelve at once all run.
  model.retune(spec());
  assert.equal(model.state().queue_depth, 64);
  assert.equal(model.state().batch?.max_delay_ms, 0);
  const all = await Promise.all(Array.from({ length: 12 }, (_, i) => model.run(affineRow(i))));
  assert.equal(all.length, 12);
  assert.equal(model.state().loaded_at, loadedAt, 'still the same session');
  assert.equal(model.state().unloads, 0);
});

test('a running model retuned to an idle time unloads after it, without another run', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, sessions: 1, log: collectingLog() });
  t.after(() => runtime.release());
  const model = runtime.register(spec());
  await model.run(affineRow(0));
  assert.equal(model.state().idle_unload_s, 0);
  model.retune(spec({ idleUnloadMs: 300 }));
  assert.equal(model.state().idle_unload_s, 0.3);
  const t0 = Date.now();
  // (The unload counts as its sessions go; its worker ends a moment later, and a run meanwhile loads it in a new one.)
  while (model.state().unloads === 0 && Date.now() - t0 < 5_000) await new Promise((r) => setTimeout(r, 50));
  assert.equal(model.state().state, 'unloaded');
  assert.equal(model.state().unloads, 1);
  assert.ok(Date.now() - t0 >= 250, 'not before its idle time');
  // Back to never: loaded again by a run, it stays.
  model.retune(spec({ idleUnloadMs: 0 }));
  await model.run(affineRow(0));
  await new Promise((r) => setTimeout(r, 600));
  assert.equal(model.state().state, 'loaded');
});

test('on a GPU provider the session count changes in place: more load as runs overlap, those past a lower one go', async (t) => {
  const runtime = new InferenceRuntime({
    providers: ['cuda', 'cpu'],
    available: ['cuda', 'cpu'],
    visibleGpus: 1,
    intraOpThreads: 1,
    sessions: 1,
    queueDepth: 256,
    log: collectingLog(),
  });
  t.after(() => runtime.release());
  const model = runtime.register(spec({ dynamicBatch: false }));
  await model.run(affineRow(0));
  const loadedAt = model.state().loaded_at;
  assert.equal(model.maxSessions, 1);
  const round = async (n: number) => {
    const outs = await Promise.all(Array.from({ length: n }, (_, i) => model.run(affineRow(i))));
    outs.forEach((o, i) => assert.equal((o.y.data as Float32Array)[0], 2 * i + 1, `run ${i}`));
  };

  assert.equal(model.retune(spec({ dynamicBatch: false, sessions: 3 })), true);
  assert.equal(model.maxSessions, 3);
  assert.equal(model.state().loaded_at, loadedAt, 'the first session kept');
  // Runs that overlap load the further ones (each in a worker thread of its own, started as it loads).
  const t1 = Date.now();
  while (model.loadedSessions < 3 && Date.now() - t1 < 30_000) await round(30);
  assert.equal(model.loadedSessions, 3);
  assert.equal(runtime.threads.length, 3);

  // Down to one while thirty runs are under way: each answers, the two further sessions go (the busy ones
  // as their runs end) and their worker threads end.
  const running = round(30);
  assert.equal(model.retune(spec({ dynamicBatch: false, sessions: 1 })), true);
  await running;
  const t0 = Date.now();
  while (runtime.threads.length > 1 && Date.now() - t0 < 5_000) await new Promise((r) => setTimeout(r, 20));
  assert.equal(runtime.threads.length, 1);
  assert.equal(model.loadedSessions, 1);
  assert.equal(model.state().loaded_at, loadedAt);
  await round(10);
  assert.equal(model.loadedSessions, 1, 'no further session loads past the count');
  assert.equal(model.state().unloads, 0);

  // Up, down and up again while runs go on: a key let go loads again only once its worker has ended.
  const busy = round(30);
  const g = (n: number) => assert.equal(model.retune(spec({ dynamicBatch: false, sessions: n })), true);
  g(3);
  await round(12);
  g(1);
  g(3);
  await busy;
  const t2 = Date.now();
  while (model.loadedSessions < 3 && Date.now() - t2 < 30_000) await round(30);
  assert.equal(model.loadedSessions, 3);
  assert.equal(runtime.threads.length, 3);
});

test('what a running model cannot take in place: the count on the CPU, a batch size, its providers', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 2, sessions: 1, log: collectingLog() });
  t.after(() => runtime.release());
  const model = runtime.register(spec());
  await model.run(affineRow(0));
  assert.equal(model.retune(spec({ sessions: 2 })), false, 'on the CPU the threads of each session depend on it');
  assert.equal(model.retune(spec({ batchLimits: { maxBatch: 2 } })), false);
  assert.equal(model.retune(spec({ providers: ['cpu'] })), false);
  assert.equal(model.retune(spec({ warmup: 'on' })), false);
  assert.equal(model.maxSessions, 1, 'nothing changed');
  assert.equal(model.retune(spec({ queueDepth: 3 })), true);
  assert.equal(model.state().queue_depth, 3);
});

test('which changes a running model takes in place', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, sessions: 1, log: collectingLog() });
  t.after(() => runtime.release());
  const base: Partial<ModelSpec> = { devices: [0], idleUnloadMs: 60_000, batchLimits: { maxBatch: 4 } };
  const model = runtime.register(spec(base));
  await model.run(affineRow(0));
  const loadedAt = model.state().loaded_at;
  // Each from the base and back: in place or not, as the settings each case changes.
  const takes = (extra: Partial<ModelSpec>) => {
    const took = model.retune(spec({ ...base, ...extra }));
    assert.equal(model.retune(spec(base)), true, 'back to the base');
    return took;
  };
  assert.equal(takes({}), true, 'no change');
  assert.equal(takes({ queueDepth: 4 }), true);
  assert.equal(takes({ queueDepth: 4, batchLimits: { maxBatch: 4, maxWaitMs: 3 } }), true);
  assert.equal(takes({ idleUnloadMs: 1_000 }), true);
  assert.equal(takes({ queueDepth: 4, batchLimits: { maxBatch: 8 } }), false, 'a batch size with it');
  assert.equal(takes({ warmup: 'on' }), false);
  assert.equal(takes({ batchSizes: [1, 4] }), false);
  assert.equal(takes({ devices: [1], queueDepth: 1 }), false, 'other cards');
  assert.equal(takes({ providers: ['cpu'] }), false);
  assert.equal(model.state().loaded_at, loadedAt, 'the same session all along');
});
