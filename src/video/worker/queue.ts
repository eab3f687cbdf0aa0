// The task queue is the video_tasks table: a worker claims the oldest pending task in one statement
// (FOR UPDATE SKIP LOCKED, so concurrent workers never claim the same row and never wait on each other) and
// holds it by a lease that heartbeats renew. Attempts are counted per claim and bounded (tasks/reaper.ts).
// A task whose worker died with a checkpoint stored is claimed first, and comes with that checkpoint
// (docs/video.md, "When a worker dies").
import type { Services } from '../../services/services.js';
import { sql } from '../tasks.sql.js';
import { readCheckpoint, type StreamInfo, type TaskCheckpoint, type TaskJob } from '../task-contract.js';
import type { TaskState } from '../task-contract.js';

export interface ClaimedTask {
  id: string;
  projectId: string;
  keyId: string | null;
  model: string;
  job: TaskJob;
  attempts: number;
  maxAttempts: number;
  /** How often the task was handed on after its worker died. */
  resumes: number;
  /** Frame chunks already archived (0 for a task's first run). */
  chunkCount: number;
  /** The checkpoint to continue from: a task another worker began; null for a fresh start. */
  checkpoint: TaskCheckpoint | null;
  /** The last archived frame's stream_info, when chunks were archived. */
  lastInfo: StreamInfo | null;
}

export class TaskQueue {
  constructor(private readonly s: Services) {}

  async claim(owner: string, leaseMs: number): Promise<ClaimedTask | null> {
    const [r] = await this.s.db.query(sql.claim, [owner, Math.round(leaseMs)]);
    if (!r) return null;
    return {
      id: String(r.id),
      projectId: String(r.project_id),
      keyId: (r.key_id as string | null) ?? null,
      model: String(r.model),
      job: (typeof r.job === 'string' ? JSON.parse(r.job) : r.job) as TaskJob,
      attempts: Number(r.attempts),
      maxAttempts: Number(r.max_attempts),
      resumes: Number(r.resumes ?? 0),
      chunkCount: Number(r.chunk_count ?? 0),
      checkpoint: r.checkpoint ? readCheckpoint(r.checkpoint) : null,
      lastInfo: r.progress
        ? ((typeof r.progress === 'string' ? JSON.parse(r.progress) : r.progress) as StreamInfo)
        : null,
    };
  }

  /** Renews the lease; null when this worker no longer holds the task (the reaper took it). */
  async heartbeat(id: string, owner: string, leaseMs: number): Promise<{ status: TaskState } | null> {
    const [r] = await this.s.db.query(sql.heartbeat, [id, owner, Math.round(leaseMs)]);
    return r ? { status: r.status as TaskState } : null;
  }
}
