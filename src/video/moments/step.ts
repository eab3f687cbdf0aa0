// The index step (docs/moments.md): writes the video to a vector collection as searchable moments, beside
// the targets (it adds none). Checking it looks the collection up (a missing one is refused when the task is
// created); at run time it sees each whole chunk before it is archived (moment-indexer.ts cuts segments and
// follows tracks there) and writes what is still open when the task ends, or within a grace time on cancel. A
// file task continues on another worker from its snapshot (moment-indexer.ts, snapshot() and restore()).
import { defineStep } from '../pipeline/step.js';
import type { CollectionWriter } from '../../services/collections-port.js';
import { ProviderError } from '../task-contract.js';
import { INDEX_STEP_PARAMS, IndexCounts, IndexStepSchema, indexSettings } from './index-step.js';
import { indexSummary } from './task-record.js';
import { MomentIndexer } from './moment-indexer.js';

export const indexStep = defineStep({
  name: 'index',
  schema: IndexStepSchema,
  parameters: INDEX_STEP_PARAMS,
  // Without the vectors part in the scope (an API-only split, or no task) the node that runs the task decides.
  async prepare(i, params, _models, scope): Promise<CollectionWriter | undefined> {
    const collection = params?.collection;
    if (typeof collection !== 'string' || collection.length === 0 || !scope?.services.collections) return undefined;
    return scope.services.collections.writer(scope.projectId, collection, `steps[${i}].parameters.collection`);
  },
  api: {
    record: { index: IndexCounts.optional() },
    recordOf: indexSummary,
  },
  plan({ index, params, before, prepared: writer }) {
    const settings = indexSettings(index, params, before);
    return {
      kind: 'index',
      index,
      produces: false,
      open({ task }) {
        const db = task?.services.db;
        const log = task?.services.log;
        if (!task || !db || !log) throw new ProviderError('local', 'The index step runs only in a video task');
        if (!writer)
          throw new ProviderError('local', 'The index step needs the vectors part, which this process does not run');
        const indexer = new MomentIndexer(settings, writer, task, { db, log });
        return {
          chunk: (out, frame) => indexer.chunk(out, frame),
          finish: () => indexer.finish(),
          close: (handedOn?: boolean) => indexer.close(handedOn === true),
          snapshot: () => indexer.snapshot(),
          restore: (state, frames) => indexer.restore(state, frames),
        };
      },
    };
  },
});
