// Vector collections: routes over one VectorsService, plus the index manager that opens, catches up or rebuilds every
// collection's USearch index at start and saves pending writes at stop.
import { join } from 'node:path';
import type { Module, ModulePart } from '../base/module.js';
import { vectorMigrations } from './vectors.migrations.sql.js';
import type { Services } from '../services/services.js';
import { CollectionStore } from './collection-store.js';
import { DEFAULT_EMBEDDING_MODEL, EmbeddingModels } from './embedding-models.js';
import { IndexManager } from './index-manager.js';
import { vectorsRoutes } from './vectors.routes.js';
import { VectorsService } from './vectors.service.js';
import { metricsOn } from '../metrics/registry.js';
import { watchVectors } from '../metrics/vectors.js';
import { collectionsPort } from './collection-writer.js';
import type { CollectionsPort } from '../services/collections-port.js';

/**
 * The collections port alone, for a process that runs video workers and no vectors part (`sightflow worker`):
 * the index step's items go to the shared database and blob store, and the serving nodes' indexes catch up
 * from their change numbers. Embedding models load on the first task that needs them.
 */
export function workerCollections(s: Services): CollectionsPort {
  return collectionsPort(s, new CollectionStore(s.db), null, new EmbeddingModels(s));
}

/** Vectors' name and tables (versions 200-299). */
export const vectorsPart: ModulePart = { name: 'vectors', migrations: vectorMigrations };

export function vectorsModule(s: Services): Module & { service: VectorsService; collections: CollectionsPort } {
  const store = new CollectionStore(s.db);
  const index = new IndexManager(s.db, join(s.config.dataDir, 'indexes'), s.log.child({ component: 'vectors' }));
  const models = new EmbeddingModels(s);
  s.models.catalogue.add({
    task: 'embed',
    list: () =>
      models.list().map((m) => ({
        id: m.info.id,
        object: 'model' as const,
        task: 'embed' as const,
        default: m.info.id === DEFAULT_EMBEDDING_MODEL,
        source: m.info.id === DEFAULT_EMBEDDING_MODEL ? ('builtin' as const) : ('bring-your-own' as const),
        description: m.info.name,
        types: [...m.info.types],
        dimensions: m.info.dimensions,
      })),
  });
  const service = new VectorsService({ s, store, index, models });
  let unwatch = () => {};
  return {
    ...vectorsPart,
    service,
    // The video index step writes moments through this port (it may not import this part); app.ts hands it over.
    collections: collectionsPort(s, store, index, models),
    routes: vectorsRoutes(service, s.db),
    async start() {
      unwatch = metricsOn ? watchVectors({ stats: () => index.lagStats() }) : () => {};
      models.start();
      const t = performance.now();
      await index.openAll();
      const outcomes = [...index.outcomes.values()];
      if (outcomes.length)
        s.log.info(
          {
            collections: outcomes.length,
            rebuilt: outcomes.filter((o) => o === 'rebuilt').length,
            ms: Math.round(performance.now() - t),
          },
          'vector indexes ready',
        );
    },
    async stop() {
      unwatch();
      await index.flush();
    },
  };
}
