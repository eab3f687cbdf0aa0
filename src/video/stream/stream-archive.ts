// The stream archive: the exact byte sequence every subscriber of a task receives, stored as rows keyed by
// byte offset. Every append is one transaction that locks the task row, writes the bytes at the current end,
// moves the task's counters/state and notifies subscribers, so a reader never sees a gap and the state and
// the bytes always agree (a terminal state implies its terminal chunk is stored).
import type { Services } from '../../services/services.js';
import type { Queryable, Row } from '../../store/db.js';
import type { FrameOutput, StreamInfo, TaskCheckpoint } from '../task-contract.js';
import { sql as tsql } from '../tasks.sql.js';
import { sql } from './stream.sql.js';
import {
  EMPTY_STREAM_INFO,
  HEARTBEAT_EVENT,
  frameEvent,
  terminalEvents,
  type FinishReason,
  type TerminalUsage,
} from './chunks.js';
import type { StreamHub } from './stream-hub.js';
import type { TaskState } from '../task-contract.js';

export interface LockedTask {
  id: string;
  status: TaskState;
  model: string;
  streamBytes: number;
  chunkCount: number;
  attempts: number;
  /** How often the task was handed to another worker after its worker died. */
  resumes: number;
  /** A checkpoint is stored: another worker may continue the task (docs/video.md, "When a worker dies"). */
  resumable: boolean;
  /** Takeovers in a row that found no chunk archived after the one before (reaper.ts). */
  resumeStreak: number;
  /** The chunk count at the last takeover; null before the first. */
  resumedAtChunk: number | null;
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
  /** Fields the task's steps add to the terminal chunk (analytics: the closing events and the summary). */
  chunk?: Record<string, unknown>;
}

export type AppendOutcome = 'appended' | 'cancelling' | 'lost';

/** appendFrame's checkpoint for a chunk that stores none of its own: the task keeps the one it has. */
export const KEEP_CHECKPOINT = 'keep';

const toBuffer = (v: unknown): Buffer =>
  Buffer.isBuffer(v)
    ? v
    : Buffer.from((v as Uint8Array).buffer, (v as Uint8Array).byteOffset, (v as Uint8Array).byteLength);

function locked(r: Row): LockedTask {
  return {
    id: String(r.id),
    status: r.status as TaskState,
    model: String(r.model),
    streamBytes: Number(r.stream_bytes),
    chunkCount: Number(r.chunk_count),
    attempts: Number(r.attempts),
    resumes: Number(r.resumes ?? 0),
    resumable: r.resumable === true,
    resumeStreak: Number(r.resume_streak ?? 0),
    resumedAtChunk: r.resumed_at_chunk === null || r.resumed_at_chunk === undefined ? null : Number(r.resumed_at_chunk),
    leaseOwner: (r.lease_owner as string | null) ?? null,
    leaseExpired: r.lease_expired === true,
    lastInfo: { ...EMPTY_STREAM_INFO, ...((r.progress as Partial<StreamInfo> | null) ?? {}) },
    startedAt: r.started_at ? new Date(r.started_at as string) : null,
  };
}

/** Archive rows read per query when a task's frames are replayed. */
const REPLAY_ROWS = 2048;

/** Where this process's last frame append left a task's archive: the next one-statement append's expectation. */
interface Tail {
  end: number;
  chunks: number;
  model: string;
}

/** A frame waiting to be appended at its task's tail. */
interface WaitingFrame {
  taskId: string;
  owner: string;
  /** The chunk's SSE event text, and its bytes. */
  text: string;
  bytes: Buffer;
  info: string;
  leaseMs: number;
  checkpoint: string | null;
  tail: Tail;
  resolve: (appended: boolean) => void;
  reject: (e: unknown) => void;
}

/** A frame's parameters in the order of the one-frame statement ($1-$9), the chunk as `chunk`. */
const frameParams = (f: WaitingFrame, chunk: Buffer | string): unknown[] => [
  f.taskId,
  f.bytes.length,
  f.info,
  f.leaseMs,
  f.checkpoint,
  f.tail.end,
  f.owner,
  chunk,
  f.tail.chunks,
];

/** At most this many frames a statement (a bound on its parameters' size). */
const MAX_FRAMES_A_STATEMENT = 64;

export class StreamArchive {
  /** Per task this process streams, its last frame append's tail; taken out while an append is in flight. */
  private readonly tails = new Map<string, Tail>();
  /**
   * Frame chunks appended without the row lock (alone or with other tasks' frames) and under it, and the
   * statements that carried several tasks' frames (tests read it).
   */
  readonly frameAppends = { oneStatement: 0, locked: 0, batches: 0 };
  /** Frames waiting for the statement in flight to end. */
  private readonly waiting: WaitingFrame[] = [];
  /** A statement of waiting frames is in flight or about to start. */
  private writing = false;
  /** Set while live frames wait for others before a statement starts. */
  private gatherTimer: NodeJS.Timeout | undefined;
  /** Live tasks this process appends to: once each has a frame waiting, the wait for company is over. */
  private readonly liveTasks = new Set<string>();
  /** How long a live frame waits for other cameras' frames when no statement is in flight. */
  private readonly gatherMs: number;

  constructor(
    private readonly s: Services,
    private readonly hub: StreamHub,
  ) {
    this.gatherMs = s.config.video.appendGatherMs;
  }

  /**
   * Runs fn with the task row locked; fn's appended bytes land at the current end. Subscribers are told
   * after the commit, with the appended bytes (and other processes by NOTIFY at commit, with the new end).
   */
  async withTask<T>(
    taskId: string,
    fn: (task: LockedTask, q: Queryable, append: (bytes: string) => Promise<number>) => Promise<T>,
  ): Promise<T | null> {
    let from = -1;
    let end = 0;
    const parts: Buffer[] = [];
    const out = await this.s.db.tx(async (q) => {
      const rows = await q.query(tsql.lock, [taskId]);
      if (!rows[0]) return null;
      const task = locked(rows[0]);
      end = task.streamBytes;
      const append = async (text: string) => {
        const bytes = Buffer.from(text, 'utf8');
        await q.query(sql.append, [taskId, end, bytes]);
        if (from < 0) from = end;
        parts.push(bytes);
        end += bytes.length;
        return bytes.length;
      };
      const r = await fn(task, q, append);
      if (parts.length > 0) await this.hub.notifyIn(q, taskId, end);
      return r;
    });
    if (parts.length > 0)
      this.hub.publish(taskId, { from, bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts) });
    return out;
  }

  /**
   * One frame chunk, unless the task was cancelled (the caller then finishes it) or taken from this worker.
   * A worker appends its task's frames one after another: after the first, each is one statement that
   * expects the row as the last append left it (sql.appendFrame), and only when the row moved since (a
   * heartbeat, a cancel, another owner) does it take the row lock. The one statement costs PGlite about half
   * the main thread's time of a transaction of four, and a live camera makes one a frame
   * (docs/capacity.md, "The embedded database's cost"). `checkpoint`: the task's checkpoint after this chunk,
   * stored by the same statement (null for a task that cannot resume; KEEP_CHECKPOINT leaves the stored one,
   * of an earlier chunk).
   */
  async appendFrame(
    taskId: string,
    owner: string,
    frame: FrameOutput,
    leaseMs: number,
    checkpoint: TaskCheckpoint | typeof KEEP_CHECKPOINT | null = null,
  ): Promise<AppendOutcome> {
    const tail = this.tails.get(taskId);
    this.tails.delete(taskId);
    // '' is what the statement reads as "keep" (tasks.sql.ts FRAME_APPENDED): no checkpoint is empty JSON.
    const cp = checkpoint === KEEP_CHECKPOINT ? '' : checkpoint ? JSON.stringify(checkpoint) : null;
    if (tail && (await this.appendAtTail(taskId, owner, frame, leaseMs, cp, tail))) return 'appended';
    let next: Tail | null = null;
    const r = await this.withTask(taskId, async (task, q, append) => {
      if (task.leaseOwner !== owner) return 'lost' as const;
      if (task.status === 'cancelling') return 'cancelling' as const;
      if (task.status !== 'running' && task.status !== 'streaming') return 'lost' as const;
      const n = await append(frameEvent(taskId, task.chunkCount, frame, task.model));
      await q.query(tsql.appendedFrame, [taskId, n, JSON.stringify(frame.stream_info), leaseMs, cp]);
      next = { end: task.streamBytes + n, chunks: task.chunkCount + 1, model: task.model };
      return 'appended' as const;
    });
    if (next) {
      this.tails.set(taskId, next);
      this.frameAppends.locked++;
    }
    return r ?? 'lost';
  }

  /** This process appends no more to the task (its worker ended): its tail is not kept. */
  forget(taskId: string): void {
    this.tails.delete(taskId);
    this.liveTasks.delete(taskId);
  }

  /**
   * The one-statement append at `tail`; false when the row is no longer as it says (nothing was written).
   * Frames of other tasks that arrive while a statement is in flight wait and go together in the next one
   * (appendFrames): a live camera makes an append a frame, and on the embedded database each statement is
   * main-thread time, most of it the statement's own, not its rows' (docs/capacity.md, "The embedded
   * database's cost"). A file's frame that finds the database idle goes at once, alone as before; a live
   * camera's waits for the other cameras' up to the gather time (SIGHTFLOW_VIDEO_APPEND_GATHER_MS).
   */
  private appendAtTail(
    taskId: string,
    owner: string,
    frame: FrameOutput,
    leaseMs: number,
    checkpoint: string | null,
    tail: Tail,
  ): Promise<boolean> {
    const text = frameEvent(taskId, tail.chunks, frame, tail.model);
    return new Promise<boolean>((resolve, reject) => {
      this.waiting.push({
        taskId,
        owner,
        text,
        bytes: Buffer.from(text, 'utf8'),
        info: JSON.stringify(frame.stream_info),
        leaseMs,
        checkpoint,
        tail,
        resolve,
        reject,
      });
      // A live camera's frame waits a little for other cameras' frames, until each live task has one waiting;
      // a file's frame does not (its task appends one frame after another as fast as it decodes, so a wait
      // would be its pace).
      const live = frame.stream_info.live === true;
      if (live) this.liveTasks.add(taskId);
      if (this.writing) return;
      if (live && this.gatherMs > 0 && this.waiting.length < this.liveTasks.size) {
        this.gatherTimer ??= setTimeout(() => this.startWriting(), this.gatherMs);
        return;
      }
      // Frames made in the same turn of the event loop (a batch of cameras' detections) go together.
      this.writing = true;
      setImmediate(() => this.startWriting());
    });
  }

  private startWriting(): void {
    if (this.gatherTimer) {
      clearTimeout(this.gatherTimer);
      this.gatherTimer = undefined;
    }
    this.writing = true;
    void this.writeWaiting();
  }

  /** Writes the waiting frames, a statement at a time, until none wait. */
  private async writeWaiting(): Promise<void> {
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0, MAX_FRAMES_A_STATEMENT);
      let appended: Set<string>;
      try {
        appended = group.length === 1 ? await this.writeOne(group[0]!) : await this.writeMany(group);
      } catch (e) {
        // The statement is one transaction: none of its frames was written; each caller hears why.
        for (const f of group) f.reject(e);
        continue;
      }
      if (group.length > 1) this.frameAppends.batches++;
      for (const f of group) {
        const ok = appended.has(f.taskId);
        if (ok) {
          this.tails.set(f.taskId, {
            end: f.tail.end + f.bytes.length,
            chunks: f.tail.chunks + 1,
            model: f.tail.model,
          });
          this.frameAppends.oneStatement++;
        }
        f.resolve(ok);
        // After the commit, as withTask does; a subscriber's failure is not the append's.
        if (ok) {
          try {
            this.hub.publish(f.taskId, { from: f.tail.end, bytes: f.bytes });
          } catch (e) {
            this.s.log.error({ err: e, taskId: f.taskId }, 'stream subscriber failed on an appended frame');
          }
        }
      }
    }
    this.writing = false;
  }

  private async writeOne(f: WaitingFrame): Promise<Set<string>> {
    const params = frameParams(f, f.bytes);
    const notify = this.hub.notifyArgs(f.taskId, f.tail.end + f.bytes.length);
    const rows = await this.s.db.query(
      notify ? sql.appendFrameNotify : sql.appendFrame,
      notify ? [...params, ...notify] : params,
    );
    return new Set(rows.length === 1 ? [f.taskId] : []);
  }

  private async writeMany(group: WaitingFrame[]): Promise<Set<string>> {
    const cols: unknown[][] = Array.from({ length: 9 }, () => []);
    for (const f of group) {
      // The statement takes the chunks as text (one array of one type) and stores their UTF-8 bytes.
      const row = frameParams(f, f.text);
      for (let c = 0; c < 9; c++) cols[c]!.push(row[c]);
    }
    const channel = this.hub.notifyChannel();
    const rows = await this.s.db.query(
      channel ? sql.appendFramesNotify : sql.appendFrames,
      channel ? [...cols, channel] : cols,
    );
    return new Set(rows.map((r) => String(r.task_id)));
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
  async finishIn(
    q: Queryable,
    task: LockedTask,
    append: (bytes: string) => Promise<number>,
    f: Finish,
  ): Promise<TaskState> {
    this.tails.delete(task.id);
    this.liveTasks.delete(task.id);
    const cancel = task.status === 'cancelling' && f.status !== 'cancelled';
    const status = cancel ? 'cancelled' : f.status;
    const reason = cancel ? 'cancelled' : f.reason;
    const info = f.info ?? task.lastInfo;
    const error = cancel ? undefined : f.error;
    const n = await append(terminalEvents(task.id, task.chunkCount, reason, info, f.usage, task.model, error, f.chunk));
    await q.query(tsql.finish, [
      task.id,
      status,
      n,
      JSON.stringify({ processed_frames: f.usage.processed_frames, processing_time_ms: f.usage.processing_time_ms }),
      error ? JSON.stringify(error) : null,
      status === 'succeeded' && f.results ? JSON.stringify(f.results) : null,
      // A task that never produced a frame keeps progress.frame_index null.
      f.info || task.chunkCount > 0 ? JSON.stringify(info) : null,
    ]);
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

  /**
   * Calls `fn` with every frame chunk archived so far, in order (what a worker that continues a task rebuilds
   * its state from: docs/video.md, "When a worker dies"). Returns how many there were.
   */
  async forEachFrame(
    taskId: string,
    fn: (frame: Pick<FrameOutput, 'stream_info' | 'delta' | 'analytics'>) => void | Promise<void>,
  ): Promise<number> {
    let frames = 0,
      offset = 0;
    for (;;) {
      // Every row is whole events, so a read of whole rows ends on an event boundary.
      const { bytes } = await this.read(taskId, offset, REPLAY_ROWS);
      if (bytes.length === 0) return frames;
      offset += bytes.length;
      for (const ev of bytes.toString('utf8').split('\n\n')) {
        if (!ev.startsWith('data: {') || !ev.includes('"finish_reason":null')) continue;
        await fn(JSON.parse(ev.slice(6)));
        frames++;
      }
    }
  }

  /**
   * A worker shutting down hands a live task on (docs/video.md, "When a worker dies"): one with a checkpoint
   * goes back to the queue keeping its state, for the next worker to continue (a clean handover is no resume:
   * `resumes` stays). 'cancelling' when a cancel must be finished instead; 'kept' when it cannot continue.
   */
  handOverOwned(taskId: string, owner: string): Promise<'handed' | 'cancelling' | 'kept' | 'gone'> {
    return this.withTask(taskId, async (task, q) => {
      if (task.leaseOwner !== owner) return 'gone' as const;
      if (task.status === 'cancelling') return 'cancelling' as const;
      if ((task.status !== 'running' && task.status !== 'streaming') || !task.resumable || task.chunkCount === 0)
        return 'kept' as const;
      await q.query(tsql.handOver, [taskId]);
      return 'handed' as const;
    }).then((r) => r ?? 'gone');
  }

  /** Reads the archive from byte `from`: at most `maxRows` rows, concatenated (the first row sliced to start at `from`). */
  async read(taskId: string, from: number, maxRows = 1024): Promise<{ bytes: Buffer; rows: number }> {
    const parts = await this.readRows(taskId, from, maxRows);
    return { bytes: parts.length === 1 ? parts[0]! : Buffer.concat(parts), rows: parts.length };
  }

  /** The archive's rows from byte `from` (each row one append; the first sliced to start at `from`), at most `maxRows`. */
  async readRows(taskId: string, from: number, maxRows: number): Promise<Buffer[]> {
    const rows = await this.s.db.query(sql.readFrom, [taskId, from, maxRows]);
    const parts: Buffer[] = [];
    for (const r of rows) {
      const start = Number(r.byte_offset);
      const b = toBuffer(r.bytes);
      if (start + b.length <= from) continue;
      parts.push(start < from ? b.subarray(from - start) : b);
    }
    return parts;
  }
}
