// The index step seen from the task API: a task naming a collection that does not exist is refused when it
// is created (not failed later), and the task record shows what the step has written so far.
import type { Services } from '../../../services.js';
import type { VideoTaskRequest } from '../../provider.js';
import { parseIndexStep } from './index-step.js';
import { sql } from './index.sql.js';

export async function checkIndexCollection(s: Pick<Services, 'collections'>, projectId: string, request: Pick<VideoTaskRequest, 'steps'>): Promise<void> {
  const settings = parseIndexStep(request);
  // Without the vectors part here (an API-only split that never happens today) the worker's node decides.
  if (settings && s.collections) await s.collections.writer(projectId, settings.collection, `steps[${settings.index}].parameters.collection`);
}

/** `index` of the task record: {collection, items_added, segments, tracks}, or nothing without an index step. */
export async function indexSummary(s: Pick<Services, 'db'>, taskId: string): Promise<Record<string, unknown>> {
  const r = (await s.db.query(sql.counts, [taskId]))[0];
  if (!r) return {};
  const segments = Number(r.segments);
  const tracks = Number(r.tracks);
  return { index: { collection: String(r.collection_id), items_added: segments + tracks, segments, tracks } };
}
