// The messages between the runtime (main thread) and its session workers, and how tensors cross: as
// {type, dims, data}, with the data's ArrayBuffer moved (transferred) rather than copied where allowed.
import type ort from 'onnxruntime-node';
import type { DecodeOptions } from '../detection/yolo.js';
import type { GraphPlan } from './graph-steps.js';
import type { NativeEngineOptions } from './native-session.js';

/** A detector's output decoded where the session ran (its boxes come back, not its raw tensor): `output`
 * names the tensor (default the first). */
export interface WorkerDecode {
  output?: string;
  options: DecodeOptions;
}

export interface WireTensor {
  type: ort.Tensor.Type;
  dims: readonly number[];
  data: ort.Tensor.DataType;
}

export interface SessionInfo {
  inputNames: string[];
  outputNames: string[];
  /** The model's declared outputs (name, and for tensors the shape with symbolic axes as strings). */
  outputMetadata: { name: string; isTensor: boolean; shape?: (number | string)[] }[];
  /** The model's declared inputs, the same way. */
  inputMetadata?: { name: string; isTensor: boolean; type?: string; shape?: (number | string)[] }[];
  /** On the native engine with CUDA graphs asked for: whether the session replays them, and why not. */
  cudaGraph?: { on: boolean; note?: string };
  /** On the native engine: whether its inputs are copied into page-locked host memory, which a card reads directly. */
  pinnedInputs?: boolean;
}

export type ToWorker =
  | {
      op: 'load';
      call: number;
      model: string;
      source: string | Uint8Array;
      providers: string[];
      /** The GPU (CUDA ordinal) the GPU providers run on; unset: their own default (device 0). */
      device?: number;
      intraOpThreads: number;
      /** Run on the native engine (native-session.ts) with these options; unset: onnxruntime-node's binding. */
      engine?: NativeEngineOptions;
    }
  | {
      op: 'run';
      call: number;
      model: string;
      feeds: Record<string, WireTensor>;
      outputs?: string[];
      decode?: WorkerDecode;
    }
  | { op: 'release'; call: number; model: string }
  /**
   * A model's graph rewritten as it loads (graph-steps.ts), in the worker that will load it: decoding and
   * re-encoding a graph would hold the main thread, and every request with it (docs/capacity.md, "Graphs for
   * the GPU").
   */
  | { op: 'graph'; call: number; source: string | Uint8Array; plan: GraphPlan }
  /**
   * Several runs' feeds as one batch: the worker joins each input along axis 0 (one copy, in this thread),
   * runs once and answers each item its own outputs, split along axis 0 (or its decoded boxes). `pad` blank
   * rows follow the items' (a batch size the session keeps to); their outputs are dropped.
   */
  | { op: 'runBatch'; call: number; model: string; items: BatchItem[]; outputs?: string[]; pad?: number }
  /**
   * Runs the model once at each batch size on blank inputs (zeros of each input's type, the shape the graph
   * declares with the batch size first) and answers each run's time in ms, in order (`{ ms }`), or why its
   * inputs cannot be made blank (`{ skipped }`).
   */
  | { op: 'warmup'; call: number; model: string; sizes: number[] };

/** One run of a batch: its feeds (first axis its own rows) and, for a detector, how to decode its rows. */
export interface BatchItem {
  feeds: Record<string, WireTensor>;
  decode?: WorkerDecode;
}

export type FromWorker =
  | {
      call: number;
      ok: true;
      value: unknown;
      /** A session's CUDA graphs that stopped at this run (the native engine): the runtime records and logs it. */
      cudaGraph?: { model: string; on: boolean; note?: string };
    }
  | { call: number; ok: false; message: string };

type Viewish = { buffer: ArrayBufferLike; byteOffset: number; byteLength: number };

/**
 * Tensors as wire values. A typed array that owns its whole ArrayBuffer goes in `transfer` when `move` is
 * set (the sender gives it up); one that views part of a larger buffer (a pooled Buffer) is sliced first,
 * since cloning or moving a view takes its whole buffer along. One over a whole SharedArrayBuffer crosses as
 * is (both threads see the same memory: the sender keeps it unchanged until the answer, the receiver copies
 * it before use, see sharedInput).
 */
export function packTensors(
  ts: Record<string, { type: ort.Tensor.Type; dims: readonly number[]; data: ort.Tensor.DataType }>,
  move: boolean,
  transfer: ArrayBuffer[],
): Record<string, WireTensor> {
  const out: Record<string, WireTensor> = {};
  for (const [name, t] of Object.entries(ts)) {
    let data = t.data;
    if (ArrayBuffer.isView(data)) {
      const v = data as unknown as Viewish;
      if (isWholeShared(v)) {
        out[name] = { type: t.type, dims: [...t.dims], data };
        continue;
      }
      const whole = v.byteOffset === 0 && v.byteLength === v.buffer.byteLength && v.buffer instanceof ArrayBuffer;
      // (A copy through the constructor: Buffer's slice() would be a view of the same pooled memory.)
      if (!whole)
        data = new (Buffer.isBuffer(data) ? Uint8Array : (data.constructor as new (a: unknown) => unknown))(
          data,
        ) as ort.Tensor.DataType;
      if ((move || !whole) && (data as unknown as Viewish).buffer instanceof ArrayBuffer) {
        const buf = (data as unknown as Viewish).buffer as ArrayBuffer;
        if (!transfer.includes(buf)) transfer.push(buf);
      }
    }
    out[name] = { type: t.type, dims: [...t.dims], data };
  }
  return out;
}

/** Memory for a session's inputs that its card copies from fastest (page-locked), or undefined: ordinary memory. */
export type HostAlloc = (bytes: number) => ArrayBuffer | undefined;

/** A typed array of `src`'s kind and `length` elements, in memory from `alloc` where it gives some. */
export function newLike<V extends ArrayBufferView>(src: V, length: number, alloc?: HostAlloc): V {
  const Ctor = src.constructor as { new (n: number): V; new (b: ArrayBuffer): V; BYTES_PER_ELEMENT: number };
  const host = length > 0 ? alloc?.(length * Ctor.BYTES_PER_ELEMENT) : undefined;
  return host ? new Ctor(host) : new Ctor(length);
}

function isWholeShared(v: Viewish): boolean {
  return (
    typeof SharedArrayBuffer !== 'undefined' &&
    v.buffer instanceof SharedArrayBuffer &&
    v.byteOffset === 0 &&
    v.byteLength === v.buffer.byteLength
  );
}

/**
 * A wire tensor's data as ONNX Runtime takes it: onnxruntime-node refuses typed arrays over shared memory, so
 * shared data is copied into `scratch` (reused when it is free and the same size: a copy into reused memory
 * costs a fraction of one into new memory; docs/capacity.md, "The detector's input"), or into new memory.
 * `release` gives the scratch back after the run.
 */
export function sharedInput<T extends ort.Tensor.DataType>(
  data: T,
  scratch: { buf?: ArrayBufferView; busy: boolean },
  alloc?: HostAlloc,
): { data: T; release: () => void } {
  const v = data as unknown as Viewish & ArrayBufferView;
  if (!ArrayBuffer.isView(data) || !isWholeShared(v)) return { data, release: () => {} };
  type Typed = ArrayBufferView & { length: number; set(a: unknown): void };
  const src = data as unknown as Typed;
  const free = !scratch.busy;
  const reuse = free && scratch.buf?.constructor === src.constructor && scratch.buf.byteLength === src.byteLength;
  // Only memory kept for reuse is page-locked: it is slow to make and to give back.
  const copy = (reuse ? scratch.buf : newLike(src, src.length, free ? alloc : undefined)) as Typed;
  copy.set(src);
  // The scratch is held by a run already (one more at once): this copy is the run's own.
  if (!free) return { data: copy as unknown as T, release: () => {} };
  scratch.buf = copy;
  scratch.busy = true;
  return {
    data: copy as unknown as T,
    release: () => {
      scratch.busy = false;
    },
  };
}
