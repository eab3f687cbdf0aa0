// The usage ledger: one row per billable request (project, key, endpoint, model, tokens, frames, ms).
import type { Db } from '../store/db.js';
import { sql } from './usage.sql.js';
import { countUsage } from '../metrics/usage.js';

export interface UsageEvent {
  projectId: string;
  keyId?: string | null;
  endpoint: string;
  model?: string | null;
  inputTokens?: number;
  outputTokens?: number;
  frames?: number;
  ms?: number;
}

export interface DailyUsage {
  day: string;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  frames: number;
  ms: number;
}

/**
 * How long a row queued after a reply waits for others to share its insert. One insert costs PGlite about the
 * same CPU whether it carries one row or eight (docs/capacity.md, "The embedded database's cost"), so
 * under load the rows of a quarter second go in one statement instead of one each. A crash loses at most
 * this window of rows; a clean stop and every read in this process wait for them.
 */
export const USAGE_BATCH_MS = 250;
/** Most rows in one statement, so one write holds the embedded database (this process's thread) briefly. */
const MAX_BATCH_ROWS = 500;

const params = (e: UsageEvent): unknown[] => [
  e.projectId,
  e.keyId ?? null,
  e.endpoint,
  e.model ?? null,
  e.inputTokens ?? 0,
  e.outputTokens ?? 0,
  e.frames ?? 0,
  Math.round(e.ms ?? 0),
];

/** The rows as one array a column, in the order of sql.insertColumns' parameters (params' order). */
function columns(rows: UsageEvent[]): unknown[][] {
  const table = rows.map(params);
  return table[0]!.map((_, c) => table.map((row) => row[c]));
}

export class UsageLedger {
  /** Rows queued by recordAfterReply() and not yet written. */
  private queued: UsageEvent[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** The write in flight, if any; reads and close() wait for it and for the queue. */
  private writing: Promise<void> | undefined;

  constructor(
    private readonly db: Db,
    private readonly onError: (err: unknown, e: UsageEvent) => void = () => {},
  ) {}

  async record(e: UsageEvent): Promise<void> {
    await this.db.query(sql.insert, params(e));
    countUsage(e);
  }

  /**
   * Writes the row after the reply, batched with the rows of the next USAGE_BATCH_MS: a synchronous request's
   * answer never waits for the insert. It counts in the metrics at once. Reads in this process see the row
   * (they wait for queued writes first); a failed write is reported through onError, never to the client.
   */
  recordAfterReply(e: UsageEvent): void {
    countUsage(e);
    this.queued.push(e);
    if (!this.timer && !this.writing)
      this.timer = setTimeout(() => {
        this.timer = undefined;
        void this.drain();
      }, USAGE_BATCH_MS);
  }

  /** Resolves when every queued row is written (before reads, and before the database closes). */
  async flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    while (this.writing || this.queued.length) await (this.writing ?? this.drain());
  }

  /** Writes what is queued, in statements of at most MAX_BATCH_ROWS rows, then re-arms for rows queued meanwhile. */
  private drain(): Promise<void> {
    if (this.writing) return this.writing;
    this.writing = (async () => {
      while (this.queued.length) {
        const rows = this.queued.splice(0, MAX_BATCH_ROWS);
        try {
          await this.db.query(
            rows.length === 1 ? sql.insert : sql.insertColumns,
            rows.length === 1 ? params(rows[0]!) : columns(rows),
          );
        } catch (err) {
          if (rows.length === 1) {
            this.onError(err, rows[0]!);
            continue;
          }
          // One bad row must not cost the others theirs: each goes again on its own.
          for (const e of rows)
            await this.db.query(sql.insert, params(e)).catch((one: unknown) => this.onError(one, e));
        }
      }
    })().finally(() => {
      this.writing = undefined;
    });
    return this.writing;
  }

  async daily(projectId: string, from: Date, to: Date): Promise<DailyUsage[]> {
    await this.flush();
    const rows = await this.db.query(sql.daily, [projectId, from.toISOString(), to.toISOString()]);
    return rows.map((r) => ({
      day: String(r.day),
      requests: Number(r.requests),
      input_tokens: Number(r.input_tokens),
      output_tokens: Number(r.output_tokens),
      frames: Number(r.frames),
      ms: Number(r.ms),
    }));
  }

  async events(projectId: string): Promise<Array<Record<string, unknown>>> {
    await this.flush();
    return this.db.query(sql.byProject, [projectId]);
  }
}
