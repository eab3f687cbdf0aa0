// A fresh embedded database from the template of an empty cluster: the first fresh database makes the
// template, the next one starts from it empty (nothing of the first one's data), and a damaged template
// falls back to initdb instead of keeping the service from starting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../src/store/db.js';
import { templatePath } from '../../src/store/pglite-template.js';

test('the first fresh database makes the template; the next starts from it, empty; a damaged one falls back to initdb and is replaced', { timeout: 90_000 }, async () => {
  const root = mkdtempSync(join(tmpdir(), 'sightflow-pglite-template-'));
  const templates = join(root, 'templates');
  try {
    const a = await openDb({ dataDir: join(root, 'a'), pgliteTemplateDir: templates });
    assert.ok(existsSync(templatePath(templates)), 'the first fresh database wrote the template');
    await a.exec('CREATE TABLE kept (v int); INSERT INTO kept VALUES (1);');
    await a.close();

    const started = performance.now();
    const b = await openDb({ dataDir: join(root, 'b'), pgliteTemplateDir: templates });
    const ms = performance.now() - started;
    assert.deepEqual(await b.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`), [{ n: 0 }]);
    await b.exec('CREATE TABLE t (v int); INSERT INTO t VALUES (7);');
    await b.close();
    const reopened = await openDb({ dataDir: join(root, 'b'), pgliteTemplateDir: templates });
    assert.deepEqual(await reopened.query('SELECT v FROM t'), [{ v: 7 }], 'a database made from the template keeps its data');
    await reopened.close();

    writeFileSync(templatePath(templates), 'not a tarball');
    const c = await openDb({ dataDir: join(root, 'c'), pgliteTemplateDir: templates });
    assert.deepEqual(await c.query('SELECT 1 AS one'), [{ one: 1 }]);
    await c.close();
    const d = await openDb({ dataDir: join(root, 'd'), pgliteTemplateDir: templates });
    assert.deepEqual(await d.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`), [{ n: 0 }], 'the damaged template was replaced');
    await d.close();
    console.log(`# from the template in ${Math.round(ms)} ms`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
