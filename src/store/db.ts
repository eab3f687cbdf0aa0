// One small database interface over two engines: PGlite embedded in <data-dir>/db by default, PostgreSQL
// through a `pg` pool when DATABASE_URL is set. Callers write plain PostgreSQL with $n parameters; all SQL
// lives in *.sql.ts modules.
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { copyTemplate, saveTemplate } from './pglite-template.js';

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

/**
 * What runs on a database right after it opens (the migrations), and a key naming exactly that work: a fresh
 * embedded database can then start from a template that already had it done (pglite-template.ts).
 */
export interface DbPrepare {
  key: string;
  run(db: Db): Promise<unknown>;
}

/**
 * `pgliteTemplateDir`: where templates of fresh embedded clusters are kept (pglite-template.ts); `prepare`
 * runs once the database is open, on either engine.
 */
export async function openDb(opts: {
  databaseUrl?: string;
  dataDir: string;
  poolSize?: number;
  pgliteTemplateDir?: string;
  prepare?: DbPrepare;
}): Promise<Db> {
  const db = opts.databaseUrl
    ? await openPostgres(opts.databaseUrl, opts.poolSize ?? 10)
    : await openPglite(join(opts.dataDir, 'db'), opts.pgliteTemplateDir, opts.prepare);
  if (opts.databaseUrl && opts.prepare) await opts.prepare.run(db);
  return db;
}

async function openPglite(dir: string, templateDir: string | undefined, prepare: DbPrepare | undefined): Promise<Db> {
  mkdirSync(dir, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const fresh = !existsSync(join(dir, 'PG_VERSION'));
  type Pg = InstanceType<typeof PGlite>;
  // A damaged template must not keep the service from starting: the directory is emptied, the next way tried.
  const fromTemplate = async (key?: string): Promise<Pg | null> => {
    if (!templateDir || !copyTemplate(templateDir, dir, key)) return null;
    return PGlite.create(dir).catch(() => {
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      return null;
    });
  };
  // Fresh: from the template with `prepare` done (nothing left for it to do), else from the empty cluster's
  // template, else initdb (which then becomes the empty cluster's template).
  let pg: Pg | null = fresh && prepare ? await fromTemplate(prepare.key) : null;
  const prepared = pg !== null;
  if (!pg && fresh) pg = await fromTemplate();
  if (!pg) {
    pg = await PGlite.create(dir);
    if (fresh && templateDir) await saveTemplate(pg, templateDir);
  }
  const db = pgliteDb(pg);
  if (prepare) {
    await prepare.run(db);
    // A fresh cluster just prepared, nothing else in it yet: the template for the next one.
    if (fresh && templateDir && !prepared) await saveTemplate(pg, templateDir, prepare.key);
  }
  return db;
}

function pgliteDb(pg: import('@electric-sql/pglite').PGlite): Db {
  const conn = pg;
  let closed = false;
  return {
    kind: 'pglite',
    async query<R extends Row>(sql: string, params: unknown[] = []) {
      return (await conn.query<R>(sql, params)).rows;
    },
    async tx<T>(fn: (q: Queryable) => Promise<T>) {
      return conn.transaction(async (t) =>
        fn({
          query: async <R extends Row>(sql: string, params: unknown[] = []) => (await t.query<R>(sql, params)).rows,
          exec: async (sql: string) => {
            await t.exec(sql);
          },
        }),
      );
    },
    async exec(sql: string) {
      await conn.exec(sql);
    },
    async ping() {
      try {
        await conn.query('SELECT 1');
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      if (!closed) {
        closed = true;
        await conn.close();
      }
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
          query: async <R extends Row>(sql: string, params: unknown[] = []) =>
            (await client.query(sql, params)).rows as R[],
          exec: async (sql: string) => {
            await client.query(sql);
          },
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
    async exec(sql: string) {
      await pool.query(sql);
    },
    async ping() {
      try {
        await pool.query('SELECT 1');
        return true;
      } catch {
        return false;
      }
    },
    async close() {
      if (!closed) {
        closed = true;
        await pool.end();
      }
    },
  };
}
