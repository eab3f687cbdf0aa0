// Serving settings changed while running, across nodes. With PostgreSQL each change is stored for every
// node (model-store.sql.ts settingsSql) and every node writes what differs into its own data dir's overrides
// file on its next pull; its registry then reports the model retuned (taken in place) or changed (its sessions
// load again with them).
import type { Logger } from '../base/log.js';
import type { Db } from '../store/db.js';
import type { ModelRegistry } from '../inference/registry.js';
import type { ModelRuntimeSettings } from '../inference/manifest.js';
import { normaliseRuntime, sameRuntime } from '../inference/settings-overrides.js';
import { settingsSql } from './model-store.sql.js';

/** Stores a model's settings for every node (a removed model's go with it: unpublishModel). */
export async function publishSettings(db: Db, id: string, runtime: ModelRuntimeSettings): Promise<void> {
  await db.query(settingsSql.upsert, [id, JSON.stringify(runtime)]);
}

/** Brings this node's overrides in line with the shared ones; returns how many it changed. */
export async function pullSettings(db: Db, registry: ModelRegistry, log: Logger): Promise<number> {
  const rows = await db.query<{ id: string; runtime: unknown }>(settingsSql.list);
  let changed = 0;
  for (const row of rows) {
    let want: ModelRuntimeSettings | undefined;
    try {
      const raw = typeof row.runtime === 'string' ? JSON.parse(row.runtime) : row.runtime;
      want = raw === null ? undefined : normaliseRuntime(raw);
    } catch (e) {
      log.error(
        { model: row.id, err: (e as Error).message },
        `shared settings of model ${row.id} are unreadable; skipped`,
      );
      continue;
    }
    if (sameRuntime(registry.overrideOf(row.id), want)) continue;
    await registry.setOverride(row.id, want ?? null);
    log.info({ model: row.id, settings: want ?? null }, `model ${row.id}: serving settings changed on another node`);
    changed++;
  }
  return changed;
}
