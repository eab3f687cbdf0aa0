// The one way a use case bills: a usage-ledger row per billable outcome. Request-answering use cases bill
// after the reply (the answer does not wait for the insert) and not at all when the caller went away before
// the answer; background work (video tasks) bills with an awaited write. Every feature's services call this
// so the row's shape (project, key, endpoint, model, tokens, frames, ms) is decided in one place.
import type { Logger } from '../base/log.js';
import type { UsageLedger } from './ledger.js';

/** Who a use case runs for, and the request's lifetime: the signal aborts when the caller goes away. */
export interface Caller {
  projectId: string;
  keyId: string | null;
  signal: AbortSignal;
  log: Logger;
  /** The `traceparent` of calls made for this caller (the VLM, remote providers, a queued task). */
  traceparent?: string;
  /** The HTTP request's id, where the caller is one (a front process hands it to the owner's logs). */
  requestId?: string;
}

/** What one billable outcome cost; `started` is a performance.now() reading taken when the work began. */
export interface Charge {
  endpoint: string;
  model: string;
  inputTokens?: number;
  outputTokens?: number;
  frames?: number;
  started?: number;
  /** Elapsed milliseconds when the work did not run in this call (a task's processing time); else from `started`. */
  ms?: number;
}

export interface BillOptions {
  /**
   * 'after-reply' (default): queue the row behind the current reply. 'now': write it and wait (background
   * work that has no reply to protect and must not finish before its row exists).
   */
  when?: 'after-reply' | 'now';
  /** Skip billing (throwing the abort reason) when this signal has aborted: the caller never saw the answer. */
  unlessAborted?: AbortSignal;
}

export async function bill(
  ledger: UsageLedger,
  who: { projectId: string; keyId: string | null },
  c: Charge,
  opts: BillOptions = {},
): Promise<void> {
  if (opts.unlessAborted?.aborted) throw opts.unlessAborted.reason;
  const event = {
    projectId: who.projectId,
    keyId: who.keyId,
    endpoint: c.endpoint,
    model: c.model,
    inputTokens: c.inputTokens,
    outputTokens: c.outputTokens,
    frames: c.frames,
    ms: c.ms ?? (c.started !== undefined ? performance.now() - c.started : 0),
  };
  if (opts.when === 'now') await ledger.record(event);
  else ledger.recordAfterReply(event);
}
