// A fresh embedded database from the template of an empty cluster: the first fresh database makes the
// template, the next one starts from it empty (nothing of the first one's data), and a damaged template
// falls back to initdb instead of keeping the service from starting. A fresh database that runs the migrations
// becomes the template of that set of migrations; the next one starts migrated (nothing left to apply), and
// another set of migrations never loads it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, type DbPrepare } from '../../src/store/db.js';
import { migrate, migrationsKey } from '../../src/store/migrate.js';
import { templatePath } from '../../src/store/pglite-template.js';
import { allMigrations } from '../../src/app.js';

test('the first fresh database makes the template; the next starts from it, empty; a damaged one falls back to initdb and is replaced', {
  timeout: 90_000,
}, async () => {
  const root = mkdtempSync(join(tmpdir(), 'sightflow-pglite-template-'));
  const templates = join(root, 'templates');
  try {
    // A template as an earlier release kept it (a tarball), which nothing reads any more.
    mkdirSync(templates, { recursive: true });
    writeFileSync(`${templatePath(templates)}.tar`, 'an old template');
    const a = await openDb({ dataDir: join(root, 'a'), pgliteTemplateDir: templates });
    assert.ok(existsSync(templatePath(templates)), 'the first fresh database wrote the template');
    assert.ok(!existsSync(`${templatePath(templates)}.tar`), 'and removed the old tarball of it');
    await a.exec('CREATE TABLE kept (v int); INSERT INTO kept VALUES (1);');
    await a.close();

    const started = performance.now();
    const b = await openDb({ dataDir: join(root, 'b'), pgliteTemplateDir: templates });
    const ms = performance.now() - started;
    assert.deepEqual(await b.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`), [{ n: 0 }]);
    await b.exec('CREATE TABLE t (v int); INSERT INTO t VALUES (7);');
    await b.close();
    const reopened = await openDb({ dataDir: join(root, 'b'), pgliteTemplateDir: templates });
    assert.deepEqual(
      await reopened.query('SELECT v FROM t'),
      [{ v: 7 }],
      'a database made from the template keeps its data',
    );
    await reopened.close();

    writeFileSync(join(templatePath(templates), 'global', 'pg_control'), 'not a control file');
    const c = await openDb({ dataDir: join(root, 'c'), pgliteTemplateDir: templates });
    assert.deepEqual(await c.query('SELECT 1 AS one'), [{ one: 1 }]);
    await c.close();
    const d = await openDb({ dataDir: join(root, 'd'), pgliteTemplateDir: templates });
    assert.deepEqual(
      await d.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`),
      [{ n: 0 }],
      'the damaged template was replaced',
    );
    await d.close();
    console.log(`# from the template in ${Math.round(ms)} ms`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a fresh migrated database becomes the template of its migrations; the next starts migrated; other migrations or a damaged one migrate from the empty cluster', {
  timeout: 120_000,
}, async () => {
  const root = mkdtempSync(join(tmpdir(), 'sightflow-pglite-schema-template-'));
  const templates = join(root, 'templates');
  const all = allMigrations();
  const applied: number[][] = [];
  const prepare = (migrations = all): DbPrepare => ({
    key: migrationsKey(migrations),
    run: async (db) => {
      applied.push(await migrate(db, migrations));
    },
  });
  const tables = async (db: Awaited<ReturnType<typeof openDb>>) =>
    (await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`))[0]!.n;
  try {
    const a = await openDb({ dataDir: join(root, 'a'), pgliteTemplateDir: templates, prepare: prepare() });
    assert.equal(applied.at(-1)!.length, all.length, 'the first fresh database ran every migration');
    assert.ok(existsSync(templatePath(templates, migrationsKey(all))), 'and became the migrated template');
    const migratedTables = await tables(a);
    await a.exec("INSERT INTO projects (id, name) VALUES ('p_kept', 'kept')");
    await a.close();

    const b = await openDb({ dataDir: join(root, 'b'), pgliteTemplateDir: templates, prepare: prepare() });
    assert.deepEqual(applied.at(-1), [], 'the next one starts migrated');
    assert.equal(await tables(b), migratedTables);
    assert.deepEqual(await b.query(`SELECT count(*)::int AS n FROM projects`), [{ n: 0 }], 'and empty');
    await b.close();

    // One migration fewer is another set: never the template of the full set.
    const fewer = all.slice(0, -1);
    const c = await openDb({ dataDir: join(root, 'c'), pgliteTemplateDir: templates, prepare: prepare(fewer) });
    assert.equal(applied.at(-1)!.length, fewer.length);
    await c.close();

    writeFileSync(join(templatePath(templates, migrationsKey(all)), 'global', 'pg_control'), 'not a control file');
    const d = await openDb({ dataDir: join(root, 'd'), pgliteTemplateDir: templates, prepare: prepare() });
    assert.equal(applied.at(-1)!.length, all.length, 'a damaged migrated template: migrated from the empty cluster');
    assert.equal(await tables(d), migratedTables);
    await d.close();
    const e = await openDb({ dataDir: join(root, 'e'), pgliteTemplateDir: templates, prepare: prepare() });
    assert.deepEqual(applied.at(-1), [], 'and replaced');
    await e.close();
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
