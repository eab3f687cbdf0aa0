// The moments room's statements (the index step): where a task's archive ends (the byte offset the next chunk starts at, a
// moment's stream_offset) and the per-task count of items written (shown in the task record). An item is counted
// once, however often it is written: a task continued on another worker writes again the items its dead worker
// may have written after its checkpoint (upserts by id in the collection), and those must not count twice.

export const sql = {
  streamEnd: `SELECT stream_bytes FROM video_tasks WHERE id = $1`,
  /** $1 task, $2 collection, $3 item id, $4 segments, $5 tracks (1 and 0, or 0 and 1): counts an id not seen yet. */
  addItem: `
    WITH seen AS (
      INSERT INTO video_index_items (task_id, item_id) VALUES ($1, $3) ON CONFLICT DO NOTHING RETURNING task_id
    )
    INSERT INTO video_index_counts (task_id, collection_id, segments, tracks) SELECT $1, $2, $4, $5 FROM seen
    ON CONFLICT (task_id) DO UPDATE SET segments = video_index_counts.segments + $4, tracks = video_index_counts.tracks + $5,
      updated_at = clock_timestamp()`,
  counts: `SELECT collection_id, segments, tracks FROM video_index_counts WHERE task_id = $1`,
};
