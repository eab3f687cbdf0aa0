// Sessions run in worker threads: the main thread keeps its event loop while CenterNet runs, results equal
// an in-thread ONNX Runtime session's, a worker that dies fails only its runs in flight and comes back on
// next use, close() ends the workers, and idle workers never keep the process alive.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { performance } from 'node:perf_hooks';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';
import { ModelRegistry } from '../../src/inference/registry.js';
import { projectRoot } from '../../src/base/paths.js';
import { InferenceRuntime, Tensor } from '../../src/inference/runtime.js';
import { loadConfig } from '../../src/config/index.js';
import { Detector, modelInput } from '../../src/detection/detect.js';
import { DataType, OnnxGraphBuilder } from '../../src/inference/tfjs-import/onnx-builder.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { collectingLog, loadRgb, tempDataDir } from '../helpers/inference.js';
import { scriptArgs } from '../helpers/node-script.js';

/** The shared prepared models (as the test server uses), preparing CenterNet there if missing. */
async function centernet(t: Parameters<typeof tempDataDir>[0], runtime: InferenceRuntime) {
  const registry = await ModelRegistry.open(await tempDataDir(t), {
    modelsDir: process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models'),
  });
  await registry.prepare('centernet-coco');
  return { registry, det: await Detector.create(runtime, registry) };
}

/**
 * While fn runs: the event loop's utilisation (the share of the time the main thread ran JavaScript or native
 * callbacks rather than waiting for events) and, for the diagnostic, the largest gap between ticks of a 5 ms
 * interval timer. The utilisation is what says whether the loop was blocked: a gap also grows when a loaded
 * host does not schedule the waiting thread, which blocks nothing.
 */
async function loopDuring<T>(
  fn: () => Promise<T>,
): Promise<{ value: T; utilisation: number; maxGap: number; ticks: number }> {
  let last = performance.now();
  let maxGap = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
    ticks++;
  }, 5);
  const start = performance.eventLoopUtilization();
  try {
    const value = await fn();
    maxGap = Math.max(maxGap, performance.now() - last);
    return { value, utilisation: performance.eventLoopUtilization(start).utilization, maxGap, ticks };
  } finally {
    clearInterval(timer);
  }
}

test('the event loop keeps running while CenterNet runs, and results equal an in-thread session', {
  skip: cocoSkip,
}, async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], log: collectingLog() });
  t.after(() => runtime.close());
  const { registry, det } = await centernet(t, runtime);
  const img = await loadRgb(join(cocoDir(), 'images', '000000000025.jpg'));
  const { tensor } = await modelInput(img, det.pre);
  const feeds = { [det.pre.inputName]: tensor };
  await det.handle.run(feeds); // load first: session creation is not what this measures

  const runs = 4;
  const {
    value: outs,
    utilisation,
    maxGap,
    ticks,
  } = await loopDuring(async () => {
    const got = [];
    for (let i = 0; i < runs; i++) got.push(await det.handle.run(feeds));
    return got;
  });
  t.diagnostic(
    `over ${runs} CenterNet runs: event loop utilisation ${utilisation.toFixed(3)}, largest gap between 5 ms ticks ` +
      `${maxGap.toFixed(1)} ms (${ticks} ticks)`,
  );
  // In-thread, each run holds the loop for its whole 100-400 ms: the utilisation would be near 1.
  assert.ok(utilisation < 0.5, `event loop utilisation ${utilisation.toFixed(3)} while CenterNet ran ${runs} times`);
  assert.ok(ticks >= 5, `the timer ticked ${ticks} times`);

  const session = await ort.InferenceSession.create(await registry.onnxPath('centernet-coco'), {
    intraOpNumThreads: runtime.intraOpThreads,
  });
  t.after(() => session.release());
  const direct = await session.run(feeds);
  for (const out of outs) {
    assert.deepEqual(Object.keys(out), Object.keys(direct));
    for (const [k, ref] of Object.entries(direct)) {
      assert.equal(out[k].type, ref.type);
      assert.deepEqual(out[k].dims, ref.dims);
      const a = out[k].data as Float32Array;
      const b = ref.data as Float32Array;
      let worst = 0;
      for (let i = 0; i < b.length; i++) worst = Math.max(worst, Math.abs(a[i] - b[i]));
      assert.ok(worst <= 1e-3, `${k}: largest difference from the in-thread run ${worst}`);
    }
  }
  // The caller's feeds were copied, not moved: they can run again.
  assert.equal((tensor.data as Float32Array).length, 512 * 512 * 3);

  // The whole detector path gives the same objects as before.
  const objs = await det.detect(img);
  assert.ok(
    objs.some((o) => o.class === 'giraffe'),
    JSON.stringify(objs),
  );
});

/** y = x * 2 over [batch, 4]. */
function doubler(): Uint8Array {
  const b = new OnnxGraphBuilder();
  b.node('Mul', ['x', b.floatInit('two', [], [2])], ['y']);
  return b.encode({
    name: 'doubler',
    inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: ['batch', 4] }],
    outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: ['batch', 4] }],
  });
}

/** y = x over uint8 [3]. */
function identityU8(): Uint8Array {
  const b = new OnnxGraphBuilder();
  b.node('Identity', ['x'], ['y']);
  return b.encode({
    name: 'identity-u8',
    inputs: [{ name: 'x', elemType: DataType.UINT8, shape: [3] }],
    outputs: [{ name: 'y', elemType: DataType.UINT8, shape: [3] }],
  });
}

test('transfer: handed-over feed buffers move to the worker; views of larger buffers still work', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log: collectingLog() });
  t.after(() => runtime.close());
  const model = runtime.register({ id: 'doubler', load: async () => doubler() });
  const data = Float32Array.from([1, 2, 3, 4]);
  const out = await model.run({ x: new Tensor('float32', data, [1, 4]) }, undefined, undefined, { transfer: true });
  assert.deepEqual(Array.from(out.y.data as Float32Array), [2, 4, 6, 8]);
  assert.equal(data.length, 0, 'the buffer moved (detached here)');
  // A view into a larger buffer: only its own bytes cross, and the larger buffer stays usable.
  const big = new Float32Array(12).map((_, i) => i);
  const view = big.subarray(4, 8);
  const out2 = await model.run({ x: new Tensor('float32', view, [1, 4]) }, undefined, undefined, { transfer: true });
  assert.deepEqual(Array.from(out2.y.data as Float32Array), [8, 10, 12, 14]);
  assert.equal(big.length, 12);
  // A Buffer from Node's shared pool is copied, never moved (that would take the pool with it).
  const u8 = runtime.register({ id: 'u8-identity', load: async () => identityU8() });
  const pooled = Buffer.from([7, 8, 9]);
  assert.ok(pooled.byteLength < pooled.buffer.byteLength, 'a pooled Buffer');
  const out3 = await u8.run({ x: new Tensor('uint8', pooled, [3]) }, undefined, undefined, { transfer: true });
  assert.deepEqual(Array.from(out3.y.data as Uint8Array), [7, 8, 9]);
  assert.deepEqual([...pooled], [7, 8, 9]);
});

test("shared memory: a feed over a SharedArrayBuffer is read by the worker (which copies it) and stays the caller's", async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log: collectingLog() });
  t.after(() => runtime.close());
  const model = runtime.register({ id: 'doubler-shared', load: async () => doubler() });
  const shared = new Float32Array(new SharedArrayBuffer(16));
  for (const [k, vals] of [
    [0, [1, 2, 3, 4]],
    [1, [5, 6, 7, 8]],
    [2, [-1, 0, 0.5, 9]],
  ] as const) {
    shared.set(vals);
    const out = await model.run({ x: new Tensor('float32', shared, [1, 4]) });
    assert.deepEqual(
      Array.from(out.y.data as Float32Array),
      vals.map((v) => v * 2),
      `run ${k} read what was written before it`,
    );
    assert.equal(shared.length, 4, 'shared memory is never detached');
  }
  // Two sent together over different shared buffers: each gets its own answer.
  const a = Float32Array.from([1, 1, 1, 1]),
    b = Float32Array.from([3, 3, 3, 3]);
  const sa = new Float32Array(new SharedArrayBuffer(16)),
    sb = new Float32Array(new SharedArrayBuffer(16));
  sa.set(a);
  sb.set(b);
  const [oa, ob] = await Promise.all([
    model.run({ x: new Tensor('float32', sa, [1, 4]) }),
    model.run({ x: new Tensor('float32', sb, [1, 4]) }),
  ]);
  assert.deepEqual(Array.from(oa.y.data as Float32Array), [2, 2, 2, 2]);
  assert.deepEqual(Array.from(ob.y.data as Float32Array), [6, 6, 6, 6]);
});

test('deferred feeds are made when the run starts, after the runs before it; a dropped run never makes them', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, sessions: 1, log: collectingLog() });
  t.after(() => runtime.close());
  const model = runtime.register({ id: 'doubler-deferred', load: async () => doubler() });
  await model.session();
  const order: string[] = [];
  const feeds = (name: string, v: number) => () => {
    order.push(`make ${name}`);
    return { x: new Tensor('float32', Float32Array.from([v, v, v, v]), [1, 4]) };
  };
  const first = model.run(feeds('first', 1)).then((o) => {
    order.push('done first');
    return o;
  });
  const second = model.run(feeds('second', 2)).then((o) => {
    order.push('done second');
    return o;
  });
  const abort = new AbortController();
  const third = model.run(feeds('third', 3), undefined, { signal: abort.signal });
  const fourth = model.run(feeds('fourth', 4)).then((o) => {
    order.push('done fourth');
    return o;
  });
  abort.abort(new Error('client gone'));
  await assert.rejects(third, /client gone/);
  const outs = await Promise.all([first, second, fourth]);
  assert.deepEqual(
    outs.map((o) => (o.y.data as Float32Array)[0]),
    [2, 4, 8],
  );
  assert.ok(!order.includes('make third'), 'the dropped run made nothing');
  // One session: the second's feeds may be made while the first runs (one started ahead), the fourth's only
  // once the first is done.
  assert.ok(order.indexOf('make fourth') > order.indexOf('done first'), order.join(', '));
  assert.ok(order.indexOf('make second') < order.indexOf('done second'), order.join(', '));
});

// A thread killed inside an onnxruntime call takes the process down with it (the binding throws during
// teardown), so the crash is simulated between runs; rejection of in-flight runs is handled by the same exit path.
test('a worker that dies leaves other models alone and restarts on next use', { skip: cocoSkip }, async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], log: collectingLog() });
  t.after(() => runtime.close());
  const { det } = await centernet(t, runtime);
  const other = runtime.register({ id: 'doubler', load: async () => doubler() });
  const x = () => ({ x: new Tensor('float32', Float32Array.from([1, 2, 3, 4]), [1, 4]) });
  await other.run(x());
  const img = await loadRgb(join(cocoDir(), 'images', '000000000034.jpg'));
  const { tensor } = await modelInput(img, det.pre);
  const feeds = { [det.pre.inputName]: tensor };
  await det.handle.run(feeds);

  const worker = runtime.workerFor('centernet-coco');
  await worker.thread.terminate(); // as if it crashed: not through close()
  assert.ok(!worker.alive);
  // Another model's worker is untouched; the crashed model loads again in a fresh worker.
  assert.deepEqual(Array.from((await other.run(x())).y.data as Float32Array), [2, 4, 6, 8]);
  const again = await det.handle.run(feeds);
  assert.deepEqual(again[Object.keys(again)[0]].dims, [1, 100, 6]);
  assert.notEqual(runtime.workerFor('centernet-coco'), worker);
});

test('close() ends every worker; a later run starts a fresh one; one shared worker on request', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log: collectingLog() });
  t.after(() => runtime.close());
  const a = runtime.register({ id: 'doubler-a', load: async () => doubler() });
  const b = runtime.register({ id: 'doubler-b', load: async () => doubler() });
  const x = () => ({ x: new Tensor('float32', Float32Array.from([1, 2, 3, 4]), [1, 4]) });
  await Promise.all([a.run(x()), b.run(x())]);
  const threads = runtime.threads;
  assert.equal(threads.length, 2, 'one worker per model');
  const exits = threads.map((w) => once(w, 'exit'));
  await runtime.close();
  await Promise.all(exits);
  assert.equal(runtime.threads.length, 0);
  assert.deepEqual(Array.from((await a.run(x())).y.data as Float32Array), [2, 4, 6, 8]);
  assert.equal(runtime.threads.length, 1);

  const shared = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 1,
    workers: 'shared',
    log: collectingLog(),
  });
  t.after(() => shared.close());
  await Promise.all(['s1', 's2'].map((id) => shared.register({ id, load: async () => doubler() }).run(x())));
  assert.equal(shared.threads.length, 1, 'one worker for all models');
  assert.equal(loadConfig({ SIGHTFLOW_INFERENCE_WORKERS: 'shared' }).inference.workers, 'shared');
  assert.throws(
    () => loadConfig({ SIGHTFLOW_INFERENCE_WORKERS: 'bogus' }),
    /SIGHTFLOW_INFERENCE_WORKERS must be one of per-model, shared/,
  );
});

test('idle workers do not keep the process alive', async () => {
  const fixture = fileURLToPath(new URL('./fixtures/run-without-close.ts', import.meta.url));
  const child = execFile(process.execPath, [...scriptArgs(fixture)], { cwd: projectRoot, timeout: 60_000 });
  let out = '';
  child.stdout!.on('data', (d) => {
    out += d;
  });
  const [code, signal] = await once(child, 'exit');
  assert.equal(signal, null, 'exited on its own, not killed by the timeout');
  assert.equal(code, 0);
  assert.equal(out.trim(), '[2,3]');
});
