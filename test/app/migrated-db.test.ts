// The CLI's database commands migrate from src/migrated-db.ts's list, without importing the service;
// the service's parts (app.ts PARTS) name their migrations too. The two lists must be one: a part's new
// migration missing from the file would leave a database the CLI made behind the service's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PARTS } from '../../src/app.js';
import { allMigrations } from '../../src/migrated-db.js';
import { coreMigrations } from '../../src/store/migrations.sql.js';

test("the CLI's migration list is the core tables plus every part's, in the parts' order", () => {
  const names = (ms: ReturnType<typeof allMigrations>) => ms.map((m) => JSON.stringify(m));
  assert.deepEqual(names(allMigrations()), names([...coreMigrations, ...PARTS.flatMap((p) => p.migrations)]));
});
