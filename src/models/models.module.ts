// Model management as a part: the admin routes, the serving state in GET /v1/models(/:id), and on PostgreSQL the loop that pulls
// models added or removed on other nodes into this node's data dir (every SIGHTFLOW_MODELS_SYNC_MS).
import type { Module, ModulePart } from '../base/module.js';
import { modelMigrations } from './models.migrations.sql.js';
import { ModelsAdminService, type ModelsDeps } from './models-admin.service.js';
import { modelsAdminRoutes } from './models-admin.routes.js';
import { pullModels } from './model-publish.js';
import { pullSettings } from './settings-publish.js';

/** The shared model store's tables (versions 300-399). */
export const modelsPart: ModulePart = { name: 'models', migrations: modelMigrations };

export function modelsModule(s: ModelsDeps, opts: { routes?: boolean } = {}): Module {
  const service = new ModelsAdminService(s);
  // GET /v1/models/:id shows registered models' serving state, settings and origin.
  if (opts.routes !== false) s.models.catalogue.addState((id) => service.state(id));
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<void> | null = null;
  const log = s.log.child({ component: 'models' });
  const pull = async () => {
    const models = await pullModels(s.db, s.models.registry, log);
    const settings = await pullSettings(s.db, s.models.registry, log);
    if (models + settings > 0) await s.models.refresh();
  };
  const schedule = () => {
    timer = setTimeout(() => {
      running = pull()
        .catch((e: Error) => log.error({ err: e }, 'pulling shared models failed'))
        .finally(() => {
          running = null;
          if (!stopped) schedule();
        });
    }, s.config.models.syncMs);
    timer.unref();
  };
  return {
    ...modelsPart,
    routes: opts.routes === false ? [] : modelsAdminRoutes(service),
    async start() {
      if (s.db.kind !== 'postgres') return;
      await pull().catch((e: Error) => log.error({ err: e }, 'pulling shared models failed'));
      schedule();
    },
    async stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
