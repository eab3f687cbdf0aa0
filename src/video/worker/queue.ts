// The task queue is the video_tasks table: a worker claims the oldest pending task in one statement
// (FOR UPDATE SKIP LOCKED, so concurrent workers never claim the same row and never wait on each other) and
// holds it by a lease that heartbeats renew. Attempts are counted per claim and bounded (tasks/reaper.ts).
import type { Services } from '../../services.js';
import { sql } from '../tasks.sql.js';
import type { TaskJob } from '../task-contract.js';
import type { TaskState } from '../task-contract.js';

export interface ClaimedTask {
  id: string;
  projectId: string;
  keyId: string | null;
  model: string;
  job: TaskJob;
  attempts: number;
  maxAttempts: number;
}

export class TaskQueue {
  constructor(private readonly s: Services) {}

  async claim(owner: string, leaseMs: number): Promise<ClaimedTask | null> {
    const [r] = await this.s.db.query(sql.claim, [owner, Math.round(leaseMs)]);
    if (!r) return null;
    return {
      id: String(r.id), projectId: String(r.project_id), keyId: (r.key_id as string | null) ?? null, model: String(r.model),
      job: (typeof r.job === 'string' ? JSON.parse(r.job) : r.job) as TaskJob,
      attempts: Number(r.attempts), maxAttempts: Number(r.max_attempts),
    };
  }

  /** Renews the lease; null when this worker no longer holds the task (the reaper took it). */
  async heartbeat(id: string, owner: string, leaseMs: number): Promise<{ status: TaskState } | null> {
    const [r] = await this.s.db.query(sql.heartbeat, [id, owner, Math.round(leaseMs)]);
    return r ? { status: r.status as TaskState } : null;
  }
}
