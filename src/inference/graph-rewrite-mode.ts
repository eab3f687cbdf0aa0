// When the graph rewrites a GPU gains from (an int8 export made float, float16, an image input taken as bytes)
// apply, and what a model's sessions load then. SIGHTFLOW_INFERENCE_DEQUANTIZE, _FP16 and _UINT8_INPUT share
// these rules: `on` always, `off` never, `auto` where the model's providers include a GPU one (dequantize also takes
// dynamic int8 on the CPU).
import { readFile } from 'node:fs/promises';

export type RewriteMode = 'auto' | 'on' | 'off';

/**
 * Providers on which `auto` rewrites; on the CPU float16 and the bytes input measured no faster (docs/capacity.md),
 * and the dequantize rewrite takes only dynamic int8 there (dequantize-graph.ts).
 */
const GPU_PROVIDERS = new Set(['cuda', 'tensorrt']);

/** Whether a rewrite under this mode applies on these providers. */
export function rewriteApplies(mode: RewriteMode, providers: readonly string[]): boolean {
  return mode === 'on' || (mode === 'auto' && providers.some((p) => GPU_PROVIDERS.has(p)));
}

/** A rewrite's answer: the new graph (none: nothing to change) or why it refused. */
export type RewriteAnswer = { ok: true; bytes?: Uint8Array } | { ok: false; reason: string };

/**
 * The graph as `rewrite` makes it from `src` (a prepared file's path or a graph in memory), or `src` as it is
 * when there was nothing to change or the rewrite refused; a refusal's reason goes to `refused`.
 */
export async function rewrittenSource(
  src: Uint8Array | string,
  rewrite: (bytes: Uint8Array) => RewriteAnswer,
  refused: (reason: string) => void,
): Promise<Uint8Array | string> {
  const r = rewrite(typeof src === 'string' ? new Uint8Array(await readFile(src)) : src);
  if (!r.ok) {
    refused(r.reason);
    return src;
  }
  return r.bytes ?? src;
}
