// Dynamic batching's settings (Triton's semantics): a model's queue runs up to `maxBatch` waiting runs as one
// session call, and a run that finds the session free waits at most `maxWaitMs` for company. Defaults follow
// the provider the model runs on; why each is what it is: docs/capacity.md, "Dynamic batching".

export interface BatchSettings {
  maxBatch: number;
  maxWaitMs: number;
}

/**
 * Per provider. CPU: one image a call with no wait; a batch measured no faster on the sessions a CPU host
 * already runs side by side, and any wait is latency. GPU: a batch fills the card between host steps; the
 * figures are provisional until scripts/gpu-check.sh has measured them on a card.
 */
export const BATCH_DEFAULTS: Record<'cpu' | 'gpu', BatchSettings> = {
  cpu: { maxBatch: 1, maxWaitMs: 0 },
  gpu: { maxBatch: 8, maxWaitMs: 2 },
};

/** The settings for a model on these providers: what the configuration set, else the provider's default. */
export function batchFor(providers: readonly string[], configured: Partial<BatchSettings> = {}): BatchSettings {
  const d = providers[0] && providers[0] !== 'cpu' ? BATCH_DEFAULTS.gpu : BATCH_DEFAULTS.cpu;
  return { maxBatch: configured.maxBatch ?? d.maxBatch, maxWaitMs: configured.maxWaitMs ?? d.maxWaitMs };
}
