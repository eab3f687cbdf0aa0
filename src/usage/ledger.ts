// The usage ledger: one row per billable request (project, key, endpoint, model, tokens, frames, ms).
import type { Db } from '../store/db.js';
import { sql } from './usage.sql.js';

export interface UsageEvent {
  projectId: string; keyId?: string | null; endpoint: string; model?: string | null;
  inputTokens?: number; outputTokens?: number; frames?: number; ms?: number;
}

export interface DailyUsage { day: string; requests: number; input_tokens: number; output_tokens: number; frames: number; ms: number }

export class UsageLedger {
  constructor(private readonly db: Db) {}

  async record(e: UsageEvent): Promise<void> {
    await this.db.query(sql.insert, [e.projectId, e.keyId ?? null, e.endpoint, e.model ?? null,
      e.inputTokens ?? 0, e.outputTokens ?? 0, e.frames ?? 0, Math.round(e.ms ?? 0)]);
  }

  async daily(projectId: string, from: Date, to: Date): Promise<DailyUsage[]> {
    const rows = await this.db.query(sql.daily, [projectId, from.toISOString(), to.toISOString()]);
    return rows.map((r) => ({
      day: String(r.day), requests: Number(r.requests), input_tokens: Number(r.input_tokens),
      output_tokens: Number(r.output_tokens), frames: Number(r.frames), ms: Number(r.ms),
    }));
  }

  async events(projectId: string): Promise<Array<Record<string, unknown>>> {
    return this.db.query(sql.byProject, [projectId]);
  }
}
