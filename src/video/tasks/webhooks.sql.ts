// Statements of video task webhooks (webhooks.ts): setting a task's webhook, queuing a delivery when a task
// reaches its terminal state, claiming due deliveries (FOR UPDATE SKIP LOCKED, so one node sends each
// attempt), recording attempts, and listing a task's deliveries. Times use the database clock.
import { TERMINAL_STATES } from '../task-contract.js';

const TERMINAL = TERMINAL_STATES.map((st) => `'${st}'`).join(', ');
/** A task with a webhook that reached a terminal state and has no delivery queued yet. */
const UNQUEUED_TASK = `webhook_pending AND status IN (${TERMINAL})`;
/** A delivery due for an attempt. */
const DUE_DELIVERY = `status = 'pending' AND next_attempt_at <= clock_timestamp()`;

export const sql = {
  setWebhook: `UPDATE video_tasks SET webhook_url = $2, webhook_secret = $3, webhook_pending = true WHERE id = $1`,

  /**
   * Whether a pass has anything to do: a task to queue a delivery for, a delivery due. One statement, so an idle
   * pass costs one instead of the queuing's transaction and the claim (each planned anew on the embedded
   * database, on the thread that answers requests).
   */
  anything: `SELECT EXISTS (SELECT 1 FROM video_tasks WHERE ${UNQUEUED_TASK}) AS tasks,
                    EXISTS (SELECT 1 FROM video_webhook_deliveries WHERE ${DUE_DELIVERY}) AS deliveries`,

  /** Tasks with a webhook that reached a terminal state and have no delivery queued yet. */
  dueTasks: `SELECT id, project_id, status, model, created_at, started_at, finished_at, progress, usage, error
             FROM video_tasks WHERE ${UNQUEUED_TASK}
             ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`,
  enqueue: `INSERT INTO video_webhook_deliveries (id, task_id, event, payload) VALUES ($1, $2, $3, $4)
            ON CONFLICT (task_id, event) DO NOTHING`,
  markQueued: `UPDATE video_tasks SET webhook_pending = false WHERE id = $1`,

  /** Due deliveries, held for $2 ms (another node takes one over only if this one died mid-attempt). */
  claim: `UPDATE video_webhook_deliveries d SET next_attempt_at = clock_timestamp() + $2::bigint * interval '1 millisecond'
          FROM video_tasks t
          WHERE t.id = d.task_id AND d.id IN (
            SELECT id FROM video_webhook_deliveries
            WHERE ${DUE_DELIVERY}
            ORDER BY next_attempt_at LIMIT $1 FOR UPDATE SKIP LOCKED)
          RETURNING d.id, d.task_id, d.payload, d.attempts, d.created_at, t.webhook_url, t.webhook_secret, t.job->>'traceparent' AS traceparent`,
  delivered: `UPDATE video_webhook_deliveries SET status = 'delivered', attempts = attempts + 1,
                last_attempt_at = clock_timestamp(), delivered_at = clock_timestamp(), last_status_code = $2, last_error = NULL
              WHERE id = $1`,
  /** A failed attempt: retried after $4 ms unless that is past the delivery's deadline ($5 ms after it was queued). */
  attemptFailed: `UPDATE video_webhook_deliveries SET attempts = attempts + 1, last_attempt_at = clock_timestamp(),
                    last_status_code = $2, last_error = $3,
                    next_attempt_at = clock_timestamp() + $4::bigint * interval '1 millisecond',
                    status = CASE WHEN clock_timestamp() + $4::bigint * interval '1 millisecond'
                                       > created_at + $5::bigint * interval '1 millisecond' THEN 'failed' ELSE 'pending' END
                  WHERE id = $1`,

  /** An attempt cut short by shutdown: due again at once (for this or another node). */
  release: `UPDATE video_webhook_deliveries SET next_attempt_at = clock_timestamp() WHERE id = $1 AND status = 'pending'`,

  forTask: `SELECT id, event, status, attempts, last_status_code, last_error, next_attempt_at, last_attempt_at, created_at, delivered_at
            FROM video_webhook_deliveries WHERE task_id = $1 ORDER BY created_at, id`,
};
