// The index step seen from the task API: the task record shows what the step has written so far. (A task
// naming a collection that does not exist is refused when it is created: the step's prepare, step.ts.)
import type { Queryable } from '../../store/db.js';
import { sql } from './moments.sql.js';

/** `index` of the task record: {collection, items_added, segments, tracks}, or nothing without an index step. */
export async function indexSummary(q: Queryable, taskId: string): Promise<Record<string, unknown>> {
  const r = (await q.query(sql.counts, [taskId]))[0];
  if (!r) return {};
  const segments = Number(r.segments);
  const tracks = Number(r.tracks);
  return { index: { collection: String(r.collection_id), items_added: segments + tracks, segments, tracks } };
}
