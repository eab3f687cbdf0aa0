// One small database interface over two engines: PGlite embedded in <data-dir>/db by default, PostgreSQL
// through a `pg` pool when DATABASE_URL is set. Callers write plain PostgreSQL with $n parameters; all SQL
// lives in *.sql.ts modules.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readTemplate, saveTemplate } from './pglite-template.js';

export type Row = Record<string, unknown>;

export interface Queryable {
  query<R extends Row = Row>(sql: string, params?: unknown[]): Promise<R[]>;
  /** Several statements without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: 'pglite' | 'postgres';
  /** Runs fn in one transaction on one connection; rolls back when fn throws. */
  tx<T>(fn: (q: Queryable) => Promise<T>): Promise<T>;
  ping(): Promise<boolean>;
  close(): Promise<void>;
  /** PostgreSQL's connection pool now (metrics); PGlite has none. */
  poolStats?(): { max: number; total: number; idle: number; waiting: number };
}

/** `pgliteTemplateDir`: where templates of an empty embedded cluster are kept (pglite-template.ts). */
export async function openDb(opts: { databaseUrl?: string; dataDir: string; poolSize?: number; pgliteTemplateDir?: string }): Promise<Db> {
  return opts.databaseUrl ? openPostgres(opts.databaseUrl, opts.poolSize ?? 10) : openPglite(join(opts.dataDir, 'db'), opts.pgliteTemplateDir);
}

async function openPglite(dir: string, templateDir: string | undefined): Promise<Db> {
  mkdirSync(dir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const fresh = !existsSync(join(dir, 'PG_VERSION'));
  const template = fresh && templateDir ? readTemplate(templateDir) : null;
  let pg: InstanceType<typeof PGlite> | null = null;
  if (template) {
    // A damaged template must not keep the service from starting: the directory is emptied and initdb runs.
    pg = await PGlite.create(dir, { loadDataDir: template }).catch(() => {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      return null;
    });
  }
  if (!pg) {
    pg = await PGlite.create(dir);
    // No template yet, or a damaged one: this fresh cluster becomes the template.
    if (fresh && templateDir) await saveTemplate(pg, templateDir);
  }
  const conn = pg;
  let closed = false;
  return {
    kind: 'pglite',
    async query<R extends Row>(sql: string, params: unknown[] = []) {
      return (await conn.query<R>(sql, params)).rows;
    },
    async tx<T>(fn: (q: Queryable) => Promise<T>) {
      return conn.transaction(async (t) => fn({
        query: async <R extends Row>(sql: string, params: unknown[] = []) => (await t.query<R>(sql, params)).rows,
        exec: async (sql: string) => { await t.exec(sql); },
      }));
    },
    async exec(sql: string) { await conn.exec(sql); },
    async ping() {
      try { await conn.query('SELECT 1'); return true; } catch { return false; }
    },
    async close() {
      if (!closed) { closed = true; await conn.close(); }
    },
  };
}

async function openPostgres(url: string, max: number): Promise<Db> {
  const pgMod = await import('pg');
  const pool = new pgMod.default.Pool({ connectionString: url, max });
  // An idle client losing its server must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  let closed = false;
  return {
    kind: 'postgres',
    poolStats: () => ({ max, total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async query<R extends Row>(sql: string, params: unknown[] = []) {
      return (await pool.query(sql, params)).rows as R[];
    },
    async tx<T>(fn: (q: Queryable) => Promise<T>) {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = await fn({
          query: async <R extends Row>(sql: string, params: unknown[] = []) => (await client.query(sql, params)).rows as R[],
          exec: async (sql: string) => { await client.query(sql); },
        });
        await client.query('COMMIT');
        return out;
      } catch (e) {
        await client.query('ROLLBACK').catch(() => {});
        throw e;
      } finally {
        client.release();
      }
    },
    async exec(sql: string) { await pool.query(sql); },
    async ping() {
      try { await pool.query('SELECT 1'); return true; } catch { return false; }
    },
    async close() {
      if (!closed) { closed = true; await pool.end(); }
    },
  };
}
