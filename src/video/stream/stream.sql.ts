// The stream archive: rows of SSE bytes keyed by the offset where each starts. Appends happen under the
// task's row lock (tasks.sql.ts `lock`), so offsets are contiguous and never overlap.
export const sql = {
  append: `INSERT INTO video_stream_bytes (task_id, byte_offset, bytes) VALUES ($1, $2, $3)`,
  // Rows from the one containing byte $2 onwards (the caller slices the first), in order, at most $3.
  readFrom: `SELECT byte_offset, bytes FROM video_stream_bytes
             WHERE task_id = $1
               AND byte_offset >= coalesce((SELECT max(byte_offset) FROM video_stream_bytes
                                            WHERE task_id = $1 AND byte_offset <= $2), 0)
             ORDER BY byte_offset
             LIMIT $3`,
  /** Cross-process wake-ups: appends and state changes pg_notify this channel with the task id. */
  listen: `LISTEN sightflow_video`,
};
