// A real Prometheus (Debian's `prometheus` package) on loopback for the metrics tests: a generated config
// that scrapes the given targets every second, its database in a temporary directory, and the HTTP API's
// instant queries. `promtool check metrics` is the linter Prometheus ships for exposition text.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stablePort } from './ports.js';

export interface Prometheus {
  url: string;
  /** An instant PromQL query: each series' labels and value. */
  query(promql: string): Promise<Array<{ metric: Record<string, string>; value: number }>>;
  /** The single value of a query, or null when it has no series. */
  scalar(promql: string): Promise<number | null>;
  /** Polls a query until its single value equals `want` (it lags the traffic by a scrape); the last value. */
  settle(promql: string, want: number, timeoutMs?: number): Promise<number | null>;
  close(): Promise<void>;
}

export function prometheusMissing(): string | false {
  return spawnSync('prometheus', ['--version']).status === 0
    ? false
    : 'the prometheus package is not installed (scripts/system-packages.txt)';
}

export async function startPrometheus(targets: string[]): Promise<Prometheus> {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-prom-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(
    config,
    [
      'global:',
      '  scrape_interval: 1s',
      '  scrape_timeout: 900ms',
      'scrape_configs:',
      '  - job_name: sightflow',
      '    static_configs:',
      `      - targets: [${targets.map((t) => JSON.stringify(t)).join(', ')}]`,
      '',
    ].join('\n'),
  );
  const port = await stablePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    'prometheus',
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      '--log.level=warn',
      '--storage.tsdb.retention.time=1h',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => {
    stderr = (stderr + b.toString()).slice(-4000);
  });
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exited) throw new Error(`prometheus exited: ${stderr}`);
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error(`prometheus did not become ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const query = async (promql: string) => {
    const r = await fetch(`${url}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await r.json()) as {
      status: string;
      error?: string;
      data: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    };
    if (body.status !== 'success') throw new Error(`query ${promql}: ${body.error}`);
    return body.data.result.map((x) => ({ metric: x.metric, value: Number(x.value[1]) }));
  };
  const scalar = async (promql: string) => {
    const rows = await query(promql);
    if (rows.length > 1) throw new Error(`query ${promql} has ${rows.length} series: ${JSON.stringify(rows)}`);
    return rows[0]?.value ?? null;
  };
  return {
    url,
    query,
    scalar,
    async settle(promql, want, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const v = await scalar(promql);
        if (v === want || Date.now() > end) return v;
        await new Promise((r) => setTimeout(r, 250));
      }
    },
    async close() {
      if (!exited) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** promtool's lint of exposition text: its output (empty when it has nothing to say) and exit status. */
export function promtoolCheck(text: string): { status: number | null; output: string } {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}`.trim() };
}
