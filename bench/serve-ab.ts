// Two checkouts' `sightflow serve` side by side on the same detect load: this one against `--base` (another
// checkout of the project with its own node_modules, addon and data/ in place, e.g. a `git worktree` of an
// earlier commit with those linked in), each with the tiny detector of `bench fronts --model tiny` (a real
// detector's request path, next to no model time, as behind a GPU), the C clients at each level, alternating
// rounds. For changes whose effect is latency on the request path (docs/capacity.md, "Dynamic batching"). By hand:
//   node --import tsx bench/serve-ab.ts --base /tmp/old-checkout [--clients 1,4] [--rounds 3] [--seconds 5]
//     [--batch 8] [--delay-ms 2]
//   --batch / --delay-ms: SIGHTFLOW_BATCH_MAX_SIZE / SIGHTFLOW_BATCH_MAX_DELAY_MS for both (default the GPU's).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { argValue } from '../eval/lib/model-choice.js';
import { compilePeer } from './peers/compile.js';
import { writeDetectBody } from './peers/detect-body.js';
import { postClients, percentile } from './peers/post-clients-run.js';
import { start, writeTinyDetector, type Server } from './suites/fronts.js';

const args = process.argv.slice(2);
const base = argValue(args, 'base');
if (!base) throw new Error('--base: the other checkout to compare against');
const clients = (argValue(args, 'clients') ?? '1,4').split(',').map(Number);
const rounds = Number(argValue(args, 'rounds') ?? 3);
const seconds = Number(argValue(args, 'seconds') ?? 5);
const env = {
  SIGHTFLOW_BATCH_MAX_SIZE: argValue(args, 'batch') ?? '8',
  SIGHTFLOW_BATCH_MAX_DELAY_MS: argValue(args, 'delay-ms') ?? '2',
};
const other = (await import(resolve(base, 'bench/suites/fronts.ts'))) as { start: typeof start };
const peer = compilePeer('post-clients', 'clients');
if (!peer) throw new Error('the C clients (bench/peers/post-clients.c) did not build');
const work = mkdtempSync(join(tmpdir(), 'sightflow-serve-ab-'));
const servers: Server[] = [];
try {
  const tiny = await writeTinyDetector(work, [join(work, 'base'), join(work, 'this')]);
  const body = await writeDetectBody(work, undefined, tiny);
  servers.push(await other.start('base', 0, join(work, 'base'), [], env));
  servers.push(await start('this', 0, join(work, 'this'), [], env));
  for (const s of servers) await postClients(peer.exe, s, body, 4, 1500); // load and warm up
  const rows = new Map<string, string[]>();
  for (let r = 0; r < rounds; r++)
    for (const c of clients)
      for (const s of r % 2 ? [...servers].reverse() : servers) {
        const o = await postClients(peer.exe, s, body, c, seconds * 1000);
        const key = `${s.label.padEnd(4)} ${String(c).padStart(3)} client(s)`;
        rows.set(key, [
          ...(rows.get(key) ?? []),
          `p50 ${percentile(o.ms, 0.5).toFixed(2)} p99 ${percentile(o.ms, 0.99).toFixed(1)} ms ${(o.ok / (o.wall_ms / 1000)).toFixed(0)}/s`,
        ]);
      }
  console.log(
    `detect, tiny detector, batch <= ${env.SIGHTFLOW_BATCH_MAX_SIZE}, ${env.SIGHTFLOW_BATCH_MAX_DELAY_MS} ms; ${rounds} rounds of ${seconds} s:`,
  );
  for (const [k, v] of rows) console.log(`  ${k}: ${v.join(' | ')}`);
} finally {
  for (const s of servers) {
    s.child.kill('SIGTERM');
    await s.exited;
  }
  rmSync(work, { recursive: true, force: true });
}
