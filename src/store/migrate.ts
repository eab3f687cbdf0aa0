import { createHash } from 'node:crypto';
import type { Db } from './db.js';
import { sql, type Migration } from './migrations.sql.js';

/**
 * Applies every pending migration of `all` (the core list plus each part's), in version order; returns the
 * versions applied now. Safe to run from several nodes at once. Two migrations with one version are a
 * programming error, refused before anything runs.
 */
export async function migrate(db: Db, all: Migration[]): Promise<number[]> {
  const migrations = [...all].sort((a, b) => a.version - b.version);
  for (let i = 1; i < migrations.length; i++) {
    if (migrations[i]!.version === migrations[i - 1]!.version)
      throw new Error(`two migrations have version ${migrations[i]!.version}`);
  }
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

/** Names a set of migrations exactly (versions, names and SQL): the key of a migrated template (db.ts). */
export function migrationsKey(all: readonly Migration[]): string {
  const sorted = [...all].sort((a, b) => a.version - b.version).map((m) => [m.version, m.name, m.sql]);
  return `schema-${createHash('sha256').update(JSON.stringify(sorted)).digest('hex').slice(0, 16)}`;
}
