// The video tasks repository: insert a checked task (enqueue), read, list with a keyset cursor, cancel.
// Checking the request and staging its input is the use case's (tasks.service.ts, task-input.ts).
// Everything is project-scoped: another project's id is a 404.
import { errors } from '../../base/errors.js';
import type { Services } from '../../services/services.js';
import type { Queryable, Row } from '../../store/db.js';
import { isoTime } from '../../store/timestamps.js';
import type { TaskJob } from '../task-contract.js';
import { TASK_STATES, type TaskState } from '../task-contract.js';
import { sql } from '../tasks.sql.js';
import { sql as streamSql } from '../stream/stream.sql.js';
import { HEARTBEAT_EVENT } from '../stream/chunks.js';
import type { StreamArchive } from '../stream/stream-archive.js';
import type { StreamHub } from '../stream/stream-hub.js';
import { sql as webhookSql } from './webhooks.sql.js';

/** Claims of one task (first run + re-queues after a worker died before its first chunk). */
export const MAX_ATTEMPTS = 3;

/** A task ready to be stored: its id, owner, the job the worker runs and the request as the API echoes it. */
export interface NewTask {
  id: string;
  projectId: string;
  keyId: string | null;
  job: TaskJob;
  /** The request body as `?include=request` shows it: a staged upload's data elided, the webhook's secret left out. */
  echo: unknown;
}

export interface ListFilters {
  status?: string;
  from?: string;
  to?: string;
  cursor?: string;
  limit?: string;
}

export function streamUrl(id: string): string {
  return `/v1/video/tasks/${id}/stream`;
}

/** The task record (docs/video.md, "The task record"). */
export function taskRecord(r: Row, withRequest = false): Record<string, unknown> {
  const p = (r.progress as Record<string, number | null> | null) ?? null;
  return {
    id: r.id,
    object: 'video.task',
    status: r.status,
    created_at: isoTime(r.created_at),
    started_at: isoTime(r.started_at),
    finished_at: isoTime(r.finished_at),
    model: r.model,
    stream_url: streamUrl(String(r.id)),
    progress: {
      frame_index: p ? (p.frame_index ?? null) : null,
      decoded_frames: p?.decoded_frames ?? 0,
      dropped_frames: p?.dropped_frames ?? 0,
      total_frames: p?.total_frames ?? null,
      // The task's real rate (a camera that cannot be kept up with shows less than it asked for).
      processed_frames: Number(r.chunk_count ?? 0),
      processed_fps: p?.elapsed_ms
        ? Math.round((Number(r.chunk_count ?? 0) / (p.elapsed_ms / 1000)) * 100) / 100
        : null,
    },
    usage: r.usage ?? null,
    error: r.error ?? null,
    attempts: Number(r.attempts ?? 0),
    resumes: Number(r.resumes ?? 0),
    ...(withRequest ? { request: r.request } : {}),
  };
}

function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify([createdAt, id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(v) &&
      v.length === 2 &&
      typeof v[0] === 'string' &&
      typeof v[1] === 'string' &&
      v[1].startsWith('vt_') &&
      !Number.isNaN(Date.parse(v[0]))
    ) {
      return [v[0], v[1]];
    }
  } catch {
    /* falls through */
  }
  throw errors.invalidCursor();
}

/** ISO 8601 or unix seconds -> ISO string, or a 400 naming the parameter. */
function parseTime(param: 'from' | 'to', v: string): string {
  if (/^\d+(\.\d+)?$/.test(v)) return new Date(Number(v) * 1000).toISOString();
  const ms = /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms))
    throw errors.invalidParam(
      param,
      `Expected an ISO 8601 time or unix seconds for ${param} but received ${JSON.stringify(v)}`,
    );
  return new Date(ms).toISOString();
}

export class TaskStore {
  constructor(
    private readonly s: Services,
    private readonly archive: StreamArchive,
    private readonly hub: StreamHub,
  ) {}

  /**
   * Inserts a checked task (tasks.service.ts checked it and staged its input: task-input.ts) with its first
   * archive bytes, and wakes idle workers. `webhook` is stored beside the task, never in its request.
   */
  async insert(
    task: NewTask,
    webhook?: { url: string; secret: string },
    alongside?: (q: Queryable) => Promise<void>,
  ): Promise<Record<string, unknown>> {
    const { id, projectId, keyId, job, echo } = task;
    const body = job.request;
    const model = body.model ?? body.steps.map((st) => st.model).join('+');
    // Every archive opens with a heartbeat comment: uWS sends response headers only with the first body
    // bytes, so a subscriber of a still-pending task gets its headers (and X-Stream-Offset) at once.
    const opening = Buffer.from(HEARTBEAT_EVENT);
    const row = await this.s.db.tx(async (q) => {
      const [r] = await q.query(sql.insert, [
        id,
        projectId,
        keyId,
        model,
        JSON.stringify(echo),
        JSON.stringify(job),
        MAX_ATTEMPTS,
        opening.length,
      ]);
      await q.query(streamSql.append, [id, 0, opening]);
      if (webhook) await q.query(webhookSql.setWebhook, [id, webhook.url, webhook.secret]);
      await alongside?.(q);
      return r;
    });
    await this.hub.announceNewTask();
    return taskRecord(row!);
  }

  async get(projectId: string, id: string, withRequest = false): Promise<Record<string, unknown>> {
    const [row] = await this.s.db.query(withRequest ? sql.byIdWithRequest : sql.byId, [id, projectId]);
    if (!row) throw errors.notFound('video task', id);
    return taskRecord(row, withRequest);
  }

  async state(projectId: string, id: string): Promise<{ status: TaskState; streamBytes: number }> {
    const [row] = await this.s.db.query(sql.byId, [id, projectId]);
    if (!row) throw errors.notFound('video task', id);
    return { status: row.status as TaskState, streamBytes: Number(row.stream_bytes) };
  }

  async results(projectId: string, id: string): Promise<unknown> {
    const [row] = await this.s.db.query(sql.results, [id, projectId]);
    if (!row) throw errors.notFound('video task', id);
    if (row.status !== 'succeeded' || !row.results) {
      throw errors.resultsNotReady(id, String(row.status));
    }
    return row.results;
  }

  async list(projectId: string, f: ListFilters): Promise<Record<string, unknown>> {
    let status: string | null = null;
    if (f.status !== undefined) {
      const states = f.status
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean);
      const bad = states.find((x) => !(TASK_STATES as readonly string[]).includes(x));
      if (bad !== undefined || states.length === 0) {
        throw errors.invalidParam(
          'status',
          `Expected one of ${TASK_STATES.join(', ')} (or a comma list) for status but received ${JSON.stringify(bad ?? f.status)}`,
        );
      }
      status = states.join(',');
    }
    const from = f.from !== undefined ? parseTime('from', f.from) : null;
    const to = f.to !== undefined ? parseTime('to', f.to) : null;
    let limit = 20;
    if (f.limit !== undefined) {
      if (!/^\d+$/.test(f.limit) || Number(f.limit) < 1 || Number(f.limit) > 100) {
        throw errors.invalidParam(
          'limit',
          `Expected an integer between 1 and 100 for limit but received ${JSON.stringify(f.limit)}`,
        );
      }
      limit = Number(f.limit);
    }
    const [cAt, cId] = f.cursor !== undefined ? decodeCursor(f.cursor) : [null, null];
    const rows = await this.s.db.query(sql.list, [projectId, status, from, to, cAt, cId, limit + 1]);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    const hasMore = rows.length > limit;
    return {
      object: 'list',
      data: page.map((r) => taskRecord(r)),
      has_more: hasMore,
      next_cursor: hasMore && last ? encodeCursor(isoTime(last.created_at)!, String(last.id)) : null,
    };
  }

  /**
   * Pending: cancelled at once (with a terminal `cancelled` chunk so the stream is complete). Running or
   * streaming: `cancelling`; the worker finishes it at its next chunk boundary. Running or streaming with no
   * worker (its worker died and it waits for another to continue it): cancelled at once, like a pending one.
   * Cancelled/cancelling: the same answer again. Succeeded/failed: 409.
   */
  async cancel(projectId: string, id: string): Promise<Record<string, unknown>> {
    const [own] = await this.s.db.query(sql.byId, [id, projectId]);
    if (!own) throw errors.notFound('video task', id);
    await this.archive.withTask(id, async (task, q, append) => {
      if (task.status === 'succeeded' || task.status === 'failed') {
        throw errors.taskFinished(id, task.status);
      }
      if (task.status === 'pending') {
        await this.archive.finishIn(q, task, append, {
          status: 'cancelled',
          reason: 'cancelled',
          usage: { processed_frames: 0, processing_time_ms: 0, decoded_frames: 0, dropped_frames: 0 },
        });
      } else if ((task.status === 'running' || task.status === 'streaming') && task.leaseOwner === null) {
        const info = task.lastInfo;
        await this.archive.finishIn(q, task, append, {
          status: 'cancelled',
          reason: 'cancelled',
          usage: {
            processed_frames: task.chunkCount,
            processing_time_ms: info.elapsed_ms,
            decoded_frames: info.decoded_frames,
            dropped_frames: info.dropped_frames,
          },
        });
      } else if (task.status === 'running' || task.status === 'streaming') {
        await q.query(sql.setCancelling, [id]);
        await this.hub.notifyIn(q, id);
      }
    });
    this.hub.publish(id);
    return this.get(projectId, id);
  }
}
