// The native ONNX Runtime engine's face (native/ort/ort_engine.cc, built apart by scripts/lib/build-ort-engine.sh):
// a session with what the session worker uses of onnxruntime-node's InferenceSession, created with the options
// the binding cannot pass to the GPU providers (TensorRT FP16 and its engine and timing caches, the CUDA
// provider's cuDNN search). It runs the same libonnxruntime.so.1 as the binding. The worker that owns a model's
// sessions loads it (session-worker.ts); the main thread only checks it is there (engineProblem).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import ort from 'onnxruntime-node';
import { projectRoot } from '../base/paths.js';
import { type OnnxTensorInfo, readOnnxInfo, readOnnxIoFromFile } from './onnx-metadata.js';

/** Where scripts/lib/build-ort-engine.sh puts the engine by default. */
export const DEFAULT_ORT_ENGINE_PATH = resolve(projectRoot, 'native/build-ort/sightflow_ort.node');

/** The inference engine and what only the native one passes to the GPU providers (the configuration's; the runtime resolves the defaults). */
export interface EngineSettings {
  kind: 'binding' | 'native';
  /** The built native engine; unset: its default place (src/inference/DEFAULT_ORT_ENGINE_PATH). */
  path?: string;
  /** TensorRT's engine and timing caches; blank: none kept (each session builds its engines again). */
  tensorrtCacheDir: string;
  /** The CUDA provider's cuDNN convolution search. */
  cudnnSearch: 'exhaustive' | 'heuristic' | 'default';
  /** On the CUDA provider, each input shape's run captured as a CUDA graph and replayed. */
  cudaGraph?: boolean;
  /**
   * For tests: the CUDA graph path's buffers, binding and copies in host memory on the CPU, reported as its CUDA
   * graphs are (the path's failures and what the runtime makes of them, where no card is).
   */
  fixedBuffers?: boolean;
}

/** What a session needs of the native engine besides the providers, device and threads every session has. */
export interface NativeEngineOptions {
  /** The built engine (sightflow_ort.node). */
  path: string;
  /** TensorRT builds its engines in FP16 (the fp16 setting, resolved for the model's providers). */
  fp16: boolean;
  /** TensorRT's engine and timing caches; blank: none. */
  cacheDir: string;
  cudnnSearch: 'exhaustive' | 'heuristic' | 'default';
  /** CUDA graphs on the CUDA provider (inputs and outputs then live in card memory the engine keeps per shape). */
  cudaGraph: boolean;
  /** The most rows a run of this session carries (a batched model's largest batch): TensorRT's profile covers 1 to it. */
  maxBatch?: number;
  /** EngineSettings.fixedBuffers, on the CPU. */
  fixedBuffers?: boolean;
}

/** What the session worker calls, onnxruntime-node's InferenceSession and a native session alike. */
export interface EngineSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputMetadata: readonly ort.InferenceSession.ValueMetadata[];
  readonly outputMetadata: readonly ort.InferenceSession.ValueMetadata[];
  run(feeds: Record<string, ort.Tensor>): Promise<ort.InferenceSession.ReturnType>;
  run(feeds: Record<string, ort.Tensor>, fetch: readonly string[]): Promise<ort.InferenceSession.ReturnType>;
  release(): Promise<void>;
  /** The native engine's: whether CUDA graphs were asked for and replay, and why not. */
  readonly cudaGraph?: { on: boolean; note?: string };
  /** The native engine's: CUDA graphs that stopped since the last call (a run on them failed), once. */
  takeGraphChange?(): { on: boolean; note?: string } | undefined;
  /**
   * The native engine's: whether hostBuffer gives page-locked memory (a GPU provider with the CUDA runtime loaded;
   * fixedBuffers' page-aligned stand-in on the CPU).
   */
  readonly pinnedInputs?: boolean;
  /** Page-locked host memory of this many bytes for inputs, freed with the buffer; undefined where none is given. */
  hostBuffer?(bytes: number): ArrayBuffer | undefined;
}

interface RawTensor {
  type: ort.Tensor.Type;
  dims: number[];
  data: ort.Tensor.DataType;
}
interface RawSession {
  inputNames: string[];
  outputNames: string[];
  inputMetadata: ort.InferenceSession.ValueMetadata[];
  outputMetadata: ort.InferenceSession.ValueMetadata[];
  cudaGraph: boolean;
  cudaGraphNote?: string;
  /** Runs go through each input shape's fixed buffers and binding (CUDA graphs, or fixedBuffers). */
  fixedBuffers: boolean;
  /** The same now: a bound run that failed turned them off (the session runs plain runs since), and why. */
  graphStatus(): { cudaGraph: boolean; fixedBuffers: boolean; note?: string };
  /** hostBuffer gives page-locked memory (a GPU provider with libcudart loaded; fixedBuffers' stand-in). */
  pinnedHost: boolean;
  hostBuffer(bytes: number): ArrayBuffer | undefined;
  run(
    feeds: Record<string, { type: string; dims: readonly number[]; data: unknown }>,
    fetch?: string[],
  ): Promise<Record<string, RawTensor>>;
  release(): void;
}
export interface OrtEngineAddon {
  /** The loaded ONNX Runtime's version. */
  version: string;
  /** The API version the engine was built for. */
  apiVersion: number;
  availableProviders(): string[];
  createSession(
    source: string | Uint8Array,
    options: {
      providers: string[];
      deviceId?: number;
      intraOpThreads?: number;
      fp16?: boolean;
      cacheDir?: string;
      cudnnSearch?: string;
      cudaGraph?: boolean;
      /** The CUDA graph path's fixed buffers and binding in host memory, on the CPU: for its tests. */
      fixedBuffers?: boolean;
      /** TensorRT's optimisation profile (tensorrtProfile). */
      trtProfile?: TensorrtProfile;
    },
  ): Promise<RawSession>;
}

const loaded = new Map<string, OrtEngineAddon>();

/** The engine at this path, loaded once per thread; a clear error when it has not been built. */
export function loadOrtEngine(path: string): OrtEngineAddon {
  const p = resolve(path);
  let addon = loaded.get(p);
  if (!addon) {
    try {
      addon = createRequire(import.meta.url)(p) as OrtEngineAddon;
    } catch (e) {
      throw new Error(
        `the native ONNX Runtime engine is not loadable at ${p} (build it with bash scripts/lib/build-ort-engine.sh, or SIGHTFLOW_BUILD_ORT_ENGINE=1 ./quickstart serve): ${(e as Error).message}`,
      );
    }
    loaded.set(p, addon);
  }
  return addon;
}

/** Why the engine at this path cannot serve (unset when it can); the main thread asks before any model loads. */
export function engineProblem(path: string): string | undefined {
  if (!existsSync(path))
    return `SIGHTFLOW_INFERENCE_ENGINE=native but no engine is built at ${path} (bash scripts/lib/build-ort-engine.sh, or SIGHTFLOW_BUILD_ORT_ENGINE=1 ./quickstart serve)`;
  try {
    loadOrtEngine(path);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

class NativeSession implements EngineSession {
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputMetadata: readonly ort.InferenceSession.ValueMetadata[];
  readonly outputMetadata: readonly ort.InferenceSession.ValueMetadata[];
  cudaGraph?: { on: boolean; note?: string };
  readonly pinnedInputs: boolean;
  private changed = false;
  constructor(
    private readonly raw: RawSession,
    askedGraph: boolean,
    private readonly hostBuffers: boolean,
  ) {
    if (askedGraph || hostBuffers) {
      const on = hostBuffers ? raw.fixedBuffers : raw.cudaGraph;
      this.cudaGraph = { on, ...(raw.cudaGraphNote ? { note: raw.cudaGraphNote } : {}) };
    }
    this.inputNames = raw.inputNames;
    this.outputNames = raw.outputNames;
    this.inputMetadata = raw.inputMetadata;
    this.outputMetadata = raw.outputMetadata;
    this.pinnedInputs = raw.pinnedHost;
  }
  hostBuffer(bytes: number): ArrayBuffer | undefined {
    return this.raw.hostBuffer(bytes);
  }
  async run(feeds: Record<string, ort.Tensor>, fetch?: readonly string[]): Promise<ort.InferenceSession.ReturnType> {
    const out = await this.raw.run(feeds, fetch ? [...fetch] : undefined);
    if (this.cudaGraph?.on) {
      const now = this.raw.graphStatus();
      if (!(this.hostBuffers ? now.fixedBuffers : now.cudaGraph)) {
        this.cudaGraph = { on: false, ...(now.note ? { note: now.note } : {}) };
        this.changed = true;
      }
    }
    // The engine's answers are copies this thread owns; as Tensors they read as the binding's do.
    const tensors: Record<string, ort.Tensor> = {};
    for (const [k, t] of Object.entries(out)) tensors[k] = new ort.Tensor(t.type, t.data as never, t.dims);
    return tensors;
  }
  async release(): Promise<void> {
    this.raw.release();
  }
  takeGraphChange(): { on: boolean; note?: string } | undefined {
    if (!this.changed) return undefined;
    this.changed = false;
    return this.cudaGraph;
  }
}

/** TensorRT's optimisation profile: each input's shapes as `name:1x3x640x640`, comma-separated. */
export interface TensorrtProfile {
  min: string;
  opt: string;
  max: string;
}

/**
 * The profile for a graph whose inputs have a free batch axis and every other dimension fixed: batch 1 to
 * `maxBatch`, built for the most (a batched model's calls are full under load). Unset where a graph has no free batch
 * axis, another free dimension (TensorRT then takes the shapes it meets), or runs one row a call.
 */
export function tensorrtProfile(inputs: readonly OnnxTensorInfo[], maxBatch: number): TensorrtProfile | undefined {
  if (maxBatch < 2 || !inputs.length) return undefined;
  const fixed = (d: number | string | null) => typeof d === 'number' && d > 0;
  if (!inputs.every((i) => i.shape.length > 0 && !fixed(i.shape[0]) && i.shape.slice(1).every(fixed))) return undefined;
  const at = (n: number) => inputs.map((i) => `${i.name}:${[n, ...i.shape.slice(1)].join('x')}`).join(',');
  return { min: at(1), opt: at(maxBatch), max: at(maxBatch) };
}

/** A session of the native engine on these providers (in order; the CPU is always there after them). */
export async function createNativeSession(
  source: string | Uint8Array,
  providers: readonly string[],
  device: number | undefined,
  intraOpThreads: number,
  engine: NativeEngineOptions,
): Promise<EngineSession> {
  const addon = loadOrtEngine(engine.path);
  let trtProfile: TensorrtProfile | undefined;
  if (providers.includes('tensorrt') && (engine.maxBatch ?? 1) > 1) {
    const io = typeof source === 'string' ? await readOnnxIoFromFile(source) : readOnnxInfo(source);
    trtProfile = tensorrtProfile(io.inputs, engine.maxBatch!);
  }
  const raw = await addon.createSession(source, {
    providers: [...providers],
    ...(device !== undefined ? { deviceId: device } : {}),
    intraOpThreads,
    fp16: engine.fp16,
    cacheDir: engine.cacheDir,
    cudnnSearch: engine.cudnnSearch.toUpperCase(),
    cudaGraph: engine.cudaGraph,
    fixedBuffers: engine.fixedBuffers,
    ...(trtProfile ? { trtProfile } : {}),
  });
  return new NativeSession(raw, engine.cudaGraph, !!engine.fixedBuffers && !providers.some((p) => p !== 'cpu'));
}
