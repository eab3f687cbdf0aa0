/** The statements of bench/frame-append-cost.ts beside the archive's own (src/video/stream/stream.sql.ts). */
export const sql = {
  project: 'INSERT INTO projects (id, name) VALUES ($1, $2)',
  task: `INSERT INTO video_tasks (id, project_id, status, model, request, job, max_attempts, lease_owner,
           lease_expires_at, stream_bytes, started_at)
         VALUES ($1, $2, 'streaming', 'detect', '{}', '{}', 3, $3, now() + interval '30 seconds', 0, now())`,
};
