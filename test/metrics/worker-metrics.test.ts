// A `sightflow worker` serves no API, yet is scraped like a node: with SIGHTFLOW_METRICS_PORT it answers
// GET /metrics on its own port (its worker's gauges included), refuses other paths and methods, and the
// port closes with a clean shutdown. On a GPU host (a stand-in for the driver's library here) it logs the cards and
// exports their gauges as `serve` does.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { MAIN, NODE_ARGS } from '../helpers/cli.js';
import { parseExposition, sampleSum } from '../helpers/metrics-text.js';
import { buildNvmlStub } from '../helpers/nvml-stub.js';

test('sightflow worker: GET /metrics on the metrics port, 404 and 405 otherwise, closed on SIGTERM', {
  timeout: 120_000,
}, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-worker-metrics-'));
  const nvml = buildNvmlStub();
  const child = spawn(process.execPath, [...NODE_ARGS, MAIN, 'worker', '--data-dir', dataDir], {
    env: {
      ...process.env,
      SIGHTFLOW_LOG_LEVEL: 'info',
      SIGHTFLOW_METRICS_PORT: '0',
      SIGHTFLOW_METRICS_HOST: '127.0.0.1',
      LD_LIBRARY_PATH: nvml.dir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
  let gpusLogged: (gpus: unknown) => void;
  const gpus = new Promise((r) => {
    gpusLogged = r;
  });
  try {
    const port = await new Promise<number>((resolve, reject) => {
      let metricsPort = 0;
      createInterface({ input: child.stdout! }).on('line', (line) => {
        let j: { msg?: string; metricsPort?: number; gpus?: unknown };
        try {
          j = JSON.parse(line);
        } catch {
          return;
        }
        if (j.msg === 'metrics listening') metricsPort = j.metricsPort!;
        if (j.msg === 'NVIDIA GPUs') gpusLogged(j.gpus);
        if (j.msg === 'sightflow worker running') resolve(metricsPort);
      });
      void exited.then((code) => reject(new Error(`worker exited with ${code}: ${stderr}`)));
    });
    assert.ok(port > 0);
    const base = `http://127.0.0.1:${port}`;
    const r = await fetch(`${base}/metrics`);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type')!, /^text\/plain; version=0\.0\.4/);
    const samples = parseExposition(await r.text());
    assert.equal(sampleSum(samples, 'sightflow_video_tasks_running'), 0);
    assert.equal(sampleSum(samples, 'sightflow_video_tasks', { status: 'pending' }), 0);
    assert.ok(sampleSum(samples, 'sightflow_process_resident_memory_bytes') > 0);
    assert.equal(sampleSum(samples, 'sightflow_gpu_devices'), 2);
    assert.equal(sampleSum(samples, 'sightflow_gpu_utilization_ratio', { gpu: '1' }), 0.9);
    assert.deepEqual(
      ((await gpus) as Array<{ name: string }>).map((g) => g.name),
      ['Stub GPU 0', 'Stub GPU 1'],
    );
    assert.equal((await fetch(`${base}/v1/project`)).status, 404);
    assert.equal((await fetch(`${base}/metrics`, { method: 'POST' })).status, 405);
    const head = await fetch(`${base}/metrics`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    child.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    await assert.rejects(fetch(`${base}/metrics`), 'the port is closed');
  } finally {
    child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
    nvml.remove();
  }
});
