// A model's graph rewrites as one plan (src/inference/graph-steps.ts): the settings decide the steps, and the
// session worker that loads the model makes the graph the main thread would make, bytes for bytes, with each
// refusal's reason; a plan that asks nothing leaves the source unread.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  graphPlan,
  makeGraph,
  plansAnything,
  type GraphOutcome,
  type GraphPlan,
} from '../../src/inference/graph-steps.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import type { Uint8Preprocess } from '../../src/inference/uint8-input.js';
import { collectingLog, tinyYoloOnnx } from '../helpers/inference.js';

const tiny = () => tinyYoloOnnx('yolov8', [{ cx: 1, cy: 1, w: 1, h: 1, cls: 0, score: 1 }], 2, 32);
const PRE: Uint8Preprocess = { scale: 1 / 255, channelOrder: 'rgb', layout: 'nchw' };

test('the settings choose the steps: on, off, auto on a GPU provider (and the int8 rewrite on the CPU for dynamic int8)', () => {
  const base = {
    dequantize: 'auto',
    fp16: 'auto',
    uint8Input: 'auto',
    batchAxis: false,
    float16: true,
    pre: PRE,
  } as const;
  assert.deepEqual(graphPlan({ ...base, providers: ['cpu'] }), { dequantize: 'dynamic' });
  assert.deepEqual(graphPlan({ ...base, providers: ['cuda', 'cpu'], batchAxis: true }), {
    dequantize: 'any',
    batchAxis: true,
    fp16: true,
    uint8: PRE,
  });
  assert.deepEqual(graphPlan({ ...base, providers: ['cuda', 'cpu'], float16: false, pre: undefined }), {
    dequantize: 'any',
  });
  const off = { ...base, dequantize: 'off', fp16: 'off', uint8Input: 'off' } as const;
  assert.deepEqual(graphPlan({ ...off, providers: ['tensorrt', 'cuda', 'cpu'] }), {});
  assert.equal(plansAnything({}), false);
  assert.deepEqual(graphPlan({ ...off, fp16: 'on', uint8Input: 'on', providers: ['cpu'] }), { fp16: true, uint8: PRE });
});

test('the session worker makes the graph the main thread would, with the same refusals', async (t) => {
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 1, log: collectingLog() });
  t.after(() => runtime.release());
  const worker = runtime.workerFor('graphs');
  const cases: [string, Uint8Array, GraphPlan][] = [
    ['every step', tiny(), { dequantize: 'any', batchAxis: true, fp16: true, uint8: PRE }],
    ['nothing to change', tiny(), { dequantize: 'dynamic' }],
    ['not a graph', Uint8Array.of(0xff, 0xff, 0xff), { dequantize: 'any', fp16: true }],
  ];
  for (const [what, bytes, plan] of cases) {
    const here = await makeGraph(bytes, plan);
    const there = await worker.call<GraphOutcome>({ op: 'graph', source: bytes, plan }, what);
    assert.deepEqual(
      { ...there, bytes: there.bytes && Buffer.from(there.bytes) },
      { ...here, bytes: here.bytes && Buffer.from(here.bytes) },
      what,
    );
  }
  const all = await makeGraph(tiny(), cases[0]![2]);
  assert.ok(all.bytes && all.batched && all.uint8, JSON.stringify(all.refused));
  assert.equal((await makeGraph(tiny(), { dequantize: 'dynamic' })).bytes, undefined);
  const bad = await makeGraph(Uint8Array.of(0xff, 0xff, 0xff), { dequantize: 'any', fp16: true });
  assert.ok(bad.refused.dequantize && bad.refused.fp16 && !bad.bytes, JSON.stringify(bad));
});

test('a plan that asks nothing does not read the source', async () => {
  const made = await makeGraph('/nonexistent/model.onnx', {});
  assert.deepEqual(made, { refused: {}, batched: false, uint8: false });
});
