// ONNX Runtime for every model: sessions created on first use and cached, execution providers chosen once
// per runtime, one bounded (optionally micro-batching) queue per model, held by the model's handle
// (model-handle.ts). Sessions live in worker threads (session-worker.ts): onnxruntime-node runs a model
// synchronously on the calling thread for the whole run, which on the main thread would stall every HTTP
// request and SSE stream meanwhile (docs/capacity.md, "Sessions in worker threads").
import { mkdir, stat } from 'node:fs/promises';
import type { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import ort from 'onnxruntime-node';
import { createLogger } from '../base/log.js';
import { errors } from '../base/errors.js';
import {
  availableProviders,
  chooseProviders,
  type ProviderLog,
  usesGpu,
  whyUnavailable,
} from './execution-providers.js';
import { chooseGpuDevices, type GpuDeviceRequest, sessionDevice, visibleGpuCount } from './gpu-devices.js';
import type { RunPriority } from './model-queue.js';
import { SessionPool, type SessionWorker, type WorkerMode } from './session-pool.js';
import type { SessionInfo, WorkerDecode } from './session-wire.js';
import type { BatchSettings, BatchSizes } from './dynamic-batch.js';
import type { Uint8InputMode, Uint8Preprocess } from './uint8-input.js';
import { rewriteApplies } from './graph-rewrite-mode.js';
import type { DequantizeMode } from './dequantize-graph.js';
import type { Fp16Mode } from './fp16-graph.js';
import {
  DEFAULT_ORT_ENGINE_PATH,
  engineProblem,
  type EngineSettings,
  type NativeEngineOptions,
} from './native-session.js';
import { ModelHandle, replicaKey } from './model-handle.js';

export type Tensor = ort.Tensor;
export const Tensor = ort.Tensor;
export type Feeds = Record<string, ort.Tensor>;
/**
 * Feeds made when the run starts rather than when it is queued. A detector's 3 MB input waiting in a busy
 * queue outlives the young generation's collections and is freed only by full ones, which then come
 * every few frames (see ModelHandle.run).
 */
export type DeferredFeeds = () => Feeds | Promise<Feeds>;
export type Outputs = Record<string, ort.Tensor>;

export interface RuntimeOptions {
  /** Requested providers in order; default cpu (the server passes SIGHTFLOW_EXECUTION_PROVIDERS from its configuration). */
  providers?: string[];
  /** Intra-op threads per session; default the number of cores. */
  intraOpThreads?: number;
  /**
   * Most runs of one model at once (default 1; the server passes its configuration's, which follows the
   * cores: docs/capacity.md). The first session uses intraOpThreads, so one client's latency is that of one
   * full session; further ones load only when runs overlap, each with intraOpThreads / sessions threads (on
   * CPU, overlapping runs then keep off the first: see splitCores).
   */
  sessions?: number;
  /**
   * On CPU, whether runs that overlap keep off the wide first session (default true; see ModelHandle). False
   * lends every session alike, the wide one beside the narrow ones: for benches that compare the two.
   */
  splitCores?: boolean;
  /** Default waiting-item bound of each model queue; default 32. */
  queueDepth?: number;
  /**
   * Worker threads that own the sessions: one per model (default) or one shared by all.
   */
  workers?: WorkerMode;
  log?: ProviderLog;
  /** Default idle time after which a loaded model is unloaded (0: never); a model's spec may override it. */
  idleUnloadMs?: number;
  /** For tests: what the host offers (default: probed). */
  available?: string[];
  /**
   * Dynamic batching of the models that take it (ModelSpec.dynamicBatch: the detectors); unset fields take
   * the default of the provider the model runs on (dynamic-batch.ts).
   */
  batch?: Partial<BatchSettings>;
  /**
   * The batch sizes a batched model's sessions run (dynamic-batch.ts batchSizesFor): every size, a list
   * (a batch is padded with blank images up to the next listed size), or (auto, the default) every size on
   * the CPU and powers of two on a GPU provider.
   */
  batchSizes?: BatchSizes;
  /**
   * Whether a model's session runs each of its batch sizes once on blank inputs as it loads, so a
   * provider's per-shape work (cuDNN's kernel search, TensorRT's engine profile) is done before a request
   * waits on it: always, never, or (auto, the default) on a GPU provider.
   */
  warmup?: WarmupMode;
  /**
   * Whether a detector's graph takes its image as uint8 NHWC RGB and normalises it itself (uint8-input.ts):
   * always, never, or (auto, the default) when the model runs on a GPU provider.
   */
  uint8Input?: Uint8InputMode;
  /**
   * Whether int8 graphs load as float ones (dequantize-graph.ts): always, never, or (auto, the default) when
   * the model runs on a GPU provider, and a dynamic int8 graph on the CPU too.
   */
  dequantize?: DequantizeMode;
  /**
   * Whether the graphs of models that take it (ModelSpec.float16) run in float16 (fp16-graph.ts): always, never,
   * or (auto, the default) when the model runs on a GPU provider.
   */
  fp16?: Fp16Mode;
  /**
   * Whether a detector's YOLOv8 or YOLOv5 output gets a twin reduced to box, best score and class that its
   * decode reads instead (best-class.ts; default true: the same boxes from a fourteenth of the bytes). false
   * keeps the graph's outputs as exported, for comparisons.
   */
  reduceYoloOutput?: boolean;
  /**
   * The GPUs sessions on a GPU provider run on (gpu-devices.ts): every visible one (default) or these
   * ordinals. A model's sessions take them in turn, and on a GPU provider a model has at least one session
   * per device.
   */
  gpuDevices?: GpuDeviceRequest;
  /**
   * Refuse the CPU fallback (SIGHTFLOW_GPU_REQUIRED): the runtime is not made where no GPU provider can run,
   * and a model on a GPU provider whose session cannot start there fails its runs with 503 gpu_unavailable
   * instead of loading on the CPU. A model whose own providers name no GPU provider runs on the CPU as asked.
   */
  gpuRequired?: boolean;
  /** CUDA_VISIBLE_DEVICES as the process was given it (the configuration's), which narrows the cards CUDA shows. */
  cudaVisibleDevices?: string;
  /** For tests: how many GPUs the host shows (default: probed). */
  visibleGpus?: number;
  /**
   * What runs the sessions (native-session.ts): onnxruntime-node's binding (default), or the native engine, which
   * passes TensorRT FP16 and its caches and the CUDA provider's cuDNN search. A native engine that is not built
   * stops the runtime from being made.
   */
  engine?: EngineSettings;
}

export interface ModelSpec {
  id: string;
  /** ONNX bytes or a path to an .onnx file; called once, on first use. */
  load: () => Promise<Uint8Array | string>;
  queueDepth?: number;
  /** Micro-batching for models whose first input axis is a free batch axis. */
  batch?: { maxBatch: number; maxWaitMs: number };
  /**
   * Takes the runtime's dynamic batching (when `batch` is unset): a graph with a fixed first axis of 1 is
   * given a free one when it loads (batch-axis.ts); one the rewrite refuses runs one image a call.
   */
  dynamicBatch?: boolean;
  /**
   * Takes the runtime's float16 setting: its graph runs in float16 (after its batch axis) where the setting
   * says so. The detectors, whose accuracy in float16 is measured (docs/capacity.md, "Graphs for the GPU").
   */
  float16?: boolean;
  /** A detector: a YOLOv8 or YOLOv5 output gets a twin reduced to what decoding reads (best-class.ts). */
  detector?: boolean;
  /** Execution providers for this model, in order (default: the runtime's). */
  providers?: string[];
  /** The GPUs its sessions take in turn on a GPU provider (default: the runtime's devices). */
  devices?: number[];
  /** Unload after this long without a run (0: never; default: the runtime's). */
  idleUnloadMs?: number;
  /** Most sessions that run at once (default: the runtime's). */
  sessions?: number;
  /** A dynamically batched model's own batching, over the runtime's (unset fields: the runtime's, else the provider's). */
  batchLimits?: Partial<BatchSettings>;
  /** The model's own batch sizes (default: the runtime's). */
  batchSizes?: BatchSizes;
  /** The model's own warm-up (default: the runtime's). */
  warmup?: WarmupMode;
}

/**
 * On whose behalf a model run happens, passed by the task code (detector, OCR, describer) from the route or the
 * camera down to the queue. `signal`: the request's; an item whose signal fires before its run starts is
 * dropped (its client went away). `priority`: a background task's runs (a camera's frames) go after
 * interactive requests in every model queue, with a lane and bound of their own (model-queue.ts). Passed as an
 * argument rather than held in an AsyncLocalStorage: on this Node a store, once entered, turns on promise hooks
 * for the whole process, a cost on every promise of every request (docs/capacity.md, "Front processes").
 */
export interface RunContext {
  signal?: AbortSignal;
  priority?: RunPriority;
}

/** When a model's sessions warm up as they load. */
export type WarmupMode = 'auto' | 'on' | 'off';

/** A session's warm-up: each batch size run once, in order, and what each took; or why it was skipped. */
export type Warmup = { sizes: number[]; ms: number[] } | { skipped: string };

/** A model loaded in its worker: the providers it runs on and its input/output names. */
export interface LoadedModel extends SessionInfo {
  providers: string[];
  /** The session's warm-up as it loaded, where it had one. */
  warmup?: Warmup;
  /** The GPU (CUDA ordinal) the session runs on; undefined on the CPU, or where the host shows no device. */
  device: number | undefined;
  /** Process RSS growth while it loaded, at least the weights' size (approximate: other work in the process counts too). */
  memoryBytes: number;
  loadedAt: number;
  /** What runs the session (RuntimeOptions.engine). */
  engine: 'binding' | 'native';
}

/** A model's serving state, for GET /v1/models/:id. */
export interface ModelState {
  state: 'unloaded' | 'loading' | 'loaded';
  providers: string[] | null;
  /** The GPUs (CUDA ordinals) its loaded sessions run on, in order; null when none runs on a GPU. */
  devices: number[] | null;
  /**
   * What runs the loaded session, its CUDA graphs where asked for, and on the native engine whether its inputs are
   * copied into page-locked memory; null when none is loaded.
   */
  engine: {
    kind: 'binding' | 'native';
    cuda_graphs: { on: boolean; note?: string } | null;
    pinned_inputs: boolean | null;
  } | null;
  /** Sessions loaded now and the most that run at once; null before the model is registered. */
  sessions: { loaded: number; max: number } | null;
  /** Dynamic batching in force: most items a call and longest wait (a detector's rises once its graph took a batch axis). */
  batch: { max_size: number; max_delay_ms: number; sizes: number[] | null } | null;
  /** The first session's warm-up (batch sizes in the order run, ms each), why it was skipped, or null (none). */
  warmup: { batch_sizes: number[]; ms: number[] } | { skipped: string } | null;
  memory_bytes: number | null;
  loaded_at: string | null;
  last_used_at: string | null;
  requests: number;
  errors: number;
  /** Median run latency over the last 256 runs (queue wait included), ms. */
  p50_ms: number | null;
  queue_depth: number;
  pending: number;
  idle_unload_s: number;
  unloads: number;
}

/** Per-run options. */
export interface RunOptions {
  /**
   * The caller hands its feed buffers over: they move to the worker thread instead of being copied, and are
   * unusable (detached) afterwards. Leave unset when the same feeds are run again.
   */
  transfer?: boolean;
  /**
   * A detector's output decoded in the session's worker: the run answers one DECODED_BOXES tensor instead of
   * its outputs, batched with others or not (the worker decodes each run's own rows).
   */
  decode?: WorkerDecode;
}

export class InferenceRuntime {
  readonly providers: string[];
  readonly intraOpThreads: number;
  /** Most sessions of one model that run at once. */
  readonly sessions: number;
  readonly splitCores: boolean;
  /** How sessions are spread over worker threads. */
  readonly workers: WorkerMode;
  private readonly log: ProviderLog;
  /** Waiting-item bound of each model queue (also used by task-level queues such as OCR's). */
  readonly queueDepth: number;
  private readonly models = new Map<string, ModelHandle>();
  private readonly pool: SessionPool;
  private readonly available: string[];
  /** Default idle unload (0: never). */
  readonly idleUnloadMs: number;
  /** Dynamic batching as configured (unset fields: the provider's default). */
  readonly batch: Partial<BatchSettings>;
  /** The batch sizes batched models run (a batch padded up to the next). */
  readonly batchSizes: BatchSizes;
  /** When models' sessions warm up as they load. */
  readonly warmup: WarmupMode;
  /** When a detector's graph takes its image as bytes. */
  readonly uint8Input: Uint8InputMode;
  /** When int8 graphs load as float ones. */
  readonly dequantize: DequantizeMode;
  /** When the graphs of models that take it run in float16. */
  readonly fp16: Fp16Mode;
  readonly reduceYoloOutput: boolean;
  /** The GPUs sessions on a GPU provider take in turn (empty: none seen; the provider picks its own). */
  readonly devices: number[];
  /** How many GPUs CUDA shows the process. */
  private readonly visibleGpus: number;
  /** No CPU fallback for models on a GPU provider (RuntimeOptions.gpuRequired). */
  readonly gpuRequired: boolean;
  /** What runs the sessions (RuntimeOptions.engine), its path resolved. */
  readonly engine: EngineSettings & { path: string };
  /** With gpuRequired: the models whose last load on their GPU provider failed, and why (readiness reads it). */
  readonly gpuFailures = new Map<string, string>();
  /**
   * A detector model's preprocessing by its id (undefined for other models), set where the models and the
   * detection part meet. With it a detector's graph takes its bytes input however it first loads (a preload,
   * the add check), not only when a detector made for it offered its preprocessing first.
   */
  imagePreprocess: ((modelId: string) => Promise<Uint8Preprocess | undefined>) | undefined;

  /** Unset options take their defaults; the server passes its configuration's inference section. */
  constructor(opts: RuntimeOptions = {}) {
    this.log = opts.log ?? createLogger('info').child({ component: 'inference' });
    this.available = opts.available ?? availableProviders();
    this.providers = chooseProviders(opts.providers ?? ['cpu'], this.available, this.log);
    this.gpuRequired = opts.gpuRequired ?? false;
    if (this.gpuRequired && !usesGpu(this.providers)) {
      const asked = (opts.providers ?? []).filter((p) => usesGpu([p]));
      const why = asked.length ? asked.map((p) => `${p}: ${whyUnavailable(p)}`).join('; ') : 'none was asked for';
      throw new Error(
        `SIGHTFLOW_GPU_REQUIRED is set but no GPU provider can run on this host (${why}); not starting on the CPU`,
      );
    }
    this.engine = {
      kind: 'binding',
      tensorrtCacheDir: '',
      cudnnSearch: 'exhaustive',
      ...opts.engine,
      path: opts.engine?.path ?? DEFAULT_ORT_ENGINE_PATH,
    };
    if (this.engine.kind === 'native') {
      const why = engineProblem(this.engine.path);
      if (why) throw new Error(why);
    }
    this.idleUnloadMs = opts.idleUnloadMs ?? 0;
    this.intraOpThreads = opts.intraOpThreads ?? availableParallelism();
    this.queueDepth = opts.queueDepth ?? 32;
    this.workers = opts.workers ?? 'per-model';
    this.visibleGpus = opts.visibleGpus ?? visibleGpuCount(opts.cudaVisibleDevices);
    this.devices = chooseGpuDevices(opts.gpuDevices ?? 'all', this.visibleGpus, this.log);
    // One shared worker runs one session at a time: more sessions would only wait for it. On a GPU, at
    // least one session per device, so every card runs.
    const perDevice = usesGpu(this.providers) ? this.devices.length : 1;
    this.sessions = this.workers === 'shared' ? 1 : Math.max(1, opts.sessions ?? 1, perDevice);
    this.splitCores = opts.splitCores ?? true;
    this.batch = opts.batch ?? {};
    this.batchSizes = opts.batchSizes ?? 'auto';
    this.warmup = opts.warmup ?? 'auto';
    this.uint8Input = opts.uint8Input ?? 'auto';
    this.dequantize = opts.dequantize ?? 'auto';
    this.fp16 = opts.fp16 ?? 'auto';
    this.reduceYoloOutput = opts.reduceYoloOutput ?? true;
    this.pool = new SessionPool(this.workers);
    this.log.info(
      {
        providers: this.providers,
        intraOpThreads: this.intraOpThreads,
        sessions: this.sessions,
        workers: this.workers,
        ...(usesGpu(this.providers) ? { devices: this.devices } : {}),
        engine: this.engine.kind,
      },
      `inference runs on ${this.providers.join(', ')}${usesGpu(this.providers) && this.devices.length > 1 ? ` (devices ${this.devices.join(', ')})` : ''}${this.engine.kind === 'native' ? ', through the native engine' : ''}`,
    );
  }

  /** Registers a model (idempotent by id); nothing loads until its first run. */
  register(spec: ModelSpec): ModelHandle {
    let h = this.models.get(spec.id);
    if (!h) {
      // A model registered again after it was let go gets sessions and workers of its own, apart from the
      // handle before it, which may still be draining its queue on its own.
      const generation = this.generations.get(spec.id) ?? 0;
      this.generations.set(spec.id, generation + 1);
      h = new ModelHandle(spec, this, spec.queueDepth ?? this.queueDepth, generation);
      this.models.set(spec.id, h);
    }
    return h;
  }

  /** How many handles each model id has had (a new one after each unregister). */
  private readonly generations = new Map<string, number>();

  model(id: string): ModelHandle | undefined {
    return this.models.get(id);
  }

  /** The registered models. */
  handles(): ModelHandle[] {
    return [...this.models.values()];
  }

  /**
   * Forgets a model (removed, replaced, its settings changed): new runs go to a handle registered afresh,
   * while the runs already queued or running on this one finish on its sessions (a settings change under load
   * fails no request); then its sessions are released and, with one worker per model, its worker threads end,
   * so the memory goes back.
   */
  async unregister(id: string): Promise<void> {
    const h = this.models.get(id);
    this.models.delete(id);
    this.gpuFailures.delete(id);
    if (h) await h.retire();
  }

  /** Ends the worker thread of a model's k-th session (one worker per model only). */
  async retireWorkerAt(id: string, k: number): Promise<void> {
    if (this.workers !== 'per-model') return;
    await this.pool.retire(replicaKey(id, k));
  }

  /**
   * Takes a model's worker threads out of the pool (one worker per model only), for the caller to end once their
   * sessions are released: a load that comes meanwhile starts fresh workers instead of loading into one being ended.
   */
  detachWorkers(id: string, sessions = 1): SessionWorker[] {
    if (this.workers !== 'per-model') return [];
    const out: SessionWorker[] = [];
    for (let k = 0; k < sessions; k++) {
      const w = this.pool.detach(replicaKey(id, k));
      if (w) out.push(w);
    }
    return out;
  }

  /** The providers a model runs on: its own list (each missing one warned about, unless quiet) or the runtime's. */
  providersFor(spec: ModelSpec, quiet = false): string[] {
    if (!spec.providers?.length) return this.providers;
    if (quiet) return chooseProviders(spec.providers, this.available, { info() {}, warn() {} });
    const log: ProviderLog = {
      info: (o, m) => this.log.info({ ...o, model: spec.id }, `model ${spec.id}: ${m}`),
      warn: (o, m) => this.log.warn({ ...o, model: spec.id }, `model ${spec.id}: ${m}`),
    };
    return chooseProviders(spec.providers, this.available, log);
  }

  /**
   * The GPUs a model's sessions take in turn: its own list (ordinals this process does not see are dropped with a
   * warning, and none left means the runtime's), or the runtime's.
   */
  devicesFor(spec: ModelSpec, quiet = false): number[] {
    if (!spec.devices?.length) return this.devices;
    const log = {
      warn: (o: object, m: string) =>
        quiet ? undefined : this.log.warn({ ...o, model: spec.id }, `model ${spec.id}: ${m}`),
    };
    const own = chooseGpuDevices(spec.devices, this.visibleGpus, log, 'its devices name');
    return own.length ? own : this.devices;
  }

  /** The worker thread hosting a model (started if needed). */
  workerFor(id: string): SessionWorker {
    return this.pool.workerFor(id);
  }

  /** The running worker threads (for tests and diagnostics). */
  get threads(): Worker[] {
    return this.pool.threads;
  }

  /**
   * Loads a model in its worker on the chosen providers; if a GPU provider fails to initialise, warns and
   * uses CPU.
   */
  async createSession(
    id: string,
    source: Uint8Array | string,
    providers = this.providers,
    replica = 0,
    threads = this.intraOpThreads,
    devices = this.devices,
    sessionName = id,
    maxBatch = 1,
  ): Promise<{ worker: SessionWorker; model: LoadedModel }> {
    // The card this session runs on, where its providers include a GPU one.
    const cardFor = (eps: string[]) => (usesGpu(eps) ? sessionDevice(devices, replica) : undefined);
    const load = async (eps: string[]) => {
      const worker = this.pool.workerFor(replicaKey(sessionName, replica));
      const device = cardFor(eps);
      // The session holds at least its weights; RSS growth over the load says more (arenas, copies) but can
      // read zero when other work in the process frees memory meanwhile.
      const weights =
        typeof source === 'string'
          ? await stat(source).then(
              (st) => st.size,
              () => 0,
            )
          : source.byteLength;
      const rss0 = process.memoryUsage.rss();
      const info = await worker.call<SessionInfo>(
        {
          op: 'load',
          model: sessionName,
          source,
          providers: eps,
          device,
          intraOpThreads: threads,
          engine: await this.nativeEngine(eps, maxBatch),
        },
        `loading model ${id}`,
      );
      return {
        worker,
        model: {
          ...info,
          providers: eps,
          device,
          memoryBytes: Math.max(weights, process.memoryUsage.rss() - rss0),
          loadedAt: Date.now(),
          engine: this.engine.kind,
        },
      };
    };
    // Where a session runs, in words: the providers given, and the device on a GPU one.
    const on = (eps: string[]) => {
      const device = cardFor(eps);
      return device === undefined ? eps.join(', ') : `${eps.join(', ')} (device ${device})`;
    };
    try {
      const loaded = await load(providers);
      this.gpuFailures.delete(id);
      this.log.info(
        {
          model: id,
          providers,
          ...(loaded.model.device === undefined ? {} : { device: loaded.model.device }),
          replica,
          threads,
          memoryBytes: loaded.model.memoryBytes,
          ...(this.engine.kind === 'native' ? { engine: 'native' } : {}),
          ...(loaded.model.cudaGraph ? { cudaGraph: loaded.model.cudaGraph } : {}),
          ...(loaded.model.pinnedInputs ? { pinnedInputs: true } : {}),
        },
        replica === 0
          ? `model ${id} loaded on ${on(providers.slice(0, 1))}`
          : `model ${id}: session ${replica + 1} loaded for concurrent runs on ${on(providers.slice(0, 1))}`,
      );
      return loaded;
    } catch (e) {
      if (providers.length === 1 && providers[0] === 'cpu') throw e;
      if (this.gpuRequired && usesGpu(providers)) {
        const detail = (e as Error).message.split('\n')[0]!.slice(0, 500);
        this.gpuFailures.set(id, detail);
        this.log.warn(
          { model: id, providers, device: cardFor(providers), err: (e as Error).message },
          `model ${id} could not start on ${on(providers)}; SIGHTFLOW_GPU_REQUIRED forbids the CPU fallback`,
        );
        throw errors.gpuUnavailable(id, on(providers.slice(0, 1)), detail);
      }
      this.log.warn(
        { model: id, providers, device: cardFor(providers), err: (e as Error).message },
        `model ${id} could not start on ${on(providers)}; falling back to cpu`,
      );
      return load(['cpu']);
    }
  }

  /** Whether TensorRT runs these providers' graphs in FP16 itself: the native engine, TensorRT first, FP16 applying. */
  engineFp16(eps: readonly string[]): boolean {
    return this.engine.kind === 'native' && eps[0] === 'tensorrt' && rewriteApplies(this.fp16, eps);
  }

  /** The native engine's options for a session on these providers; unset on the binding. */
  private async nativeEngine(eps: readonly string[], maxBatch: number): Promise<NativeEngineOptions | undefined> {
    if (this.engine.kind !== 'native') return undefined;
    const trt = eps.includes('tensorrt');
    const cacheDir = trt ? this.engine.tensorrtCacheDir : '';
    if (cacheDir) await mkdir(cacheDir, { recursive: true });
    return {
      path: this.engine.path,
      // TensorRT builds in FP16 where the fp16 setting applies to these providers (auto: any GPU provider).
      fp16: this.engineFp16(eps),
      cacheDir,
      cudnnSearch: this.engine.cudnnSearch,
      cudaGraph: !!this.engine.cudaGraph && eps[0] === 'cuda',
      maxBatch,
      ...(this.engine.fixedBuffers ? { fixedBuffers: true } : {}),
    };
  }

  /** Ends every worker thread (runs in flight fail); a later run loads its model again in a fresh worker. */
  async close(): Promise<void> {
    for (const m of this.models.values()) {
      m.forget();
      m.stopIdleTimer();
    }
    await this.pool.close();
  }

  /** A line in the runtime's log about a model's sessions. */
  info(o: object, msg: string): void {
    this.log.info(o, msg);
  }

  /** A warning in the runtime's log (models report trouble that does not fail a run here). */
  warn(o: object, msg: string): void {
    this.log.warn(o, msg);
  }

  /** Releases every session: the same as close(). */
  release(): Promise<void> {
    return this.close();
  }
}
