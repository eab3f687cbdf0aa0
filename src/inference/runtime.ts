// ONNX Runtime for every model: sessions created on first use and cached, execution providers chosen once
// per runtime, one bounded (optionally micro-batching) queue per model.
import { AsyncLocalStorage } from 'node:async_hooks';
import { availableParallelism } from 'node:os';
import ort from 'onnxruntime-node';
import { createLogger } from '../log.js';
import { availableProviders, chooseProviders, requestedProviders, type ProviderLog } from './execution-providers.js';
import { ModelQueue } from './model-queue.js';

export type Tensor = ort.Tensor;
export const Tensor = ort.Tensor;
export type Feeds = Record<string, ort.Tensor>;
export type Outputs = Record<string, ort.Tensor>;

export interface RuntimeOptions {
  /** Requested providers in order; default SIGHTFLOW_EXECUTION_PROVIDERS or cpu. */
  providers?: string[];
  /** Intra-op threads per session; default SIGHTFLOW_INTRA_OP_THREADS or the number of cores. */
  intraOpThreads?: number;
  /** Default waiting-item bound of each model queue; default SIGHTFLOW_INFERENCE_QUEUE_DEPTH or 32. */
  queueDepth?: number;
  log?: ProviderLog;
  /** For tests: what the host offers (default: probed). */
  available?: string[];
}

export interface ModelSpec {
  id: string;
  /** ONNX bytes or a path to an .onnx file; called once, on first use. */
  load: () => Promise<Uint8Array | string>;
  queueDepth?: number;
  /** Micro-batching for models whose first input axis is a free batch axis. */
  batch?: { maxBatch: number; maxWaitMs: number };
}

// The signal of the request on whose behalf model runs happen. Task code (detector, describer) sits between
// the route and the queue and need not thread it through every call: runs made inside withRequestSignal()
// leave the queue unrun when the client goes away.
const requestSignal = new AsyncLocalStorage<AbortSignal>();

/** Runs fn so that every model run it queues (directly or deep down) is dropped if signal fires first. */
export function withRequestSignal<T>(signal: AbortSignal | undefined, fn: () => Promise<T>): Promise<T> {
  return signal ? requestSignal.run(signal, fn) : fn();
}

/** The signal of the surrounding withRequestSignal(), if any. */
export function currentRequestSignal(): AbortSignal | undefined {
  return requestSignal.getStore();
}

export function runtimeOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): RuntimeOptions {
  const threads = Number(env.SIGHTFLOW_INTRA_OP_THREADS);
  const depth = Number(env.SIGHTFLOW_INFERENCE_QUEUE_DEPTH);
  return {
    providers: requestedProviders(env.SIGHTFLOW_EXECUTION_PROVIDERS),
    intraOpThreads: Number.isInteger(threads) && threads > 0 ? threads : undefined,
    queueDepth: Number.isInteger(depth) && depth > 0 ? depth : undefined,
  };
}

export class InferenceRuntime {
  readonly providers: string[];
  readonly intraOpThreads: number;
  private readonly log: ProviderLog;
  /** Waiting-item bound of each model queue (also used by task-level queues such as OCR's). */
  readonly queueDepth: number;
  private readonly models = new Map<string, ModelHandle>();

  /** Options given here win; the rest come from the environment (SIGHTFLOW_EXECUTION_PROVIDERS, ...). */
  constructor(opts: RuntimeOptions = {}) {
    const env = runtimeOptionsFromEnv();
    this.log = opts.log ?? createLogger(process.env.SIGHTFLOW_LOG_LEVEL ?? 'info').child({ component: 'inference' });
    this.providers = chooseProviders(opts.providers ?? env.providers ?? ['cpu'], opts.available ?? availableProviders(), this.log);
    this.intraOpThreads = opts.intraOpThreads ?? env.intraOpThreads ?? availableParallelism();
    this.queueDepth = opts.queueDepth ?? env.queueDepth ?? 32;
    this.log.info({ providers: this.providers, intraOpThreads: this.intraOpThreads }, `inference runs on ${this.providers.join(', ')}`);
  }

  /** Registers a model (idempotent by id); nothing loads until its first run. */
  register(spec: ModelSpec): ModelHandle {
    let h = this.models.get(spec.id);
    if (!h) {
      h = new ModelHandle(spec, this, spec.queueDepth ?? this.queueDepth);
      this.models.set(spec.id, h);
    }
    return h;
  }

  model(id: string): ModelHandle | undefined {
    return this.models.get(id);
  }

  /** Creates a session on the chosen providers; if a GPU provider fails to initialise, warns and uses CPU. */
  async createSession(id: string, source: Uint8Array | string): Promise<{ session: ort.InferenceSession; providers: string[] }> {
    const base: ort.InferenceSession.SessionOptions = {
      intraOpNumThreads: this.intraOpThreads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
      executionMode: 'sequential',
    };
    const create = (eps: string[]) => (typeof source === 'string'
      ? ort.InferenceSession.create(source, { ...base, executionProviders: eps })
      : ort.InferenceSession.create(source, { ...base, executionProviders: eps }));
    try {
      const session = await create(this.providers);
      this.log.info({ model: id, providers: this.providers }, `model ${id} loaded on ${this.providers[0]}`);
      return { session, providers: this.providers };
    } catch (e) {
      if (this.providers.length === 1 && this.providers[0] === 'cpu') throw e;
      this.log.warn({ model: id, providers: this.providers, err: (e as Error).message }, `model ${id} could not start on ${this.providers.join(', ')}; falling back to cpu`);
      const session = await create(['cpu']);
      return { session, providers: ['cpu'] };
    }
  }

  async release(): Promise<void> {
    await Promise.all([...this.models.values()].map((m) => m.release()));
  }
}

export class ModelHandle {
  private sessionPromise: Promise<{ session: ort.InferenceSession; providers: string[] }> | undefined;
  private readonly queue: ModelQueue<{ feeds: Feeds; outputs?: string[] }, Outputs>;

  constructor(readonly spec: ModelSpec, private readonly runtime: InferenceRuntime, depth: number) {
    const batch = spec.batch;
    this.queue = new ModelQueue({ name: spec.id, depth, maxBatch: batch?.maxBatch ?? 1, maxWaitMs: batch?.maxWaitMs ?? 0 },
      (items) => (items.length === 1 ? this.runNow(items[0].feeds, items[0].outputs).then((o) => [o]) : this.runBatched(items)));
  }

  get id(): string { return this.spec.id; }
  get pending(): number { return this.queue.pending; }

  /** The session, created on first call and cached (a failed load is retried on the next call). */
  session(): Promise<{ session: ort.InferenceSession; providers: string[] }> {
    if (!this.sessionPromise) {
      const p = this.spec.load().then((src) => this.runtime.createSession(this.spec.id, src));
      p.catch(() => { if (this.sessionPromise === p) this.sessionPromise = undefined; });
      this.sessionPromise = p;
    }
    return this.sessionPromise;
  }

  /** Items dropped from the queue unrun because their request's signal fired. */
  get dropped(): number { return this.queue.dropped; }

  /**
   * Runs through the model's bounded queue; a full queue rejects at once with 503 overloaded_error. The
   * signal (default: the surrounding withRequestSignal's) drops the item if it fires before the run starts.
   */
  run(feeds: Feeds, outputs?: string[], signal: AbortSignal | undefined = currentRequestSignal()): Promise<Outputs> {
    return this.queue.submit({ feeds, outputs }, signal);
  }

  /** Session runs and the inputs they carried (runs < items when micro-batching merged some). */
  readonly stats = { runs: 0, items: 0 };

  private async runNow(feeds: Feeds, outputs?: string[], items = 1): Promise<Outputs> {
    const { session } = await this.session();
    this.stats.runs++;
    this.stats.items += items;
    return (outputs ? session.run(feeds, outputs) : session.run(feeds)) as Promise<Outputs>;
  }

  /**
   * Concatenates every feed along axis 0, runs once, splits every output back along axis 0. Items whose
   * other dimensions differ (e.g. text crops of different widths) cannot share a tensor: each shape group
   * runs as its own call.
   */
  private async runBatched(items: { feeds: Feeds; outputs?: string[] }[]): Promise<Outputs[]> {
    const key = (it: { feeds: Feeds; outputs?: string[] }) =>
      JSON.stringify([Object.entries(it.feeds).map(([k, t]) => [k, t.type, t.dims.slice(1)]), it.outputs ?? null]);
    const groups = new Map<string, number[]>();
    items.forEach((it, i) => { const k = key(it); groups.set(k, [...(groups.get(k) ?? []), i]); });
    if (groups.size > 1) {
      const out: Outputs[] = new Array(items.length);
      for (const idx of groups.values()) {
        const res = await this.runGroup(idx.map((i) => items[i]));
        idx.forEach((i, j) => { out[i] = res[j]; });
      }
      return out;
    }
    return this.runGroup(items);
  }

  private async runGroup(items: { feeds: Feeds; outputs?: string[] }[]): Promise<Outputs[]> {
    if (items.length === 1) return [await this.runNow(items[0].feeds, items[0].outputs)];
    const names = Object.keys(items[0].feeds);
    const feeds: Feeds = {};
    for (const n of names) feeds[n] = concatBatch(items.map((it) => it.feeds[n]));
    const out = await this.runNow(feeds, items[0].outputs, items.length);
    const sizes = items.map((it) => it.feeds[names[0]].dims[0]);
    const split: Outputs[] = items.map(() => ({}));
    for (const [k, t] of Object.entries(out)) splitBatch(t, sizes).forEach((part, i) => { split[i][k] = part; });
    return split;
  }

  async release(): Promise<void> {
    const s = this.sessionPromise;
    this.sessionPromise = undefined;
    if (s) await (await s).session.release();
  }
}

type NumericData = Float32Array | Int32Array | BigInt64Array | Uint8Array | Int8Array | Float64Array;

function concatBatch(ts: ort.Tensor[]): ort.Tensor {
  if (ts.length === 1) return ts[0];
  const first = ts[0];
  const total = ts.reduce((s, t) => s + t.dims[0], 0);
  const len = ts.reduce((s, t) => s + (t.data as NumericData).length, 0);
  const Ctor = (first.data as NumericData).constructor as new (n: number) => NumericData;
  const data = new Ctor(len);
  let off = 0;
  for (const t of ts) {
    const d = t.data as NumericData;
    (data as Float32Array).set(d as Float32Array, off);
    off += d.length;
  }
  return new ort.Tensor(first.type as 'float32', data as Float32Array, [total, ...first.dims.slice(1)]);
}

function splitBatch(t: ort.Tensor, sizes: number[]): ort.Tensor[] {
  const d = t.data as NumericData;
  const per = d.length / t.dims[0];
  let row = 0;
  return sizes.map((n) => {
    const part = d.slice(row * per, (row + n) * per);
    row += n;
    return new ort.Tensor(t.type as 'float32', part as Float32Array, [n, ...t.dims.slice(1)]);
  });
}
