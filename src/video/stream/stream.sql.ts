// The stream archive: rows of SSE bytes keyed by the offset where each starts. Appends happen under the
// task's row lock (tasks.sql.ts `lock`), or in one statement that changes nothing unless the task's row still
// ends where its writer last left it, so offsets are contiguous and never overlap.
import { FRAME_APPENDED } from '../tasks.sql.js';

/**
 * A frame chunk in one statement, for the worker that made the task's last append: the task moves on
 * (FRAME_APPENDED: $2 bytes, $3 stream_info, $4 lease ms, $5 checkpoint) and the bytes $8 land at offset $6
 * only while the row is as that worker left it (owner $7, a running state, the archive ending at $6 after $9
 * chunks); else nothing changes and no row comes back, and the caller takes the row lock to find out why.
 * The owner check is the fence: a worker frozen past its lease, whose task another worker took over, matches
 * no row when it wakes.
 */
const FRAME_IN_ONE = `WITH moved AS (
    UPDATE video_tasks SET ${FRAME_APPENDED}
    WHERE id = $1 AND lease_owner = $7 AND status IN ('running', 'streaming') AND stream_bytes = $6 AND chunk_count = $9
    RETURNING id),
  stored AS (INSERT INTO video_stream_bytes (task_id, byte_offset, bytes) SELECT id, $6, $8 FROM moved RETURNING task_id)`;

export const sql = {
  appendFrame: `${FRAME_IN_ONE} SELECT task_id FROM stored`,
  /** The same on PostgreSQL, telling other processes at commit (pg_notify($10, $11), as stream-hub.ts). */
  appendFrameNotify: `${FRAME_IN_ONE} SELECT pg_notify($10, $11) FROM stored`,
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
