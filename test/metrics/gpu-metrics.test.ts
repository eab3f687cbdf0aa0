// A server on a GPU host: `sightflow serve` started with the driver's management library where the loader
// finds it (a stand-in, test/helpers/nvml-stub.c, since CI has no GPU) logs its cards once it listens and
// exports each card's readings as gauges on the metrics port, read at scrape time, in text promtool accepts.
// A host without a driver exports sightflow_gpu_devices 0 and nothing else of the cards (prometheus.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../helpers/cli.js';
import { parseExposition, scrape, sampleSum } from '../helpers/metrics-text.js';
import { buildNvmlStub } from '../helpers/nvml-stub.js';
import { prometheusMissing, promtoolCheck } from '../helpers/prometheus.js';

/** The server's JSON log lines (the key and token lines are plain text). */
function logLines(lines: string[]): Array<Record<string, any>> {
  return lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

test('serve on a host with two cards: the log names them; /metrics has each reading per card', {
  timeout: 120_000,
  skip: prometheusMissing(),
}, async () => {
  const stub = buildNvmlStub();
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-gpu-metrics-'));
  const s = await serve(['--data-dir', dataDir], {
    LD_LIBRARY_PATH: stub.dir,
    SIGHTFLOW_METRICS_PORT: '0',
    SIGHTFLOW_METRICS_HOST: '127.0.0.1',
    NVML_STUB_UTIL: '55',
  });
  try {
    const logged = await new Promise<Record<string, any>>((resolve, reject) => {
      const deadline = Date.now() + 20_000;
      const look = () => {
        const line = logLines(s.lines).find((j) => j.msg === 'NVIDIA GPUs');
        if (line) return resolve(line);
        if (Date.now() > deadline) return reject(new Error(`no 'NVIDIA GPUs' line in ${s.lines.join('\n')}`));
        setTimeout(look, 50);
      };
      look();
    });
    assert.equal(logged.driverVersion, '580.95.05');
    assert.deepEqual(logged.gpus, [
      { index: 0, name: 'Stub GPU 0', memoryTotalBytes: 80 * 2 ** 30 },
      { index: 1, name: 'Stub GPU 1', memoryTotalBytes: 80 * 2 ** 30 },
    ]);

    const metricsPort = logLines(s.lines).find((j) => j.msg === 'metrics listening')!.metricsPort;
    const { text } = await scrape(metricsPort);
    const samples = parseExposition(text);
    const card = (n: number) => ({ gpu: String(n), uuid: `GPU-00000000-0000-0000-0000-00000000000${n}` });
    assert.equal(sampleSum(samples, 'sightflow_gpu_devices'), 2);
    assert.deepEqual(
      samples.filter((x) => x.name === 'sightflow_gpu_info').map((x) => x.labels),
      [0, 1].map((n) => ({ ...card(n), name: `Stub GPU ${n}`, driver_version: '580.95.05' })),
    );
    const want: Array<[string, number, number | undefined]> = [
      ['sightflow_gpu_utilization_ratio', 0.55, 0.9],
      ['sightflow_gpu_memory_used_bytes', 2 ** 30, 2 * 2 ** 30],
      ['sightflow_gpu_memory_total_bytes', 80 * 2 ** 30, 80 * 2 ** 30],
      // Card 1 has no decoder or power reading: no series for it, not a 0.
      ['sightflow_gpu_decoder_utilization_ratio', 0.12, undefined],
      ['sightflow_gpu_power_watts', 123.456, undefined],
      ['sightflow_gpu_temperature_celsius', 41, 42],
    ];
    for (const [name, zero, one] of want) {
      const series = samples.filter((x) => x.name === name);
      assert.deepEqual(
        series.map((x) => [x.labels, x.value]),
        [[card(0), zero], ...(one === undefined ? [] : [[card(1), one]])],
        name,
      );
    }
    assert.deepEqual(promtoolCheck(text), { status: 0, output: '' });
  } finally {
    s.child.kill('SIGTERM');
    await s.exited;
    rmSync(dataDir, { recursive: true, force: true });
    stub.remove();
  }
});
