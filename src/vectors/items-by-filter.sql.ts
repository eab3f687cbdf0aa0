// Item ids with their metadata, a page at a time in key order (deleting the items a filter matches).
export const sql = {
  idsSince: `SELECT id, key, metadata FROM vector_items WHERE collection_id = $1 AND key > $2 ORDER BY key LIMIT $3`,
};
