// When the graph rewrites a GPU gains from (an int8 export made float, float16, an image input taken as bytes)
// apply (graph-steps.ts makes the plan). SIGHTFLOW_INFERENCE_DEQUANTIZE, _FP16 and _UINT8_INPUT share
// these rules: `on` always, `off` never, `auto` where the model's providers include a GPU one (dequantize also takes
// dynamic int8 on the CPU).
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
