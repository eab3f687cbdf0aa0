// Expired leases: the worker holding the task stopped heartbeating (crashed, killed, partitioned). A task with
// no chunk yet goes back to pending while it has attempts left (else failed); one mid-stream with a
// checkpoint (docs/video.md, "When a worker dies") goes back to the queue to continue on another worker,
// keeping its running state, unless the last MAX_RESUMES takeovers in a row archived nothing (a task that kills
// whoever takes it); a task that moves on between deaths survives any number. Any other one mid-stream fails with
// a terminal `error` chunk (its partial archive stays replayable); a cancelling one is cancelled. Runs in every process with the video module, so tasks never stay running forever even when
// every worker is gone. Each task is re-checked under its row lock, so a worker that was merely slow and
// two reapers racing both see the same, single outcome.
import type { Services } from '../../services/services.js';
import { taskErrors } from '../../base/errors.js';
import { sql } from '../tasks.sql.js';
import type { StreamArchive } from '../stream/stream-archive.js';
import type { StreamHub } from '../stream/stream-hub.js';
import { countTaskResume } from '../../metrics/video.js';

/** How often in a row a task may be handed to another worker whose run archived nothing before it died too;
 * the next expiry fails it worker_lost. */
export const MAX_RESUMES = 3;

/** Takeovers in a row with no chunk archived since the one before: none once the last taker archived one. */
function resumeStreak(task: { chunkCount: number; resumedAtChunk: number | null; resumeStreak: number }): number {
  return task.resumedAtChunk === null || task.chunkCount > task.resumedAtChunk ? 0 : task.resumeStreak;
}

export class Reaper {
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  /** `hub`: wakes idle workers when a task is queued to continue. */
  constructor(
    private readonly s: Services,
    private readonly archive: StreamArchive,
    private readonly intervalMs: number,
    private readonly hub?: Pick<StreamHub, 'announceNewTask'>,
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      void this.tick();
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      await this.reapOnce();
    } catch (e) {
      this.s.log.warn({ err: e }, 'video reaper pass failed');
    } finally {
      this.busy = false;
    }
  }

  /** One pass; returns how many tasks it moved. */
  async reapOnce(): Promise<number> {
    const rows = await this.s.db.query(sql.expiredLeases, [50]);
    let moved = 0;
    let queued = 0;
    for (const r of rows) {
      const id = String(r.id);
      const did = await this.archive.withTask(id, async (task, q, append) => {
        if (!task.leaseOwner || !task.leaseExpired) return false;
        const elapsed = task.lastInfo.elapsed_ms;
        const usage = {
          processed_frames: task.chunkCount,
          processing_time_ms: elapsed,
          decoded_frames: task.lastInfo.decoded_frames,
          dropped_frames: task.lastInfo.dropped_frames,
        };
        if (task.status === 'cancelling') {
          await this.archive.finishIn(q, task, append, { status: 'cancelled', reason: 'cancelled', usage });
        } else if (task.status === 'running' && task.chunkCount === 0) {
          const attemptsLeft = task.attempts < (await maxAttempts(q, id));
          if (attemptsLeft) await q.query(sql.release, [id]);
          else {
            await this.archive.finishIn(q, task, append, {
              status: 'failed',
              reason: 'error',
              usage,
              error: taskErrors.workerLostBeforeFirstChunk(task.attempts),
            });
          }
        } else if (
          (task.status === 'running' || task.status === 'streaming') &&
          task.resumable &&
          resumeStreak(task) < MAX_RESUMES
        ) {
          await q.query(sql.awaitResume, [id, resumeStreak(task) + 1]);
          return 'queued' as const;
        } else if (task.status === 'running' || task.status === 'streaming') {
          await this.archive.finishIn(q, task, append, {
            status: 'failed',
            reason: 'error',
            usage,
            error: taskErrors.workerLostMidStream(task.chunkCount),
          });
        } else return false;
        return true;
      });
      if (did === 'queued') {
        moved++;
        queued++;
        countTaskResume('queued');
        this.s.log.warn({ taskId: id }, 'video task lease expired; queued to continue on another worker');
      } else if (did) {
        moved++;
        this.s.log.warn({ taskId: id }, 'video task lease expired; reaped');
      }
    }
    if (queued > 0) await this.hub?.announceNewTask().catch(() => {});
    return moved;
  }
}

async function maxAttempts(q: { query: Services['db']['query'] }, id: string): Promise<number> {
  const [r] = await q.query(sql.maxAttempts, [id]);
  return Number(r?.max_attempts ?? 1);
}
