// `npm run bench -- http`: authenticated GET of a trivial protected route (/v1/project), sightflow vs the
// same route and key check on Fastify, each in its own process, autocannon with 50 connections on loopback.
import autocannon from 'autocannon';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { SuiteOptions } from '../../scripts/suite-runner.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Server { child: ChildProcess; port: number; key: string }

/** Starts a child and reads `port N` / the key from its stdout (JSON log lines or plain lines). */
function start(args: string[], env: Record<string, string>): Promise<Server> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    let port = 0;
    let key = '';
    createInterface({ input: child.stdout! }).on('line', (line) => {
      key ||= /sk_sf_[A-Za-z0-9_-]{43}/.exec(line)?.[0] ?? '';
      const m = /^port (\d+)$/.exec(line) ?? /"port":(\d+)/.exec(line);
      if (m) port = Number(m[1]);
      if (port && key) resolve({ child, port, key });
    });
    child.on('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

async function load(port: number, key: string, seconds: number): Promise<{ rps: number; p99_ms: number; errors: number }> {
  const url = `http://127.0.0.1:${port}/v1/project`;
  // Warm up (JIT, key cache), then measure.
  await autocannon({ url, connections: 50, duration: 1, headers: { authorization: `Bearer ${key}` } });
  const r = await autocannon({ url, connections: 50, duration: seconds, headers: { authorization: `Bearer ${key}` } });
  return { rps: Math.round(r.requests.average), p99_ms: r.latency.p99, errors: r.errors + r.non2xx };
}

export async function run(opts: SuiteOptions): Promise<void> {
  const seconds = opts.quick ? 2 : 10;
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-bench-http-'));
  const ours = await start(['src/main.ts', 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], { SIGHTFLOW_LOG_LEVEL: 'info' });
  // Request logs would cost both sides the same; the comparison is of the HTTP + auth stacks.
  let sightflow;
  try {
    sightflow = await load(ours.port, ours.key, seconds);
  } finally { ours.child.kill(); rmSync(dataDir, { recursive: true, force: true }); }
  const peerServer = await start(['bench/peers/fastify-http.ts'], {});
  let peer;
  try {
    peer = await load(peerServer.port, peerServer.key, seconds);
  } finally { peerServer.child.kill(); }
  const ratio = Math.round((sightflow.rps / peer.rps) * 100) / 100;
  console.log(`http: sightflow ${sightflow.rps} req/s (p99 ${sightflow.p99_ms} ms, ${sightflow.errors} errors) | fastify ${peer.rps} req/s (p99 ${peer.p99_ms} ms, ${peer.errors} errors) | ratio ${ratio}x (goal >= 2x)`);
  if (sightflow.errors || peer.errors) console.log('warning: some requests failed; the numbers are not comparable');
  if (opts.json) {
    console.log(JSON.stringify({ suite: 'http', sightflow: { rps: sightflow.rps, p99_ms: sightflow.p99_ms }, peer: { name: 'fastify', rps: peer.rps, p99_ms: peer.p99_ms }, ratio }));
  }
}
