// When the graph rewrites a GPU gains from (an int8 export made float, float16, an image input taken as bytes)
// apply (graph-steps.ts makes the plan). SIGHTFLOW_INFERENCE_DEQUANTIZE, _FP16 and _UINT8_INPUT share
// these rules: `on` always, `off` never, `auto` where the model's providers include a GPU one (dequantize also takes
// dynamic int8 on the CPU).
import { usesGpu } from './execution-providers.js';

export type RewriteMode = 'auto' | 'on' | 'off';

/**
 * Whether a rewrite under this mode applies on these providers. `auto` rewrites on the GPU providers only: on the
 * CPU float16 and the bytes input measured no faster (docs/capacity.md), and the dequantize rewrite takes only
 * dynamic int8 there (dequantize-graph.ts).
 */
export function rewriteApplies(mode: RewriteMode, providers: readonly string[]): boolean {
  return mode === 'on' || (mode === 'auto' && usesGpu(providers));
}
