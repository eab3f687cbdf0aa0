// A part's hold on a model's handle follows the model: once the runtime lets the handle go (its settings
// changed, its manifest replaced), the next run takes the handle registered then, or registers the model anew,
// so no part runs on a forgotten handle beside the new one. Through the real runtime and worker.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { InferenceRuntime, type ModelSpec } from '../../src/inference/runtime.js';
import type { ModelHandle } from '../../src/inference/model-handle.js';
import { LiveHandle } from '../../src/inference/live-handle.js';
import { affineModel, affineRow, collectingLog } from '../helpers/inference.js';

test('a live handle: the registered one while it lasts, a new one after the runtime let it go', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, sessions: 1, log: collectingLog() });
  t.after(() => runtime.release());
  let sessions = 1;
  const registry = { spec: (id: string): ModelSpec => ({ id, load: async () => affineModel(), sessions }) };
  const seen: ModelHandle[] = [];
  const live = new LiveHandle(runtime, registry, 'affine', (h) => seen.push(h));
  const first = live.get();
  assert.equal(first, runtime.model('affine'));
  assert.equal(live.get(), first, 'the same while it is registered');
  assert.deepEqual(Array.from((await first.run(affineRow(1))).y.data as Float32Array), [3, 5, 7, 9]);

  // Its settings change: the runtime forgets the handle; the next run registers the model with the new spec.
  sessions = 2;
  await runtime.unregister('affine');
  const second = live.get();
  assert.notEqual(second, first);
  assert.equal(second, runtime.model('affine'), 'the one registered, not a second beside it');
  assert.equal(second.maxSessions, 2);
  assert.deepEqual(Array.from((await second.run(affineRow(2))).y.data as Float32Array), [5, 7, 9, 11]);
  assert.deepEqual(seen, [first, second], 'each new handle is set up once');

  // Registered meanwhile by someone else (a request): that one is taken.
  await runtime.unregister('affine');
  const other = runtime.register(registry.spec('affine'));
  assert.equal(live.get(), other);
  assert.equal(seen.length, 3);
});

test('a model let go under load: queued and running runs finish on its sessions, new ones on the next handle, then its threads end', async (t) => {
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    sessions: 1,
    queueDepth: 64,
    log: collectingLog(),
  });
  t.after(() => runtime.release());
  const registry = { spec: (id: string): ModelSpec => ({ id, load: async () => affineModel() }) };
  const live = new LiveHandle(runtime, registry, 'affine');
  const first = live.get();
  await first.session();
  assert.equal(runtime.threads.length, 1);
  // Forty runs queued on the first handle, then the runtime lets it go while they wait.
  const queued = Array.from({ length: 40 }, (_, i) => first.run(affineRow(i)));
  const letGo = runtime.unregister('affine');
  // Meanwhile new runs take the next handle: its own sessions and worker (affine~1).
  const second = live.get();
  assert.notEqual(second, first);
  assert.equal(second.sessionName, 'affine~1');
  const fresh = await Promise.all(Array.from({ length: 5 }, (_, i) => second.run(affineRow(100 + i))));
  const old = await Promise.all(queued);
  await letGo;
  old.forEach((o, i) =>
    assert.deepEqual(Array.from(o.y.data as Float32Array), [2 * i + 1, 2 * i + 3, 2 * i + 5, 2 * i + 7], `run ${i}`),
  );
  fresh.forEach((o, i) => assert.equal((o.y.data as Float32Array)[0], 2 * (100 + i) + 1));
  assert.equal(runtime.threads.length, 1, "the first handle's worker ended once it drained");
  assert.equal(second.loadedSessions, 1);
  assert.deepEqual(Array.from((await second.run(affineRow(0))).y.data as Float32Array), [1, 3, 5, 7]);
});
