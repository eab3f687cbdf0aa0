// The stream archive: the exact byte sequence every subscriber of a task receives, stored as rows keyed by
// byte offset. Every append is one transaction that locks the task row, writes the bytes at the current end,
// moves the task's counters/state and notifies subscribers, so a reader never sees a gap and the state and
// the bytes always agree (a terminal state implies its terminal chunk is stored).
import type { Services } from '../../services.js';
import type { Queryable, Row } from '../../store/db.js';
import type { FrameOutput, StreamInfo } from '../worker/provider.js';
import { sql as tsql } from '../tasks/tasks.sql.js';
import { sql } from './stream.sql.js';
import { EMPTY_STREAM_INFO, HEARTBEAT_EVENT, frameEvent, terminalEvents, type FinishReason, type TerminalUsage } from './chunks.js';
import type { StreamHub } from './stream-hub.js';
import type { TaskState } from '../schemas.js';

export interface LockedTask {
  id: string;
  status: TaskState;
  model: string;
  streamBytes: number;
  chunkCount: number;
  attempts: number;
  leaseOwner: string | null;
  leaseExpired: boolean;
  /** The last frame's stream_info (progress column). */
  lastInfo: StreamInfo;
  startedAt: Date | null;
}

export interface Finish {
  status: 'succeeded' | 'failed' | 'cancelled';
  reason: FinishReason;
  info?: StreamInfo;
  usage: TerminalUsage;
  error?: { code: string; message: string };
  results?: unknown;
}

export type AppendOutcome = 'appended' | 'cancelling' | 'lost';

const toBuffer = (v: unknown): Buffer => (Buffer.isBuffer(v) ? v : Buffer.from((v as Uint8Array).buffer, (v as Uint8Array).byteOffset, (v as Uint8Array).byteLength));

function locked(r: Row): LockedTask {
  return {
    id: String(r.id), status: r.status as TaskState, model: String(r.model),
    streamBytes: Number(r.stream_bytes), chunkCount: Number(r.chunk_count), attempts: Number(r.attempts),
    leaseOwner: (r.lease_owner as string | null) ?? null, leaseExpired: r.lease_expired === true,
    lastInfo: { ...EMPTY_STREAM_INFO, ...((r.progress as Partial<StreamInfo> | null) ?? {}) },
    startedAt: r.started_at ? new Date(r.started_at as string) : null,
  };
}

export class StreamArchive {
  constructor(private readonly s: Services, private readonly hub: StreamHub) {}

  /**
   * Runs fn with the task row locked; fn's appended bytes land at the current end. Subscribers are told
   * after the commit (and other processes by NOTIFY at commit).
   */
  async withTask<T>(taskId: string, fn: (task: LockedTask, q: Queryable, append: (bytes: string) => Promise<number>) => Promise<T>): Promise<T | null> {
    let touched = false;
    const out = await this.s.db.tx(async (q) => {
      const rows = await q.query(tsql.lock, [taskId]);
      if (!rows[0]) return null;
      const task = locked(rows[0]);
      let end = task.streamBytes;
      const append = async (text: string) => {
        const bytes = Buffer.from(text, 'utf8');
        await q.query(sql.append, [taskId, end, bytes]);
        end += bytes.length;
        if (!touched) { touched = true; await this.hub.notifyIn(q, taskId); }
        return bytes.length;
      };
      return fn(task, q, append);
    });
    if (touched) this.hub.publish(taskId);
    return out;
  }

  /** One frame chunk, unless the task was cancelled (the caller then finishes it) or taken from this worker. */
  appendFrame(taskId: string, owner: string, frame: FrameOutput, leaseMs: number): Promise<AppendOutcome> {
    return this.withTask(taskId, async (task, q, append) => {
      if (task.leaseOwner !== owner) return 'lost' as const;
      if (task.status === 'cancelling') return 'cancelling' as const;
      if (task.status !== 'running' && task.status !== 'streaming') return 'lost' as const;
      const n = await append(frameEvent(taskId, task.chunkCount, frame, task.model));
      await q.query(tsql.appendedFrame, [taskId, n, JSON.stringify(frame.stream_info), leaseMs]);
      return 'appended' as const;
    }).then((r) => r ?? 'lost');
  }

  /** A heartbeat comment for idle subscribers, while this worker still owns a live task. */
  appendHeartbeat(taskId: string, owner: string): Promise<boolean> {
    return this.withTask(taskId, async (task, q, append) => {
      if (task.leaseOwner !== owner || (task.status !== 'running' && task.status !== 'streaming')) return false;
      const n = await append(HEARTBEAT_EVENT);
      await q.query(tsql.appendedBytes, [taskId, n]);
      return true;
    }).then((r) => r ?? false);
  }

  /**
   * The terminal chunk + [DONE] and the terminal state, in one transaction. A cancel requested meanwhile wins
   * over success or failure (the terminal chunk is the chunk boundary that honours it).
   */
  async finishIn(q: Queryable, task: LockedTask, append: (bytes: string) => Promise<number>, f: Finish): Promise<TaskState> {
    const cancel = task.status === 'cancelling' && f.status !== 'cancelled';
    const status = cancel ? 'cancelled' : f.status;
    const reason = cancel ? 'cancelled' : f.reason;
    const info = f.info ?? task.lastInfo;
    const error = cancel ? undefined : f.error;
    const n = await append(terminalEvents(task.id, task.chunkCount, reason, info, f.usage, task.model, error));
    await q.query(tsql.finish, [task.id, status, n, JSON.stringify({ processed_frames: f.usage.processed_frames, processing_time_ms: f.usage.processing_time_ms }),
      error ? JSON.stringify(error) : null, status === 'succeeded' && f.results ? JSON.stringify(f.results) : null,
      // A task that never produced a frame keeps progress.frame_index null.
      f.info || task.chunkCount > 0 ? JSON.stringify(info) : null]);
    return status;
  }

  /** Finishes a task this worker owns; null when it was taken away (lease lost) or is already terminal. */
  finishOwned(taskId: string, owner: string, f: Finish): Promise<TaskState | null> {
    return this.withTask(taskId, async (task, q, append) => {
      if (task.leaseOwner !== owner) return null;
      return this.finishIn(q, task, append, f);
    });
  }

  /** Gives a running task without chunks back to the queue; 'cancelling' when a cancel must be finished instead. */
  releaseOwned(taskId: string, owner: string): Promise<'released' | 'cancelling' | 'gone'> {
    return this.withTask(taskId, async (task, q) => {
      if (task.leaseOwner !== owner) return 'gone' as const;
      if (task.status === 'cancelling') return 'cancelling' as const;
      if (task.status !== 'running' || task.chunkCount > 0) return 'gone' as const;
      await q.query(tsql.release, [taskId]);
      return 'released' as const;
    }).then((r) => r ?? 'gone');
  }

  /** Reads the archive from byte `from`: at most `maxRows` rows, concatenated (the first row sliced to start at `from`). */
  async read(taskId: string, from: number, maxRows = 1024): Promise<{ bytes: Buffer; rows: number }> {
    const rows = await this.s.db.query(sql.readFrom, [taskId, from, maxRows]);
    const parts: Buffer[] = [];
    for (const r of rows) {
      const start = Number(r.byte_offset);
      const b = toBuffer(r.bytes);
      if (start + b.length <= from) continue;
      parts.push(start < from ? b.subarray(from - start) : b);
    }
    return { bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts), rows: rows.length };
  }
}
