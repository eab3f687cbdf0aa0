// What writing a batch of usage rows costs the database's client, by statement form: the VALUES list of eight
// parameters a row the ledger used to send, and the one of eight column arrays it sends now
// (src/usage/usage.sql.ts). The embedded database runs on the serving process's main thread, so for it this CPU
// is event-loop time taken from requests (docs/capacity.md, "The embedded database's cost"). Forms alternate
// round by round on one fresh database, so both see the same table sizes. Run by hand:
//   node --import tsx bench/usage-insert-cost.ts [--rows 1,10,60,375] [--rounds 3] [--statements 100]
//   DATABASE_URL=postgres://... the same against PostgreSQL (the client's CPU, this process's only).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue } from '../eval/lib/model-choice.js';
import { loadConfig } from '../src/config/index.js';
import { openMigratedDb } from '../src/migrated-db.js';
import { sql } from '../src/usage/usage.sql.js';
import { sql as benchSql } from './usage-insert-cost.sql.js';

const args = process.argv.slice(2);
const sizes = (argValue(args, 'rows') ?? '1,10,60,375').split(',').map(Number);
const rounds = Number(argValue(args, 'rounds') ?? 3);
const statements = Number(argValue(args, 'statements') ?? 100);
const dir = mkdtempSync(join(tmpdir(), 'sightflow-usage-insert-'));
const db = await openMigratedDb(loadConfig(process.env, { dataDir: dir }));
try {
  const project = `p_bench_${process.pid}`;
  await db.query(benchSql.project, [project, 'usage insert cost']);
  const row = [project, null, '/v1/vision/detect', 'tiny-detector-640', 85, 120, 0, 3];
  const forms = {
    'VALUES list': (n: number) => [benchSql.valuesList(n), Array.from({ length: n }, () => row).flat()] as const,
    'column arrays': (n: number) => [sql.insertColumns, row.map((v) => new Array(n).fill(v))] as const,
  };
  const best = new Map<string, number>();
  for (let round = 0; round < rounds; round++)
    for (const n of sizes)
      for (const [name, form] of Object.entries(forms)) {
        const [text, params] = form(n);
        for (let i = 0; i < 10; i++) await db.query(text, params as unknown[]);
        const t0 = process.cpuUsage();
        for (let i = 0; i < statements; i++) await db.query(text, params as unknown[]);
        const d = process.cpuUsage(t0);
        const ms = (d.user + d.system) / 1000 / statements;
        const key = `${n}\t${name}`;
        best.set(key, Math.min(best.get(key) ?? Infinity, ms));
        console.log(
          `round ${round + 1}  ${String(n).padStart(4)} rows  ${name.padEnd(13)}  ${ms.toFixed(3)} ms a statement`,
        );
      }
  const result = sizes.map((n) => ({
    rows: n,
    values_list_ms: +best.get(`${n}\tVALUES list`)!.toFixed(3),
    column_arrays_ms: +best.get(`${n}\tcolumn arrays`)!.toFixed(3),
  }));
  console.log(JSON.stringify({ database: db.kind, rounds, statements, result }));
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
