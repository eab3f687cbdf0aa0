// Webhooks of video tasks: a task created with `webhook: {url, secret?}` gets one POST per terminal state
// (succeeded, failed, cancelled) carrying its task record, signed the Standard Webhooks way so receivers can
// use any of that scheme's libraries: headers `webhook-id` (the delivery id, the same on every retry),
// `webhook-timestamp` (unix seconds of the attempt) and `webhook-signature: v1,<base64 HMAC-SHA256 of
// "<id>.<timestamp>.<body>">`, keyed by the base64 part of the `whsec_` secret.
//
// Everything lives in the database, so deliveries survive restarts and any node may send them: a pass
// first queues a delivery row for every task with a webhook that reached a terminal state (the task row is
// flagged until then, whichever path finished it: worker, cancel, reaper), then claims due rows with
// FOR UPDATE SKIP LOCKED and sends them. A non-2xx answer, a network error or a URL the URL policy refuses
// (checked at every attempt, as DNS may change) is retried with exponential backoff until 24 hours after
// the delivery was queued; then the delivery is marked failed.
import { createHmac, randomBytes } from 'node:crypto';
import { errors } from '../../base/errors.js';
import { newId } from '../../base/ids.js';
import { checkUrl } from '../../media/url-policy.js';
import type { Services } from '../../services/services.js';
import type { Row } from '../../store/db.js';
import { isoTime } from '../../store/timestamps.js';
import { taskRecord } from './task-store.js';
import { sql } from './webhooks.sql.js';
import { countWebhookAttempt } from '../../metrics/video.js';
import { callTraceparent } from '../../tracing/traceparent.js';

/** How long a delivery is retried after it was queued. */
export const WEBHOOK_RETRY_WINDOW_MS = 24 * 3600_000;
/** The longest pause between two attempts. */
const MAX_BACKOFF_MS = 3600_000;
/** One attempt's time limit (connect, send, answer). */
const ATTEMPT_TIMEOUT_MS = 15_000;
/** A claimed delivery is not taken by another node for this long (it is normally done much sooner). */
const CLAIM_MS = 2 * ATTEMPT_TIMEOUT_MS;
const BATCH = 16;
const SECRET_PREFIX = 'whsec_';

export interface WebhookSettings {
  /** How often a process looks for tasks to notify and deliveries that are due. */
  pollMs: number;
  /** The pause after the first failed attempt; it doubles with each further one (capped at an hour). */
  retryMs: number;
}

/** A new signing secret: `whsec_` + base64 of 24 random bytes. */
export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

/** A client's secret: `whsec_` + base64 of 16 to 64 bytes; anything else is a 400 naming webhook.secret. */
export function checkWebhookSecret(secret: string): string {
  const b64 = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : '';
  const n = /^[A-Za-z0-9+/]+={0,2}$/.test(b64) && b64.length % 4 === 0 ? Buffer.from(b64, 'base64').length : 0;
  if (n < 16 || n > 64)
    throw errors.invalidParam(
      'webhook.secret',
      'Expected webhook.secret to be "whsec_" followed by the base64 of 16 to 64 bytes',
    );
  return secret;
}

/** An http(s) URL (the URL policy is applied when delivering); anything else is a 400 naming webhook.url. */
export function checkWebhookUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw errors.invalidParam(
      'webhook.url',
      `Expected webhook.url to be an http(s) URL but received ${JSON.stringify(url.slice(0, 100))}`,
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw errors.invalidParam(
      'webhook.url',
      `Expected webhook.url to be an http(s) URL but received the scheme ${u.protocol}`,
    );
  return url;
}

/** The `webhook-signature` value for one attempt. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice(SECRET_PREFIX.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** Pause after `attempts` failed attempts. */
export function backoffMs(retryMs: number, attempts: number): number {
  return Math.min(MAX_BACKOFF_MS, retryMs * 2 ** Math.max(0, attempts - 1));
}

/** A task's deliveries as `include=webhook_deliveries` shows them. */
export async function deliveriesOf(s: Services, taskId: string): Promise<Array<Record<string, unknown>>> {
  const rows = await s.db.query(sql.forTask, [taskId]);
  return rows.map((r) => ({
    id: r.id,
    event: r.event,
    status: r.status,
    attempts: Number(r.attempts),
    last_status_code: r.last_status_code === null ? null : Number(r.last_status_code),
    last_error: r.last_error ?? null,
    created_at: isoTime(r.created_at),
    last_attempt_at: isoTime(r.last_attempt_at),
    delivered_at: isoTime(r.delivered_at),
    next_attempt_at: r.status === 'pending' ? isoTime(r.next_attempt_at) : null,
  }));
}

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private readonly inflight = new AbortController();

  constructor(
    private readonly s: Services,
    private readonly settings: WebhookSettings,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.inflight.abort();
    await this.running;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass()
        .catch((e) => this.s.log.warn({ err: e }, 'webhook pass failed'))
        .finally(() => {
          this.running = null;
          this.schedule(this.settings.pollMs);
        });
    }, ms);
    this.timer.unref?.();
  }

  /** One pass: queue deliveries for newly finished tasks, then send what is due. */
  async pass(): Promise<void> {
    const [todo] = await this.s.db.query(sql.anything);
    if (!todo?.tasks && !todo?.deliveries) return;
    if (todo.tasks) await this.queueFinished();
    for (;;) {
      if (this.stopped) return;
      const due = await this.s.db.query(sql.claim, [BATCH, CLAIM_MS]);
      if (due.length === 0) return;
      await Promise.all(due.map((d) => this.attempt(d)));
    }
  }

  private async queueFinished(): Promise<void> {
    for (;;) {
      const n = await this.s.db.tx(async (q) => {
        const tasks = await q.query(sql.dueTasks, [BATCH]);
        for (const t of tasks) {
          const event = `video.task.${String(t.status)}`;
          const payload = JSON.stringify({
            type: event,
            timestamp: isoTime(t.finished_at) ?? new Date().toISOString(),
            data: taskRecord(t),
          });
          await q.query(sql.enqueue, [newId('msg'), t.id, event, payload]);
          await q.query(sql.markQueued, [t.id]);
        }
        return tasks.length;
      });
      if (n < BATCH) return;
    }
  }

  private async attempt(d: Row): Promise<void> {
    const id = String(d.id);
    const url = String(d.webhook_url);
    const body = String(d.payload);
    const attempts = Number(d.attempts) + 1;
    let status: number | null = null;
    let error: string | null = null;
    try {
      const verdict = await checkUrl(url, this.s.config.urlPolicy);
      if (!verdict.allowed) {
        error = `url_not_allowed: ${verdict.detail}`;
      } else {
        const ts = Math.floor(Date.now() / 1000);
        const res = await fetch(url, {
          method: 'POST',
          body,
          redirect: 'manual',
          headers: {
            'content-type': 'application/json',
            'user-agent': `sightflow/${this.s.version}`,
            'webhook-id': id,
            'webhook-timestamp': String(ts),
            'webhook-signature': signWebhook(String(d.webhook_secret), id, ts, body),
            ...callTraceparent(d.traceparent as string | null),
          },
          signal: AbortSignal.any([this.inflight.signal, AbortSignal.timeout(ATTEMPT_TIMEOUT_MS)]),
        });
        status = res.status;
        await res.body?.cancel().catch(() => {});
        if (status < 200 || status >= 300) error = `HTTP ${status}`;
      }
    } catch (e) {
      error = (e as Error).message || String(e);
    }
    if (this.stopped && error !== null && status === null) {
      // Cut short by stop(): not an attempt the receiver refused; due again at once.
      await this.s.db.query(sql.release, [id]).catch(() => {});
      return;
    }
    countWebhookAttempt(error === null ? 'delivered' : status === null ? 'error' : 'refused');
    if (error === null) await this.s.db.query(sql.delivered, [id, status]);
    else {
      await this.s.db.query(sql.attemptFailed, [
        id,
        status,
        error.slice(0, 500),
        backoffMs(this.settings.retryMs, attempts),
        WEBHOOK_RETRY_WINDOW_MS,
      ]);
      this.s.log.info({ delivery: id, taskId: d.task_id, attempts, error }, 'webhook attempt failed; will retry');
    }
  }
}
