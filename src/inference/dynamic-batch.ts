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

/**
 * The batch sizes sessions run: `all` (a batch runs at the size it formed), a list (a batch of n runs padded
 * with blank images up to the smallest listed size >= n), or `auto` (by provider: batchSizesFor). Each size a
 * GPU session meets is a new shape for its provider (cuDNN's kernel search, a TensorRT engine's profile), so
 * on a GPU batches keep to a few sizes that a warm-up can run as the session loads.
 */
export type BatchSizes = 'auto' | 'all' | number[];

/**
 * `all` and lists as given; `auto`: every size on the CPU (a blank image costs as much as a real one there,
 * and the CPU has no per-shape search), powers of two and the most itself on a GPU provider. A list always
 * holds 1 and the most (a lone image never waits on blanks; the largest batch has a size), and nothing over
 * the most. Returns null for every size.
 */
export function batchSizesFor(
  providers: readonly string[],
  maxBatch: number,
  configured: BatchSizes = 'auto',
): number[] | null {
  if (maxBatch <= 1) return null;
  if (configured === 'all') return null;
  const onGpu = !!providers[0] && providers[0] !== 'cpu';
  if (configured === 'auto' && !onGpu) return null;
  const listed = configured === 'auto' ? Array.from({ length: 31 }, (_, k) => 2 ** k) : configured;
  const sizes = [...new Set([1, ...listed.filter((n) => n >= 1 && n < maxBatch), maxBatch])].sort((a, b) => a - b);
  return sizes.length === maxBatch ? null : sizes;
}

/** The size a batch of n runs at: the smallest of `sizes` that holds it (n itself for every size). */
export function paddedSize(n: number, sizes: readonly number[] | null): number {
  if (!sizes) return n;
  return sizes.find((s) => s >= n) ?? n;
}

/**
 * The order a warm-up runs the sizes in: the largest first, then 1, then the rest rising. TensorRT widens
 * an engine's profile (and builds it again) for a shape outside the range it has met, so after the largest
 * and the smallest every other size falls inside it.
 */
export function warmupOrder(sizes: readonly number[]): number[] {
  const s = [...new Set(sizes)].sort((a, b) => a - b);
  if (s.length <= 1) return s;
  return [s.at(-1)!, ...s.slice(0, -1)];
}

/** Parses SIGHTFLOW_BATCH_SIZES: `auto`, `all`, or a comma-separated list of positive whole numbers. */
export function parseBatchSizes(text: string): BatchSizes {
  const t = text.trim().toLowerCase();
  if (t === '' || t === 'auto') return 'auto';
  if (t === 'all') return 'all';
  const parts = t.split(',').map((p) => p.trim());
  const sizes = parts.map(Number);
  const bad = parts.find((p, i) => !/^\d+$/.test(p) || sizes[i]! < 1 || sizes[i]! > 4096);
  if (bad !== undefined) throw new Error(`"${bad}" is not a batch size (a whole number from 1 to 4096)`);
  return [...new Set(sizes)].sort((a, b) => a - b);
}
