// The ids of a collection's items whose metadata match a filter, in chunks of at most DELETE_CHUNK (one
// delete transaction each): DELETE .../items with a filter, e.g. every moment of one video task.
import type { Db } from '../store/db.js';
import { matchesFilter, type FilterNode } from './filter.js';
import { sql } from './items-by-filter.sql.js';

const PAGE = 4096;
export const DELETE_CHUNK = 1000;

export async function idsMatching(db: Db, collectionId: string, filter: FilterNode): Promise<string[][]> {
  const chunks: string[][] = [];
  let current: string[] = [];
  let after = '0';
  for (;;) {
    const rows = await db.query(sql.idsSince, [collectionId, after, PAGE]);
    if (rows.length === 0) break;
    for (const r of rows) {
      const meta = (typeof r.metadata === 'string' ? JSON.parse(r.metadata) : r.metadata) ?? {};
      if (!matchesFilter(filter, meta as Record<string, unknown>)) continue;
      current.push(String(r.id));
      if (current.length === DELETE_CHUNK) {
        chunks.push(current);
        current = [];
      }
    }
    after = String(rows[rows.length - 1]!.key);
  }
  if (current.length) chunks.push(current);
  return chunks;
}
