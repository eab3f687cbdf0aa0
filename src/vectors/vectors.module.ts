// Vector collections: routes, plus the index manager that opens, catches up or rebuilds every
// collection's USearch index at start and saves pending writes at stop.
import { join } from 'node:path';
import type { Module } from '../module.js';
import type { Services } from '../services.js';
import { CollectionStore } from './collection-store.js';
import { EmbeddingModels } from './embedding-models.js';
import { IndexManager } from './index-manager.js';
import { vectorsRoutes } from './vectors.routes.js';

export function vectorsModule(s: Services): Module {
  const store = new CollectionStore(s.db);
  const index = new IndexManager(s.db, join(s.config.dataDir, 'indexes'), s.log.child({ component: 'vectors' }));
  const models = new EmbeddingModels(s);
  return {
    routes: vectorsRoutes({ s, store, index, models }),
    async start() {
      models.start();
      const t = performance.now();
      await index.openAll();
      const outcomes = [...index.outcomes.values()];
      if (outcomes.length) s.log.info({ collections: outcomes.length, rebuilt: outcomes.filter((o) => o === 'rebuilt').length, ms: Math.round(performance.now() - t) }, 'vector indexes ready');
    },
    async stop() {
      await index.flush();
    },
  };
}
