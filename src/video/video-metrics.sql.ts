// Statements the metrics endpoint runs at scrape time: tasks by non-terminal state and the webhook outbox.
import { TERMINAL_STATES } from './task-contract.js';

const TERMINAL = TERMINAL_STATES.map((st) => `'${st}'`).join(', ');

export const sql = {
  tasksByState: `SELECT status, count(*)::int AS n FROM video_tasks WHERE status NOT IN (${TERMINAL}) GROUP BY status`,
  webhookBacklog: `SELECT (SELECT count(*) FROM video_webhook_deliveries WHERE status = 'pending')::int
                        + (SELECT count(*) FROM video_tasks WHERE webhook_pending AND status IN (${TERMINAL}))::int AS n`,
};
