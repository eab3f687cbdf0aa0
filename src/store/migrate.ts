import type { Db } from './db.js';
import { migrations, sql } from './migrations.sql.js';

/** Applies every pending migration; returns the versions applied now. Safe to run from several nodes at once. */
export async function migrate(db: Db): Promise<number[]> {
  return db.tx(async (q) => {
    await q.query(sql.lock);
    await q.query(sql.createTable);
    const done = new Set((await q.query<{ version: number }>(sql.applied)).map((r) => Number(r.version)));
    const applied: number[] = [];
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await q.exec(m.sql);
      await q.query(sql.record, [m.version, m.name]);
      applied.push(m.version);
    }
    return applied;
  });
}
