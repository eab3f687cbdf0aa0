// Several sessions of one model on real ONNX Runtime workers: one client uses one session (no second is
// loaded for it), concurrent runs load narrow sessions that split the cores and run side by side, the queue
// bound counts waiting runs beyond the running ones, and unloading ends every session's worker. Then the
// lending rules themselves (SessionReplicas with loads the test resolves): a run alone takes the wide
// session, overlapping runs the narrow ones, and the wide one serves only while a narrow one is missing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/base/errors.js';
import { InferenceRuntime, Tensor } from '../../src/inference/runtime.js';
import { SessionReplicas, type Replica } from '../../src/inference/session-replicas.js';
import { collectingLog, tinyYoloOnnx } from '../helpers/inference.js';

const bytes = tinyYoloOnnx('yolov8', [{ cx: 10, cy: 10, w: 4, h: 4, cls: 0, score: 0.9 }], 2, 32);
const feeds = () => ({ images: new Tensor('float32', new Float32Array(3 * 32 * 32).fill(1), [1, 3, 32, 32]) });

test('one client at a time runs on the wide session; concurrent runs load narrow sessions that split the cores', async (t) => {
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
  // Narrow sessions are started by runs that overlap; one may finish loading after the runs. How many load
  // depends on how the runs overlapped (a tiny model's runs barely do); the rules are tested below.
  for (const end = Date.now() + 15_000; h.loadedSessions < 2 && Date.now() < end; )
    await new Promise((r) => setTimeout(r, 20));
  assert.ok(
    h.loadedSessions >= 2 && h.loadedSessions <= 3,
    `the wide session and one or two narrow ones (${h.loadedSessions})`,
  );
  assert.equal(runtime.threads.length, h.loadedSessions, 'each session in its own worker thread');
  const narrow = log.lines.filter((l) => /session [23] loaded for concurrent runs/.test(l.msg));
  assert.equal(narrow.length, h.loadedSessions - 1);
  for (const l of narrow)
    assert.equal((l.obj as { threads?: number }).threads, 1, 'a narrow session has 2 threads / 2 sessions');
  assert.equal(h.state().state, 'loaded');
  await h.unload();
  assert.equal(runtime.threads.length, 0, 'unloading ends every worker');
  assert.equal(h.loadedSessions, 0);
  await h.run(feeds());
  assert.equal(h.loadedSessions, 1, 'loads again on the next run');
});

test('sessions that cannot split the threads further are alike: no wide session', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, sessions: 2, log: collectingLog() });
  t.after(() => runtime.close());
  const h = runtime.register({ id: 'tiny', load: async () => bytes });
  for (let i = 0; i < 4; i++) await Promise.all([h.run(feeds()), h.run(feeds()), h.run(feeds())]);
  for (const end = Date.now() + 15_000; h.loadedSessions < 2 && Date.now() < end; )
    await new Promise((r) => setTimeout(r, 20));
  assert.equal(h.loadedSessions, 2);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(runtime.threads.length, 2, 'two 1-thread sessions, never a third');
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

/** A SessionReplicas whose loads the test resolves or fails by key. */
function lending(max: number, holdMs = 0) {
  type L = { worker: { alive: boolean }; key: number };
  const loads = new Map<number, { resolve: (l: L) => void; reject: (e: unknown) => void }>();
  const r = new SessionReplicas<L>(
    max,
    (key) => new Promise<L>((resolve, reject) => loads.set(key, { resolve, reject })),
    () => {},
    { wide: true, holdMs },
  );
  const load = async (key: number) => {
    const l = loads.get(key);
    assert.ok(l, `session ${key} was asked for`);
    loads.delete(key);
    l.resolve({ worker: { alive: true }, key });
    await new Promise((res) => setImmediate(res));
  };
  const fail = async (key: number) => {
    loads.get(key)!.reject(new Error('no memory'));
    loads.delete(key);
    await new Promise((res) => setImmediate(res));
  };
  /** Starts an acquire; `got` is the key once lent. */
  const run = () => {
    const x: { got: number | undefined; slot: Replica<L> | undefined } = { got: undefined, slot: undefined };
    void r.acquire().then((s) => {
      x.got = s.key;
      x.slot = s;
    });
    return x;
  };
  const tick = () => new Promise((res) => setImmediate(res));
  return { r, loads, load, fail, run, tick };
}

test('lending: a run alone takes the wide session; overlapping runs take narrow ones, the wide one waits', async () => {
  const { r, loads, load, run, tick } = lending(2);
  assert.equal(r.keys, 3, 'the wide session and two narrow ones');
  const a = run();
  await tick();
  assert.deepEqual([...loads.keys()], [0], 'a first run loads the wide session only');
  await load(0);
  assert.equal(a.got, 0);
  // b overlaps a: a narrow session loads for it, and b waits (the wide one is busy).
  const b = run();
  await tick();
  assert.deepEqual([...loads.keys()], [1]);
  assert.equal(b.got, undefined);
  // a ends before narrow 1 is loaded: b takes the wide session rather than wait for the load.
  r.release(a.slot!);
  await tick();
  assert.equal(b.got, 0);
  // c overlaps b: narrow 1 is loading, so c waits for it; it is lent on arrival.
  const c = run();
  await tick();
  assert.equal(c.got, undefined);
  await load(1);
  assert.equal(c.got, 1);
  // b ends; d overlaps c: no narrow is free, narrow 2 starts loading and the wide one serves meanwhile.
  r.release(b.slot!);
  const d = run();
  await tick();
  assert.deepEqual([...loads.keys()], [2]);
  assert.equal(d.got, 0);
  await load(2);
  // Every narrow session loaded: overlapping runs use them, and the wide one stays free though runs wait.
  r.release(d.slot!);
  const e = run();
  await tick();
  assert.equal(e.got, 2, 'a free narrow session, not the free wide one');
  const f = run();
  await tick();
  assert.equal(f.got, undefined, 'both narrow sessions busy: f waits though the wide one is free');
  r.release(c.slot!);
  await tick();
  assert.equal(f.got, 1, 'f gets the narrow session that freed up');
  r.release(e.slot!);
  r.release(f.slot!);
  // Alone again: the wide session.
  const g = run();
  await tick();
  assert.equal(g.got, 0);
  r.release(g.slot!);
});

test('lending: a narrow session that fails to load leaves the wide one serving overlapping runs', async () => {
  const { r, loads, load, fail, run, tick } = lending(2);
  const a = run();
  await tick();
  await load(0);
  const b = run();
  await tick();
  assert.equal(b.got, undefined);
  await fail(1);
  r.release(a.slot!);
  await tick();
  assert.equal(b.got, 0, 'the waiting run takes the wide session');
  const c = run();
  await tick();
  assert.equal(loads.size, 0, 'no further narrow session is tried after a failure');
  r.release(b.slot!);
  await tick();
  assert.equal(c.got, 0, 'overlapping runs share the wide session');
  r.release(c.slot!);
});

test('lending: shortly after runs overlapped, a run alone still takes a narrow session', async () => {
  const { r, load, run, tick } = lending(2, 60_000);
  const a = run();
  await tick();
  await load(0);
  assert.equal(a.got, 0, 'the first run alone takes the wide session');
  const b = run();
  await tick();
  await load(1);
  assert.equal(b.got, 1);
  r.release(a.slot!);
  r.release(b.slot!);
  const c = run();
  await tick();
  assert.equal(c.got, 1, 'within the hold time: the narrow session, not the wide one');
  r.release(c.slot!);
});
