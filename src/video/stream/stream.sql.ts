// The stream archive: rows of SSE bytes keyed by the offset where each starts. Appends happen under the
// task's row lock (tasks.sql.ts `lock`), or in one statement that changes nothing unless the task's row still
// ends where its writer last left it, so offsets are contiguous and never overlap.
import { FRAME_APPENDED, FRAMES_APPENDED } from '../tasks.sql.js';

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

/**
 * The frame chunks of several tasks in one statement, each as FRAME_IN_ONE: arrays of one element a frame
 * ($1 task ids, $2 byte lengths, $3 stream_info as JSON text, $4 lease ms, $5 checkpoints, $6 the archive's end
 * each expects, $7 owners, $8 the chunks as text, $9 chunk counts each expects). A task whose row moved
 * matches no row and is not in the answer; the others are appended. At most one frame a task, so a row is
 * updated once.
 */
const FRAMES_IN_ONE = `WITH input AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::int[], $5::text[], $6::bigint[], $7::text[],
                         $8::text[], $9::int[])
      AS i(id, n, info, lease_ms, cp, tail_end, owner, bytes, chunks)),
  moved AS (
    UPDATE video_tasks t
    SET ${FRAMES_APPENDED}
    FROM input i
    WHERE t.id = i.id AND t.lease_owner = i.owner AND t.status IN ('running', 'streaming')
      AND t.stream_bytes = i.tail_end AND t.chunk_count = i.chunks
    RETURNING t.id),
  stored AS (INSERT INTO video_stream_bytes (task_id, byte_offset, bytes)
    SELECT i.id, i.tail_end, convert_to(i.bytes, 'UTF8') FROM moved JOIN input i ON i.id = moved.id
    RETURNING task_id, byte_offset)`;

export const sql = {
  appendFrame: `${FRAME_IN_ONE} SELECT task_id FROM stored`,
  /** Several tasks' frames (FRAMES_IN_ONE): the ids appended. */
  appendFrames: `${FRAMES_IN_ONE} SELECT s.task_id FROM stored s`,
  /** The same on PostgreSQL, telling other processes each task's new end at commit ($10: the channel). */
  appendFramesNotify: `${FRAMES_IN_ONE}
    SELECT s.task_id, pg_notify($10, s.task_id || ' ' || (i.tail_end + i.n)::text)
    FROM stored s JOIN input i ON i.id = s.task_id`,
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
