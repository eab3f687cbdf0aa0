// The runtime on real ONNX Runtime sessions: bounded queue -> 503 at once, micro-batching, lazy cached
// sessions, and a GPU provider requested on this CPU-only host falling back to CPU with a warning.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError, errors } from '../../src/base/errors.js';
import {
  availableProviders,
  chooseProviders,
  requestedProviders,
  whyUnavailable,
} from '../../src/inference/execution-providers.js';
import { ModelQueue } from '../../src/inference/model-queue.js';
import { InferenceRuntime, Tensor } from '../../src/inference/runtime.js';
import { loadConfig } from '../../src/config/index.js';
import { affineModel, affineRow, collectingLog } from '../helpers/inference.js';

const row = affineRow;

test('a full queue rejects at once with 503 overloaded_error; nothing queues without bound', async (t) => {
  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, sessions: 1, queueDepth: 1, log });
  t.after(() => runtime.release());
  const model = runtime.register({ id: 'affine', load: async () => affineModel() });
  const first = model.run(row(0)); // starts running (loads the session)
  const second = model.run(row(10)); // waits: the queue holds 1
  const started = Date.now();
  await assert.rejects(model.run(row(20)), (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 503);
    assert.equal(e.type, 'overloaded_error');
    assert.equal(e.headers['Retry-After'], '1');
    return true;
  });
  assert.ok(Date.now() - started < 2000, 'the rejection does not wait for the queue');
  const [a, b] = await Promise.all([first, second]);
  assert.deepEqual(Array.from(a.y.data as Float32Array), [1, 3, 5, 7]);
  assert.deepEqual(Array.from(b.y.data as Float32Array), [21, 23, 25, 27]);
  // Drained: accepted again.
  assert.deepEqual(Array.from((await model.run(row(1))).y.data as Float32Array), [3, 5, 7, 9]);
  assert.ok(
    log.lines.some((l) => l.level === 'info' && /model affine loaded on cpu/.test(l.msg)),
    'logs which provider runs',
  );
});

test('micro-batching: concurrent single inputs run as one batch and each gets its own rows', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log: collectingLog() });
  t.after(() => runtime.release());
  const model = runtime.register({
    id: 'affine-batched',
    load: async () => affineModel(),
    batch: { maxBatch: 4, maxWaitMs: 20 },
  });
  await model.session(); // load first so the batch forms from the runs alone
  const outs = await Promise.all([0, 1, 2, 3, 4].map((v) => model.run(row(v * 10))));
  assert.deepEqual(model.stats, { runs: 2, items: 5, padded: 0 }, 'batches of 4 + 1');
  outs.forEach((o, i) => {
    assert.deepEqual(o.y.dims, [1, 4]);
    assert.deepEqual(
      Array.from(o.y.data as Float32Array),
      [0, 1, 2, 3].map((k) => (i * 10 + k) * 2 + 1),
    );
  });
});

test('micro-batching: an item whose input cannot be made fails alone; the rest of its batch runs', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log: collectingLog() });
  t.after(() => runtime.release());
  const model = runtime.register({
    id: 'affine-batched',
    load: async () => affineModel(),
    batch: { maxBatch: 4, maxWaitMs: 20 },
  });
  await model.session();
  const bad = () => {
    throw errors.invalidParam('image', 'this image cannot be read');
  };
  const rs = await Promise.allSettled([
    model.run(row(0)),
    model.run(bad),
    model.run(async () => row(20)),
    model.run(row(30)),
  ]);
  assert.deepEqual(
    rs.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  assert.ok(
    (rs[1] as PromiseRejectedResult).reason instanceof ApiError &&
      (rs[1] as PromiseRejectedResult).reason.status === 400,
    'the failed item gets its own error',
  );
  assert.deepEqual(
    Array.from((rs[2] as PromiseFulfilledResult<Record<string, Tensor>>).value.y.data as Float32Array),
    [41, 43, 45, 47],
  );
  assert.deepEqual(model.stats, { runs: 1, items: 3, padded: 0 }, 'the three good items ran as one batch');
  // Every input failing: each caller gets its error, and no run happens.
  const all = await Promise.allSettled([model.run(bad), model.run(bad)]);
  assert.deepEqual(
    all.map((r) => r.status),
    ['rejected', 'rejected'],
  );
  assert.deepEqual(model.stats, { runs: 1, items: 3, padded: 0 });
});

test('the queue forms batches of at most maxBatch, or what arrived within maxWaitMs', async () => {
  const calls: number[][] = [];
  const q = new ModelQueue<number, number>({ name: 'probe', depth: 100, maxBatch: 3, maxWaitMs: 30 }, async (xs) => {
    calls.push(xs);
    await new Promise((r) => setTimeout(r, 5));
    return xs.map((x) => x * 10);
  });
  const res = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((x) => q.submit(x)));
  assert.deepEqual(res, [10, 20, 30, 40, 50, 60, 70]);
  assert.deepEqual(calls, [[1, 2, 3], [4, 5, 6], [7]]);
  // A lone item does not wait for ever: it runs after maxWaitMs.
  assert.equal(await q.submit(8), 80);
  // Errors reach every caller of the batch.
  const failing = new ModelQueue<number, number>({ name: 'fail', depth: 10, maxBatch: 2, maxWaitMs: 5 }, async () => {
    throw new Error('boom');
  });
  const rs = await Promise.allSettled([failing.submit(1), failing.submit(2)]);
  assert.deepEqual(
    rs.map((r) => r.status),
    ['rejected', 'rejected'],
  );
});

test('ahead: an interactive item whose input is made at its start may start one beyond the concurrency; a ready or background one waits', async () => {
  const started: string[] = [];
  const gates = new Map<string, () => void>();
  const q = new ModelQueue<string, string>(
    { name: 'ahead', depth: 10, concurrency: 1, ahead: 1, deferred: (x) => x.startsWith('deferred') },
    async ([x]) => {
      started.push(x!);
      await new Promise<void>((r) => gates.set(x!, r));
      return [x!];
    },
  );
  const a = q.submit('ready-a');
  const b = q.submit('deferred-b');
  const c = q.submit('deferred-c');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['ready-a', 'deferred-b'], 'one deferred item starts beside the running one, not two');
  gates.get('ready-a')!();
  await a;
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['ready-a', 'deferred-b', 'deferred-c']);
  const d = q.submit('ready-d');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['ready-a', 'deferred-b', 'deferred-c'], 'a ready item never takes the slot ahead');
  gates.get('deferred-b')!();
  gates.get('deferred-c')!();
  await Promise.all([b, c]);
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['ready-a', 'deferred-b', 'deferred-c', 'ready-d']);
  gates.get('ready-d')!();
  assert.equal(await d, 'ready-d');
  // A background (camera) item never starts ahead: an image request arriving meanwhile would wait behind it.
  started.length = 0;
  const e = q.submit('ready-e');
  const f = q.submit('deferred-f', undefined, 'background');
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['ready-e']);
  gates.get('ready-e')!();
  await e;
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(started, ['ready-e', 'deferred-f']);
  gates.get('deferred-f')!();
  assert.equal(await f, 'deferred-f');
});

test('a GPU provider requested on a host without one falls back to CPU with a warning', async (t) => {
  // Meant for CPU-only hosts (no NVIDIA driver, onnxruntime-node installed without its CUDA libraries).
  if (availableProviders().length > 1) return t.skip('this host can run a GPU provider');
  const log = collectingLog();
  const runtime = new InferenceRuntime({ providers: requestedProviders('tensorrt,cuda,cpu'), intraOpThreads: 1, log });
  t.after(() => runtime.release());
  assert.deepEqual(runtime.providers, ['cpu']);
  const warnings = log.lines.filter((l) => l.level === 'warn').map((l) => l.msg);
  assert.ok(
    warnings.some((m) => /tensorrt requested but not available.*falling back to cpu/.test(m)),
    warnings.join('\n'),
  );
  assert.ok(
    warnings.some((m) => /cuda requested but not available.*falling back to cpu/.test(m)),
    warnings.join('\n'),
  );
  // The warning says what the host lacks: the driver, or the provider's library and how to install it.
  const why = whyUnavailable('cuda');
  assert.ok(
    why === 'no NVIDIA driver' ||
      /libonnxruntime_providers_cuda\.so is not installed beside onnxruntime-node \(ONNXRUNTIME_NODE_INSTALL=cuda12 npm rebuild onnxruntime-node\)/.test(
        why,
      ),
    why,
  );
  assert.ok(
    warnings.some((m) => m.includes(`cuda requested but not available on this host (${why})`)),
    warnings.join('\n'),
  );
  assert.ok(log.lines.some((l) => l.level === 'info' && /inference runs on cpu/.test(l.msg)));
  const model = runtime.register({ id: 'affine', load: async () => affineModel() });
  assert.deepEqual(Array.from((await model.run(row(0))).y.data as Float32Array), [1, 3, 5, 7]);
});

test('a provider the host claims but cannot start falls back to CPU at session creation, with a warning', async (t) => {
  const log = collectingLog();
  // Pretend the probe found CUDA: creating the session on it fails here, and the runtime must recover.
  const runtime = new InferenceRuntime({
    providers: ['cuda', 'cpu'],
    available: ['cuda', 'cpu'],
    intraOpThreads: 1,
    log,
  });
  t.after(() => runtime.release());
  assert.deepEqual(runtime.providers, ['cuda', 'cpu']);
  const model = runtime.register({ id: 'affine', load: async () => affineModel() });
  const out = await model.run(row(0));
  assert.deepEqual(Array.from(out.y.data as Float32Array), [1, 3, 5, 7]);
  const { providers } = await model.session();
  assert.deepEqual(providers, ['cpu']);
  assert.ok(
    log.lines.some((l) => l.level === 'warn' && /could not start on cuda, cpu; falling back to cpu/.test(l.msg)),
    log.lines.map((l) => l.msg).join('\n'),
  );
});

test('providers and threads from the environment', () => {
  assert.deepEqual(requestedProviders(undefined), ['cpu']);
  assert.deepEqual(requestedProviders(' TensorRT, cuda ,cpu'), ['tensorrt', 'cuda', 'cpu']);
  const log = collectingLog();
  assert.deepEqual(chooseProviders(['rocm', 'cuda', 'cpu'], ['cuda', 'cpu'], log), ['cuda', 'cpu']);
  assert.match(log.lines[0].msg, /unknown execution provider "rocm"/);
  const o = loadConfig({ SIGHTFLOW_EXECUTION_PROVIDERS: 'cuda,cpu', SIGHTFLOW_INTRA_OP_THREADS: '3' }).inference;
  assert.deepEqual(o.providers, ['cuda', 'cpu']);
  assert.equal(o.intraOpThreads, 3);
  assert.equal(loadConfig({}).inference.intraOpThreads, undefined);
  assert.deepEqual(loadConfig({}).inference.providers, ['cpu']);
});

test("bytes that are not an ONNX model are refused in the session's own words, not by the inputs' check", async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log: collectingLog() });
  t.after(() => runtime.release());
  const h = runtime.register({
    id: 'junk',
    load: async () => Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0x0f, 1, 2, 3]),
  });
  await assert.rejects(
    h.session(),
    (e: Error) => /protobuf parsing failed/i.test(e.message) && !/not a readable ONNX/.test(e.message),
  );
});
