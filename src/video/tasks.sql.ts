// Every statement on video_tasks: the API side (create, get, list, cancel), the queue (claim, heartbeat),
// the worker's state changes and the reaper. Times are compared with the database clock (now()) only,
// so nodes with skewed clocks agree on leases.

const RECORD = `id, project_id, key_id, status, model, created_at, started_at, finished_at, progress, usage, error,
  stream_bytes, chunk_count, attempts, resumes`;

/**
 * What a frame chunk's append moves on its task ($2 the chunk's bytes, $3 its stream_info, $4 the lease in
 * ms, $5 the task's checkpoint after this chunk, null when it cannot continue, or '' to keep the stored one:
 * docs/video.md, "When a worker dies"): under the row lock (appendedFrame) and in the archive's one-statement
 * append (stream.sql.ts). This is the only place a checkpoint is written, so it always describes one of the
 * archive's chunks: the last one, or for a file one of the few before it (a kept value's TOAST pointer is
 * carried over, its bytes are not written again).
 */
export const FRAME_APPENDED = frameAppended({ n: '$2', info: '$3::jsonb', leaseMs: '$4::int', cp: '$5::text' });

/** FRAME_APPENDED for the row `i` of an array of frames (stream.sql.ts FRAMES_IN_ONE, which has none of these columns). */
export const FRAMES_APPENDED = frameAppended({ n: 'i.n', info: 'i.info::jsonb', leaseMs: 'i.lease_ms', cp: 'i.cp' });

/** The SET list of a frame's append, from the SQL that gives each value. */
function frameAppended(v: { n: string; info: string; leaseMs: string; cp: string }): string {
  return `status = CASE WHEN status = 'running' THEN 'streaming' ELSE status END,
  stream_bytes = stream_bytes + ${v.n}, chunk_count = chunk_count + 1, progress = ${v.info},
  lease_expires_at = now() + ${v.leaseMs} * interval '1 millisecond',
  checkpoint = CASE WHEN ${v.cp} = '' THEN checkpoint ELSE ${v.cp} END`;
}

export const sql = {
  // $8: the bytes the archive starts with (the opening comment, stored in the same transaction).
  insert: `INSERT INTO video_tasks (id, project_id, key_id, status, model, request, job, max_attempts, stream_bytes)
           VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7, $8) RETURNING ${RECORD}`,

  byId: `SELECT ${RECORD} FROM video_tasks WHERE id = $1 AND project_id = $2`,
  byIdWithRequest: `SELECT ${RECORD}, request FROM video_tasks WHERE id = $1 AND project_id = $2`,
  results: `SELECT status, results FROM video_tasks WHERE id = $1 AND project_id = $2`,
  /** The stream endpoint's view: where the archive ends and whether more can come. */
  streamState: `SELECT status, stream_bytes FROM video_tasks WHERE id = $1`,

  // Newest first, keyset on (created_at, id). $2: comma list of states or null; [$3, $4) on created_at;
  // ($5, $6): the cursor, strictly after it in this order.
  list: `SELECT ${RECORD} FROM video_tasks
         WHERE project_id = $1
           AND ($2::text IS NULL OR status = ANY (string_to_array($2::text, ',')))
           AND ($3::timestamptz IS NULL OR created_at >= $3::timestamptz)
           AND ($4::timestamptz IS NULL OR created_at < $4::timestamptz)
           AND ($5::timestamptz IS NULL OR (created_at, id) < ($5::timestamptz, $6::text))
         ORDER BY created_at DESC, id DESC
         LIMIT $7`,

  /** Row lock for every change that appends to the archive or moves the state (one writer at a time). */
  lock: `SELECT ${RECORD}, lease_owner, (lease_expires_at < now()) AS lease_expired, (checkpoint IS NOT NULL) AS resumable,
                resumed_at_chunk, resume_streak
         FROM video_tasks WHERE id = $1 FOR UPDATE`,
  lockInProject: `SELECT ${RECORD} FROM video_tasks WHERE id = $1 AND project_id = $2 FOR UPDATE`,

  setCancelling: `UPDATE video_tasks SET status = 'cancelling' WHERE id = $1`,

  // The whole claim in one statement, nobody else claiming it right now: a task waiting to resume (its
  // worker died; it keeps its running state and its checkpoint) before the oldest pending one, since a live
  // camera's gap grows while it waits.
  claim: `UPDATE video_tasks
          SET status = CASE WHEN status = 'pending' THEN 'running' ELSE status END, attempts = attempts + 1, lease_owner = $1,
              lease_expires_at = now() + $2::int * interval '1 millisecond',
              started_at = coalesce(started_at, now())
          WHERE id = (SELECT id FROM video_tasks
                      WHERE status = 'pending' OR (lease_owner IS NULL AND status IN ('running', 'streaming'))
                      ORDER BY status = 'pending', created_at, id FOR UPDATE SKIP LOCKED LIMIT 1)
          RETURNING id, project_id, key_id, model, job, attempts, max_attempts, resumes, chunk_count,
                    CASE WHEN chunk_count > 0 THEN checkpoint END AS checkpoint, progress`,

  /** Renews the lease while we still own it; no row means the reaper took the task away. */
  heartbeat: `UPDATE video_tasks SET lease_expires_at = now() + $3::int * interval '1 millisecond'
              WHERE id = $1 AND lease_owner = $2 RETURNING status, chunk_count, stream_bytes`,

  /** After an append of a frame chunk (under the row lock). */
  appendedFrame: `UPDATE video_tasks SET ${FRAME_APPENDED} WHERE id = $1`,
  /** After an append of a heartbeat comment. */
  appendedBytes: `UPDATE video_tasks SET stream_bytes = stream_bytes + $2 WHERE id = $1`,

  /** The terminal write (under the row lock, with the terminal chunk appended in the same transaction). */
  finish: `UPDATE video_tasks
           SET status = $2, finished_at = now(), lease_owner = NULL, lease_expires_at = NULL,
               stream_bytes = stream_bytes + $3, usage = $4::jsonb, error = $5::jsonb, results = $6::jsonb,
               progress = coalesce($7::jsonb, progress)
           WHERE id = $1`,

  /**
   * A live task whose worker died goes back to the queue with its checkpoint (reaper.ts): no owner, its state
   * unchanged (running/streaming for readers), one resume more.
   */
  awaitResume: `UPDATE video_tasks SET lease_owner = NULL, lease_expires_at = NULL, resumes = resumes + 1,
                  resume_streak = $2::int, resumed_at_chunk = chunk_count WHERE id = $1 RETURNING resumes`,

  /** A worker shutting down hands a live task with a checkpoint on (stream-archive.ts): as awaitResume, not counted. */
  handOver: `UPDATE video_tasks SET lease_owner = NULL, lease_expires_at = NULL WHERE id = $1`,

  /** Gives a task back to the queue (failover exhausted its attempt, or its worker died before chunk 1). */
  release: `UPDATE video_tasks SET status = 'pending', lease_owner = NULL, lease_expires_at = NULL WHERE id = $1`,

  maxAttempts: `SELECT max_attempts FROM video_tasks WHERE id = $1`,

  expiredLeases: `SELECT id FROM video_tasks WHERE lease_owner IS NOT NULL AND lease_expires_at < now()
                  ORDER BY lease_expires_at LIMIT $1`,

  notify: `SELECT pg_notify($1, $2)`,
};
