// The moments room's statements (the index step): where a task's archive ends (the byte offset the next chunk starts at, a
// moment's stream_offset) and the per-task count of items written (shown in the task record).

export const sql = {
  streamEnd: `SELECT stream_bytes FROM video_tasks WHERE id = $1`,
  addCounts: `
    INSERT INTO video_index_counts (task_id, collection_id, segments, tracks) VALUES ($1, $2, $3, $4)
    ON CONFLICT (task_id) DO UPDATE SET segments = video_index_counts.segments + $3, tracks = video_index_counts.tracks + $4,
      updated_at = clock_timestamp()`,
  counts: `SELECT collection_id, segments, tracks FROM video_index_counts WHERE task_id = $1`,
};
