// npm run fuzz -- --seconds N [--seed S] [--db pglite|postgres|both]
// The hostile-input sweep (test/helpers/fuzz/sweep.ts) for longer than the suite's quick seed, before a
// release: a fresh server per database, the sweep for N seconds per seed, the counts by route and status
// class. A failure prints the seed and the exact request; exit status 1. PostgreSQL runs on a throwaway
// cluster (test/helpers/pg-cluster.ts).
import pg from 'pg';
import { startCluster, stopCluster } from '../test/helpers/pg-cluster.js';
import { startTestApp } from '../test/helpers/app.js';
import { formatCounts, sweep } from '../test/helpers/fuzz/sweep.js';

function arg(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

const seconds = Number(arg('seconds') ?? 60);
const seeds = (arg('seed') ?? String(Date.now() % 100_000)).split(',').map(Number);
const dbs = arg('db') === 'both' ? ['pglite', 'postgres'] : [arg('db') ?? 'pglite'];
if (!(seconds > 0) || seeds.some((s) => !Number.isInteger(s)) || dbs.some((d) => d !== 'pglite' && d !== 'postgres')) {
  process.stderr.write('usage: npm run fuzz -- --seconds N [--seed S[,S...]] [--db pglite|postgres|both]\n');
  process.exit(2);
}

let failed = false;
const cluster = dbs.includes('postgres') ? await startCluster() : null;
try {
  for (const db of dbs) {
    for (const seed of seeds) {
      let databaseUrl: string | undefined;
      if (db === 'postgres') {
        const name = `sf_fuzz_${seed}_${Date.now().toString(36)}`;
        const c = new pg.Client({ connectionString: cluster!.url });
        await c.connect();
        await c.query(`CREATE DATABASE ${name}`);
        await c.end();
        databaseUrl = cluster!.url.replace(/\/[^/]*$/, `/${name}`);
      }
      const t = await startTestApp({ SIGHTFLOW_NO_WORKER: 'true' }, { databaseUrl });
      try {
        const r = await sweep(t, { seed, seconds, maxFailures: 20 });
        process.stdout.write(`== ${db}\n${formatCounts(r)}\n`);
        if (r.failures.length) {
          failed = true;
          process.stdout.write(`${r.failures.length} failure(s):\n\n${r.failures.join('\n\n')}\n`);
        }
      } finally {
        await t.close();
      }
    }
  }
} finally {
  if (cluster) stopCluster(cluster.dir);
}
process.exit(failed ? 1 : 0);
