// Statements of the analytics step (task-analytics.ts, analytics.service.ts): one row per task with an
// analytics step (its rules, their version, the totals so far, the frame size that relative rules need and
// the webhook event filter), the task facts the endpoints check, and analytics events queued as webhook
// deliveries beside the terminal ones; the compact track log (track-log.ts) in blocks, and how many frames
// it holds once the task is over.

export const sql = {
  get: `SELECT task_id, parameters, version, summary, frame_width, frame_height, webhook_events FROM video_task_analytics WHERE task_id = $1`,
  /** Created with the task (its step's rules, version 1) or by the first PUT; never replaces a row. */
  create: `INSERT INTO video_task_analytics (task_id, parameters, version, webhook_events) VALUES ($1, $2, 1, $3)
           ON CONFLICT (task_id) DO NOTHING`,
  lockForChange: `SELECT version FROM video_task_analytics WHERE task_id = $1 FOR UPDATE`,
  setRules: `UPDATE video_task_analytics SET parameters = $2, version = $3, updated_at = clock_timestamp() WHERE task_id = $1`,
  saveSummary: `UPDATE video_task_analytics SET summary = $2, frame_width = COALESCE($3, frame_width), frame_height = COALESCE($4, frame_height),
                  updated_at = clock_timestamp() WHERE task_id = $1`,
  version: `SELECT version, parameters FROM video_task_analytics WHERE task_id = $1`,
  /** The task as the endpoints need it: state and the worker's request (its steps), project-scoped. */
  task: `SELECT status, job FROM video_tasks WHERE id = $1 AND project_id = $2`,
  hasWebhook: `SELECT webhook_url IS NOT NULL AS has FROM video_tasks WHERE id = $1`,
  appendTracks: `INSERT INTO video_task_tracks (task_id, seq, frames, classes, bytes) VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (task_id, seq) DO NOTHING`,
  /** A worker starting the task starts its log afresh. */
  clearTracks: `WITH gone AS (DELETE FROM video_task_tracks WHERE task_id = $1)
                UPDATE video_task_analytics SET track_log_frames = NULL WHERE task_id = $1`,
  setTrackLogFrames: `UPDATE video_task_analytics SET track_log_frames = $2 WHERE task_id = $1`,
  /** The log's promised frame count beside what its blocks hold (a reader checks both before trusting it). */
  trackLog: `SELECT a.track_log_frames, t.blocks, t.frames, t.last_seq FROM video_task_analytics a,
               LATERAL (SELECT count(*) AS blocks, COALESCE(sum(frames), 0) AS frames, max(seq) AS last_seq FROM video_task_tracks WHERE task_id = $1) t
             WHERE a.task_id = $1`,
  /** Blocks from seq $2 on, in order, at most $3 (the recount reads a few at a time). */
  readTracks: `SELECT seq, frames, classes, bytes FROM video_task_tracks WHERE task_id = $1 AND seq >= $2 ORDER BY seq LIMIT $3`,
  enqueueEvent: `INSERT INTO video_webhook_deliveries (id, task_id, event, payload) VALUES ($1, $2, $3, $4)
                 ON CONFLICT DO NOTHING`,
};
