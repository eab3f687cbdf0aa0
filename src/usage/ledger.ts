// The usage ledger: one row per billable request (project, key, endpoint, model, tokens, frames, ms).
import type { Db } from '../store/db.js';
import { sql } from './usage.sql.js';
import { countUsage } from '../metrics/usage.js';

export interface UsageEvent {
  projectId: string; keyId?: string | null; endpoint: string; model?: string | null;
  inputTokens?: number; outputTokens?: number; frames?: number; ms?: number;
}

export interface DailyUsage { day: string; requests: number; input_tokens: number; output_tokens: number; frames: number; ms: number }

export class UsageLedger {
  /** Rows queued by recordAfterReply() and not yet written; reads and close() wait for them. */
  private readonly pending = new Set<Promise<void>>();

  constructor(private readonly db: Db, private readonly onError: (err: unknown, e: UsageEvent) => void = () => {}) {}

  async record(e: UsageEvent): Promise<void> {
    await this.db.query(sql.insert, [e.projectId, e.keyId ?? null, e.endpoint, e.model ?? null,
      e.inputTokens ?? 0, e.outputTokens ?? 0, e.frames ?? 0, Math.round(e.ms ?? 0)]);
    countUsage(e);
  }

  /**
   * Writes the row once the current reply has gone out (next macrotask): a synchronous request's answer does
   * not wait for the insert (about 1 ms on PGlite, a round trip on PostgreSQL). Reads in this process see the
   * row (they wait for queued writes first); a failed write is reported through onError, never to the client.
   */
  recordAfterReply(e: UsageEvent): void {
    const p: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.record(e))
      .catch((err: unknown) => this.onError(err, e))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  /** Resolves when every queued row is written (before reads, and before the database closes). */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all(this.pending);
  }

  async daily(projectId: string, from: Date, to: Date): Promise<DailyUsage[]> {
    await this.flush();
    const rows = await this.db.query(sql.daily, [projectId, from.toISOString(), to.toISOString()]);
    return rows.map((r) => ({
      day: String(r.day), requests: Number(r.requests), input_tokens: Number(r.input_tokens),
      output_tokens: Number(r.output_tokens), frames: Number(r.frames), ms: Number(r.ms),
    }));
  }

  async events(projectId: string): Promise<Array<Record<string, unknown>>> {
    await this.flush();
    return this.db.query(sql.byProject, [projectId]);
  }
}
