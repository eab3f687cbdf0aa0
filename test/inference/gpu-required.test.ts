// SIGHTFLOW_GPU_REQUIRED: a GPU server that must not quietly run on the CPU. Without a GPU provider it does not
// start; a model whose session cannot start on its GPU fails its runs with 503 gpu_unavailable (and takes the
// node out of readiness) instead of loading on the CPU; a model that asks for the CPU itself still runs there.
// On this host no CUDA provider loads, so the real binding refuses every GPU session.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ApiError } from '../../src/base/errors.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { projectRoot } from '../../src/base/paths.js';
import { affineModel, affineRow, collectingLog } from '../helpers/inference.js';

test('the setting needs a GPU provider in the list', () => {
  assert.equal(loadConfig({}).inference.gpuRequired, false);
  assert.throws(
    () => loadConfig({ SIGHTFLOW_GPU_REQUIRED: 'true' }),
    (e: unknown) =>
      e instanceof ConfigError && e.variable === 'SIGHTFLOW_GPU_REQUIRED' && /names no GPU provider/.test(e.message),
  );
  const c = loadConfig({ SIGHTFLOW_GPU_REQUIRED: '1', SIGHTFLOW_EXECUTION_PROVIDERS: 'cuda,cpu' }).inference;
  assert.equal(c.gpuRequired, true);
});

test('no GPU provider on the host: the runtime is not made, and says why', () => {
  assert.throws(
    () =>
      new InferenceRuntime({ providers: ['cuda', 'cpu'], available: ['cpu'], gpuRequired: true, log: collectingLog() }),
    /SIGHTFLOW_GPU_REQUIRED is set but no GPU provider can run on this host \(cuda: no NVIDIA driver\)/,
  );
});

test('a model that cannot start on its GPU fails its runs with 503 gpu_unavailable, never loading on the CPU', async (t) => {
  const log = collectingLog();
  const runtime = new InferenceRuntime({
    providers: ['cuda', 'cpu'],
    available: ['cuda', 'cpu'],
    visibleGpus: 1,
    gpuRequired: true,
    intraOpThreads: 1,
    log,
  });
  t.after(() => runtime.release());
  const model = runtime.register({ id: 'affine', load: async () => affineModel() });
  for (let i = 0; i < 2; i++) {
    await assert.rejects(model.run(affineRow(0)), (e: unknown) => {
      assert.ok(e instanceof ApiError, String(e));
      assert.equal(e.status, 503);
      assert.equal(e.code, 'gpu_unavailable');
      assert.equal(e.headers['Retry-After'], '5');
      assert.match(
        e.message,
        /Model affine could not start on cuda \(device 0\) \(.+\), and SIGHTFLOW_GPU_REQUIRED forbids/,
      );
      return true;
    });
  }
  assert.equal(model.loadedSessions, 0, 'nothing loaded on the CPU');
  assert.deepEqual([...runtime.gpuFailures.keys()], ['affine']);
  assert.ok(!log.lines.some((l) => /falling back to cpu/.test(l.msg)));
  assert.ok(log.lines.some((l) => /forbids the CPU fallback/.test(l.msg)));

  // A model that asks for the CPU itself runs there; removing the failed one clears its failure.
  const cpu = runtime.register({ id: 'affine-cpu', load: async () => affineModel(), providers: ['cpu'] });
  assert.deepEqual(Array.from((await cpu.run(affineRow(1))).y.data as Float32Array), [3, 5, 7, 9]);
  await runtime.unregister('affine');
  assert.equal(runtime.gpuFailures.size, 0);
});

test('sightflow serve does not start on a host without a GPU when one is required', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sf-gpu-required-'));
  try {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(projectRoot, 'src', 'main.ts'), 'serve', '--port', '0', '--data-dir', dir],
      {
        env: {
          ...process.env,
          SIGHTFLOW_EXECUTION_PROVIDERS: 'cuda,cpu',
          SIGHTFLOW_GPU_REQUIRED: 'true',
          SIGHTFLOW_LOG_LEVEL: 'silent',
        },
        encoding: 'utf8',
        timeout: 60_000,
      },
    );
    assert.equal(r.status, 1, r.stderr);
    assert.match(
      r.stderr,
      /sightflow: SIGHTFLOW_GPU_REQUIRED is set but no GPU provider can run on this host \(cuda: no NVIDIA driver\)/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
