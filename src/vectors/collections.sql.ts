// All SQL of the vectors part. Writers of one collection serialise on its row (`FOR UPDATE` through the
// UPDATE that allocates keys), across nodes too, so keys and change numbers grow in commit order.
const COLLECTION = `id, project_id, name, description, model_id, dimensions, metric, item_count, change_seq, created_at`;
const ITEM = `id, key, content_type, text, blob_key, metadata, created_at`;
/** A stored vector read back as base64 text (decode with vectorFromBase64): PGlite turns a bytea column into
 * bytes in JavaScript, character by character, while Node decodes base64 natively, several times faster over
 * a search's candidates (docs/vectors.md, "Why it is built this way"); node-postgres gains nothing, loses nothing. */
const VECTOR_B64 = `encode(vector, 'base64') AS vector_b64`;

export const sql = {
  insertCollection: `
    INSERT INTO vector_collections (id, project_id, name, description, model_id, dimensions, metric)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (project_id, name) DO NOTHING
    RETURNING ${COLLECTION}`,
  listCollections: `SELECT ${COLLECTION} FROM vector_collections WHERE project_id = $1 ORDER BY created_at DESC, id DESC`,
  getCollection: `SELECT ${COLLECTION} FROM vector_collections WHERE id = $1 AND project_id = $2`,
  /** Every collection, for index checks at start. */
  allCollections: `SELECT ${COLLECTION} FROM vector_collections ORDER BY id`,
  collectionState: `SELECT id, dimensions, change_seq, item_count FROM vector_collections WHERE id = $1`,
  deleteCollection: `DELETE FROM vector_collections WHERE id = $1 AND project_id = $2 RETURNING id`,

  /** Allocates n keys and one change number; locks the row until commit. */
  beginWrite: `
    UPDATE vector_collections SET next_key = next_key + $2, change_seq = change_seq + 1, item_count = item_count + $3
    WHERE id = $1 AND project_id = $4
    RETURNING next_key - $2 AS first_key, change_seq`,
  /** n rows of (id, collection_id, key, change_seq, content_type, text, blob_key, metadata json, vector bytea). */
  insertItems: (n: number) => `
    INSERT INTO vector_items (id, collection_id, key, change_seq, content_type, text, blob_key, metadata, vector)
    VALUES ${Array.from({ length: n }, (_, i) => {
      const b = i * 9;
      return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, $${b + 8}::jsonb, $${b + 9})`;
    }).join(', ')}`,
  /** Deletes the given items of a collection and records their keys as deletions of change $3. */
  deleteItems: `
    WITH gone AS (DELETE FROM vector_items WHERE collection_id = $1 AND id = ANY($2::text[]) RETURNING id, key, blob_key),
         logged AS (INSERT INTO vector_deletions (collection_id, key, change_seq) SELECT $1, key, $3 FROM gone)
    SELECT id, key, blob_key FROM gone`,
  adjustCount: `UPDATE vector_collections SET item_count = item_count + $2 WHERE id = $1`,

  getItem: `SELECT ${ITEM} FROM vector_items WHERE collection_id = $1 AND id = $2`,
  /** New metadata for one item, recorded as change $4 (catch-up re-reads rows changed after a checkpoint). */
  updateMetadata: `UPDATE vector_items SET metadata = $3::jsonb, change_seq = $4 WHERE collection_id = $1 AND id = $2 RETURNING ${ITEM}`,
  listItems: `SELECT ${ITEM} FROM vector_items WHERE collection_id = $1 ORDER BY key LIMIT $2 OFFSET $3`,
  /** Search results: the rows with their float32 vectors (exact rescoring of the index's candidates), as
   * base64 (VECTOR_B64). */
  itemsByKeys: `SELECT ${ITEM}, ${VECTOR_B64} FROM vector_items WHERE collection_id = $1 AND key = ANY($2::bigint[])`,
  /** Vectors added after a change number, in key order, a page at a time (catch-up and rebuild). */
  vectorsSince: `
    SELECT key, ${VECTOR_B64}, metadata FROM vector_items WHERE collection_id = $1 AND change_seq > $2 AND key > $3
    ORDER BY key LIMIT $4`,
  /** Every item's metadata by key, a page at a time (filters' metadata columns). */
  metadataSince: `SELECT key, metadata FROM vector_items WHERE collection_id = $1 AND key > $2 ORDER BY key LIMIT $3`,
  deletionsSince: `SELECT key FROM vector_deletions WHERE collection_id = $1 AND change_seq > $2`,
  countItems: `SELECT count(*)::int AS n FROM vector_items WHERE collection_id = $1`,
};
