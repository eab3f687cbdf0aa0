// The database with every migration applied, without the services around it: the CLI's database commands
// (migrate, projects, keys; models on PostgreSQL) open it alone, where importing the whole service first cost
// them most of their run. The list is the core tables plus every part's migrations in the parts' order
// (app.ts PARTS, which names them too); test/app/migrated-db.test.ts holds the two equal.
import { mkdirSync } from 'node:fs';
import type { Config } from './config/index.js';
import { openDb, type Db } from './store/db.js';
import { migrate, migrationsKey } from './store/migrate.js';
import { coreMigrations, type Migration } from './store/migrations.sql.js';
import { videoMigrations } from './video/video.migrations.sql.js';
import { analyticsMigrations } from './video/analytics/analytics.migrations.sql.js';
import { momentsMigrations } from './video/moments/moments.migrations.sql.js';
import { vectorMigrations } from './vectors/vectors.migrations.sql.js';
import { modelMigrations } from './models/models.migrations.sql.js';

/** The core tables plus every part's, as one list for migrate(). */
export function allMigrations(): Migration[] {
  return [
    ...coreMigrations,
    ...videoMigrations,
    ...analyticsMigrations,
    ...momentsMigrations,
    ...vectorMigrations,
    ...modelMigrations,
  ];
}

/** The database with every migration applied (the data dir made first when embedded). */
export async function openMigratedDb(config: Config): Promise<Db> {
  mkdirSync(config.dataDir, { recursive: true });
  const all = allMigrations();
  return openDb({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    poolSize: config.pgPoolSize,
    pgliteTemplateDir: config.pgliteTemplateDir,
    prepare: { key: migrationsKey(all), run: (d) => migrate(d, all) },
  });
}
