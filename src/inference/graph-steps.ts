// The rewrites a model's graph takes as it loads, as one plan: which steps apply is decided on the main thread
// from the settings (graphPlan), and the session worker that loads the model carries them out (makeGraph), so
// decoding and re-encoding a graph of megabytes never holds the thread that serves requests. The order is
// fixed: a float16 export made to take and give float32, an int8 graph made float, a free batch axis,
// float16, a detector's bytes input, then a YOLO output's reduced twin (each later step sees what the earlier
// ones made). A step that refuses leaves the graph as it was and says why.
// The steps (and the ONNX protobuf library they decode with) are imported by the plan that takes them: most
// processes load no graph that needs one.
import { readFile } from 'node:fs/promises';
import type { DequantizeForms } from './dequantize-graph.js';
import { rewriteApplies, type RewriteMode } from './graph-rewrite-mode.js';
import type { Uint8Preprocess } from './uint8-input.js';

/** The steps asked of one graph; an absent one is not tried. */
export interface GraphPlan {
  /**
   * A graph with float16 inputs or outputs (an export in float16): cast to float32 at its edges, float16 kept
   * inside, or float32 throughout (float16-export.ts).
   */
  float16Export?: 'edges' | 'widen';
  /** Which int8 forms become float (dequantize-graph.ts). */
  dequantize?: DequantizeForms;
  /** A free first axis, for dynamic batching (batch-axis.ts). */
  batchAxis?: boolean;
  /** Float weights and activations in float16 (fp16-graph.ts). */
  fp16?: boolean;
  /** The image input as uint8 NHWC RGB, normalised in the graph with this preprocessing (uint8-input.ts). */
  uint8?: Uint8Preprocess;
  /** These YOLO outputs get a twin reduced to what decoding reads (best-class.ts). */
  bestClass?: readonly string[];
}

/** Each step's refusal, by step. */
export interface GraphRefusals {
  float16Export?: string;
  dequantize?: string;
  batchAxis?: string;
  fp16?: string;
  uint8?: string;
  bestClass?: string;
}

/** What the plan made: the graph (absent: the source as it was) and which steps took. */
export interface GraphOutcome {
  bytes?: Uint8Array;
  refused: GraphRefusals;
  /** The graph has a free batch axis. */
  batched: boolean;
  /** The graph takes its image as bytes. */
  uint8: boolean;
}

/** What the settings ask of a model's graph on its providers. */
export interface GraphSettings {
  dequantize: RewriteMode;
  fp16: RewriteMode;
  uint8Input: RewriteMode;
  /** The model's providers, GPU ones included where the host has them. */
  providers: readonly string[];
  /** The model takes dynamic batching at more than one image a call and declares no batch of its own. */
  batchAxis: boolean;
  /** The model's graph may run in float16. */
  float16: boolean;
  /** The graph's declared inputs or outputs include float16 (it was exported in float16). */
  float16Io?: boolean;
  /**
   * The session's engine runs the graph in FP16 itself (TensorRT on the native engine, as trtexec --fp16 does):
   * the graph stays float32 for it to choose each layer's precision, an export in float16 made float32 throughout.
   */
  engineFp16?: boolean;
  /** A detector's preprocessing, where known. */
  pre?: Uint8Preprocess;
  /** A detector's outputs that may be YOLOv8 or YOLOv5 outputs (best-class-output.ts, twinForm). */
  yoloOutputs?: readonly string[];
}

/**
 * The plan for these settings: `on` always, `off` never, `auto` on a GPU provider; the int8 rewrite's `auto`
 * also takes dynamic int8 on the CPU, where that graph runs slower than its float twin (docs/capacity.md,
 * "Graphs for the GPU").
 */
export function graphPlan(s: GraphSettings): GraphPlan {
  const plan: GraphPlan = {};
  const fp16 = rewriteApplies(s.fp16, s.providers) && !s.engineFp16;
  // An export in float16 keeps its float16 where float16 applies (it needs no float16 rewrite then), and is
  // float32 throughout elsewhere.
  if (s.float16Io) plan.float16Export = fp16 ? 'edges' : 'widen';
  if (s.dequantize !== 'off') plan.dequantize = rewriteApplies(s.dequantize, s.providers) ? 'any' : 'dynamic';
  if (s.batchAxis) plan.batchAxis = true;
  if (s.float16 && fp16 && !s.float16Io) plan.fp16 = true;
  if (s.pre && rewriteApplies(s.uint8Input, s.providers)) plan.uint8 = s.pre;
  if (s.yoloOutputs?.length) plan.bestClass = s.yoloOutputs;
  return plan;
}

/** Whether the plan asks anything (nothing: the source loads as it is, unread). */
export const plansAnything = (p: GraphPlan): boolean =>
  p.float16Export !== undefined ||
  p.dequantize !== undefined ||
  !!p.batchAxis ||
  !!p.fp16 ||
  p.uint8 !== undefined ||
  !!p.bestClass?.length;

/** Carries out the plan on `src` (a prepared file's path or a graph in memory). */
export async function makeGraph(src: Uint8Array | string, plan: GraphPlan): Promise<GraphOutcome> {
  const out: GraphOutcome = { refused: {}, batched: false, uint8: false };
  if (!plansAnything(plan)) return out;
  let bytes = typeof src === 'string' ? new Uint8Array(await readFile(src)) : src;
  let changed = false;
  const took = (next: Uint8Array) => {
    changed ||= next !== bytes;
    bytes = next;
  };
  if (plan.float16Export) {
    const { withFloat32Edges, widenedToFloat32 } = await import('./float16-export.js');
    const r = plan.float16Export === 'edges' ? withFloat32Edges(bytes) : widenedToFloat32(bytes);
    if (!r.ok) out.refused.float16Export = r.reason;
    else if (r.changed) took(r.bytes);
  }
  if (plan.dequantize) {
    const { dequantizeGraph } = await import('./dequantize-graph.js');
    const r = dequantizeGraph(bytes, plan.dequantize);
    if (!r.ok) out.refused.dequantize = r.reason;
    else if (r.changed) took(r.bytes);
  }
  if (plan.batchAxis) {
    const { withBatchAxis } = await import('./batch-axis.js');
    const r = withBatchAxis(bytes);
    // Rows that would still influence each other in a batch refuse it as a failed rewrite does.
    const why = !r.ok ? r.reason : r.coupled;
    if (why) out.refused.batchAxis = why;
    else if (r.ok) {
      out.batched = true;
      if (r.changed) took(r.bytes);
    }
  }
  if (plan.fp16) {
    const { withFloat16 } = await import('./fp16-graph.js');
    const r = withFloat16(bytes);
    if (!r.ok) out.refused.fp16 = r.reason;
    else took(r.bytes);
  }
  if (plan.uint8) {
    const { withUint8Input } = await import('./uint8-input.js');
    const r = withUint8Input(bytes, plan.uint8);
    if (!r.ok) out.refused.uint8 = r.reason;
    else {
      took(r.bytes);
      out.uint8 = true;
    }
  }
  if (plan.bestClass?.length) {
    const { withBestClass } = await import('./best-class.js');
    const r = withBestClass(bytes, plan.bestClass);
    if (!r.ok) out.refused.bestClass = r.reason;
    else took(r.bytes);
  }
  if (changed) out.bytes = bytes;
  return out;
}
