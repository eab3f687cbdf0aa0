// One registered model's serving: its bounded queue (dynamic batching, priority lanes), its sessions in worker
// threads (loaded on first use, spread over cores or cards, warmed up, retuned in place, unloaded when idle) and
// its counters. The runtime (runtime.ts) registers models and owns the worker pool they share.
import ort from 'onnxruntime-node';
import { usesGpu } from './execution-providers.js';
import { ItemFailed, ModelQueue, type RunPriority } from './model-queue.js';
import { observeExecution } from '../metrics/models.js';
import type { SessionWorker } from './session-pool.js';
import { SessionReplicas } from './session-replicas.js';
import { packTensors, type WireTensor, type WorkerDecode } from './session-wire.js';
import { batchFor, type BatchSettings, batchSizesFor, paddedSize, warmupOrder } from './dynamic-batch.js';
import type { Uint8Preprocess } from './uint8-input.js';
import { rewriteApplies } from './graph-rewrite-mode.js';
import { graphPlan, plansAnything, type GraphOutcome } from './graph-steps.js';
import { ELEM_FLOAT16, readOnnxInfo, readOnnxIoFromFile } from './onnx-metadata.js';
import { reducibleOutput } from './best-class-output.js';
import type {
  DeferredFeeds,
  Feeds,
  InferenceRuntime,
  LoadedModel,
  ModelSpec,
  ModelState,
  Outputs,
  RunContext,
  RunOptions,
  Warmup,
} from './runtime.js';

interface RunItem {
  feeds: Feeds | DeferredFeeds;
  outputs?: string[];
  transfer?: boolean;
  decode?: WorkerDecode;
}
interface ReadyItem extends RunItem {
  feeds: Feeds;
}

/** An item's feeds, made now when they were deferred. */
async function ready(item: RunItem): Promise<ReadyItem> {
  return typeof item.feeds === 'function' ? { ...item, feeds: await item.feeds() } : (item as ReadyItem);
}

type Loaded = { worker: SessionWorker; model: LoadedModel };

/**
 * After runs of a model last overlapped, a run alone keeps to the narrow sessions this long: under steady
 * load from a few clients the queue empties for moments between requests, and a run put on the wide
 * session then shares the cores with the narrow ones (more threads than cores).
 */
const OVERLAP_HOLD_MS = 250;

/**
 * Sessions a model may run at once: its own count, else the runtime's; on a GPU provider at least one for each
 * of its devices unless its spec sets the count; one with a shared worker (it runs one session at a time).
 */
function sessionCount(spec: ModelSpec, runtime: InferenceRuntime): number {
  if (runtime.workers === 'shared') return 1;
  const eps = spec.providers?.length ? spec.providers : runtime.providers;
  const perDevice = usesGpu(eps) && spec.sessions === undefined ? runtime.devicesFor(spec, true).length : 1;
  return Math.max(1, spec.sessions ?? runtime.sessions, perDevice);
}

/** The spec fields retune() may take in place (the batch limits' delay, not their size: checked apart). */
const RETUNED_FIELDS: ReadonlySet<keyof ModelSpec> = new Set([
  'load',
  'queueDepth',
  'idleUnloadMs',
  'sessions',
  'batchLimits',
]);

/** Whether two specs say the same in every field but `except` (the load function is the registry's each time). */
function sameBut(a: ModelSpec, b: ModelSpec, except: ReadonlySet<keyof ModelSpec>): boolean {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as Array<keyof ModelSpec>);
  for (const k of keys) if (!except.has(k) && JSON.stringify(a[k]) !== JSON.stringify(b[k])) return false;
  return true;
}

/** Intra-op threads of each session that runs beside others: the cores split between them. */
const narrowThreads = (threads: number, sessions: number) => Math.max(1, Math.floor(threads / sessions));

export class ModelHandle {
  private readonly replicas: SessionReplicas<Loaded>;
  private readonly queue: ModelQueue<RunItem, Outputs>;
  private idleTimer: NodeJS.Timeout | undefined;
  private lastUsedAt = 0;
  private requests = 0;
  private errors = 0;
  private unloads = 0;
  /** Latencies of the last runs (ring buffer), for the median. */
  private readonly latencies: number[] = [];
  private latencyAt = 0;

  /** The batching this model is meant to run with (its queue takes it once the graph is known to allow it). */
  batching: BatchSettings;
  /** Why the model runs one image a call though batching was asked for (its graph could not take a batch axis). */
  batchRefused: string | undefined;
  /** The graph as sessions load it: the prepared file, or its bytes with a batch axis. Made once. */
  private source: Promise<Uint8Array | string> | undefined;
  /** A detector's preprocessing, for a graph that takes its image as bytes (offerBytesInput). */
  private bytesPre: Uint8Preprocess | undefined;
  /** Whether the graph made takes its image as bytes, and whether a preprocessing was offered when it was made. */
  private bytesInput = false;
  private madeWithOffer = false;

  /**
   * The name its sessions and worker threads go by: the model's id, and for a model registered again after it
   * was let go, the id with its generation (`id~1`), so the handle before it can drain on its own sessions.
   */
  readonly sessionName: string;
  /** Let go by the runtime: it only drains what it holds, and its idle timer no longer arms. */
  private retired = false;

  /** The spec in force: the one registered, with the settings retune() applied since. */
  private current: ModelSpec;
  /** Most items that may wait in each lane of its queue. */
  private queueDepth: number;

  constructor(
    spec: ModelSpec,
    private readonly runtime: InferenceRuntime,
    depth: number,
    generation = 0,
  ) {
    this.current = spec;
    this.queueDepth = depth;
    this.sessionName = generation === 0 ? spec.id : `${spec.id}~${generation}`;
    this.batching =
      spec.batch ??
      (spec.dynamicBatch
        ? batchFor(runtime.providersFor(spec, true), { ...runtime.batch, ...spec.batchLimits })
        : { maxBatch: 1, maxWaitMs: 0 });
    // A detector's graph gets its batch axis when it loads: until then (and if refused) one image a call.
    const batch = spec.batch ?? { maxBatch: 1, maxWaitMs: 0 };
    const eps = spec.providers?.length ? spec.providers : runtime.providers;
    const sessions = sessionCount(spec, runtime);
    // On CPU, runs that overlap go to sessions that split the cores (a wide one with every thread serves one
    // client at a time); elsewhere threads do not split the device, so the sessions are alike.
    const wide =
      runtime.splitCores &&
      eps.every((p) => p === 'cpu') &&
      narrowThreads(runtime.intraOpThreads, sessions) < runtime.intraOpThreads;
    this.replicas = new SessionReplicas<Loaded>(
      sessions,
      (key) => this.loadReplica(key),
      (e) =>
        runtime.warn(
          { model: spec.id, err: (e as Error).message },
          `model ${spec.id}: a further session failed to load; runs share the loaded ones`,
        ),
      // Runs waiting in the queue count as overlapping before they ask for a session (those lent one or
      // waiting for one are counted by the replicas themselves).
      {
        wide,
        demand: () => 1 + this.queue.pending,
        holdMs: OVERLAP_HOLD_MS,
        onDropped: (l, key) => void this.dropSession(key, Promise.resolve(l)),
      },
    );
    // As many batches run at once as the model has sessions; each waits for one of them. One more (an
    // interactive one whose feeds are made at its start) may start early, making them while the running ones
    // finish.
    this.queue = new ModelQueue<RunItem, Outputs>(
      {
        name: spec.id,
        depth,
        maxBatch: batch?.maxBatch ?? 1,
        maxWaitMs: batch?.maxWaitMs ?? 0,
        concurrency: sessions,
        ahead: 1,
        deferred: (item) => typeof item.feeds === 'function',
      },
      async (items) => {
        // An item whose input cannot be made (a deferred feed that throws) fails alone; the others still run.
        const made = await Promise.allSettled(items.map(ready));
        const out = new Array<Outputs | ItemFailed>(items.length);
        made.forEach((m, i) => {
          if (m.status === 'rejected') out[i] = new ItemFailed(m.reason);
        });
        const ok = made.flatMap((m, i) => (m.status === 'fulfilled' ? [{ i, item: m.value }] : []));
        if (ok.length === 0) return out;
        try {
          const res = ok.length === 1 ? [await this.runNow(ok[0].item)] : await this.runBatched(ok.map((o) => o.item));
          ok.forEach((o, j) => {
            out[o.i] = res[j];
          });
        } catch (e) {
          for (const o of ok) out[o.i] = new ItemFailed(e);
        }
        return out;
      },
    );
  }

  get spec(): ModelSpec {
    return this.current;
  }
  get depth(): number {
    return this.queueDepth;
  }

  /**
   * Takes settings without loading the model again, where it can: the queue depth, the batch delay and the
   * idle unload always, and on a GPU provider the number of sessions (they are alike there: on the CPU each
   * further session's threads depend on the count). The sessions loaded, their warm-up and the runs queued
   * stay: a lower depth refuses new runs until the queue is below it, a new batch delay applies from the next
   * batch, the idle timer restarts with the new idle time, more sessions load as runs overlap, and sessions past
   * a lower count are let go (a busy one once its run ends). Returns false, changing nothing, for a spec that
   * differs in anything else: the caller lets the handle go and registers the model afresh.
   */
  retune(spec: ModelSpec): boolean {
    const was = this.current;
    if (!sameBut(was, spec, RETUNED_FIELDS)) return false;
    if ((was.batchLimits?.maxBatch ?? null) !== (spec.batchLimits?.maxBatch ?? null)) return false;
    const sessions = sessionCount(spec, this.runtime);
    if (sessions !== this.replicas.max) {
      const alike = usesGpu(this.runtime.providersFor(spec, true)) && !this.replicas.wide;
      if (!alike || this.runtime.workers === 'shared') return false;
      const gone = this.replicas.resize(sessions);
      this.queue.setConcurrency(sessions);
      // Each key is marked at once: a session loading again under it waits until this one is gone.
      for (const g of gone) void this.dropSession(g.key, g.loaded);
      this.runtime.info(
        { model: spec.id, sessions },
        `model ${spec.id}: at most ${sessions} session${sessions === 1 ? '' : 's'} now, those loaded kept`,
      );
    }
    this.current = spec;
    this.queueDepth = spec.queueDepth ?? this.runtime.queueDepth;
    this.queue.setDepth(this.queueDepth);
    if (!spec.batch && spec.dynamicBatch) {
      const b = batchFor(this.runtime.providersFor(spec, true), { ...this.runtime.batch, ...spec.batchLimits });
      this.batching = { maxBatch: this.batching.maxBatch, maxWaitMs: b.maxWaitMs };
      // Its queue batches once the graph took its batch axis; until then it takes the batching when it does.
      if (this.queue.batch.maxBatch > 1) this.queue.setBatch(this.queue.batch.maxBatch, b.maxWaitMs);
    }
    this.armIdleTimer();
    return true;
  }

  /** Releases one session let go by a lower count (once it has loaded, if it was loading), and ends its worker. */
  private dropSession(key: number, loaded: Promise<Loaded | undefined>): Promise<void> {
    const done = (async () => {
      try {
        const l = await loaded;
        if (l?.worker.alive)
          await l.worker.call(
            { op: 'release', model: this.sessionName },
            `releasing a session of model ${this.spec.id}`,
          );
      } catch {
        /* a worker that died has nothing loaded */
      }
      await this.runtime.retireWorkerAt(this.sessionName, key);
    })().finally(() => {
      if (this.dropping.get(key) === done) this.dropping.delete(key);
    });
    this.dropping.set(key, done);
    return done;
  }
  /** Sessions being let go by key: a session loading again under the key waits until its worker has ended. */
  private readonly dropping = new Map<number, Promise<void>>();

  get id(): string {
    return this.spec.id;
  }
  get pending(): number {
    return this.queue.pending;
  }
  /** Items waiting now in each lane of the queue. */
  get lanes(): Record<RunPriority, number> {
    return { interactive: this.queue.pendingIn('interactive'), background: this.queue.pendingIn('background') };
  }

  /**
   * The model loaded in its worker, loaded on first call and cached; a failed load, or a worker that has
   * died since, loads again on the next call.
   */
  async session(): Promise<LoadedModel> {
    return (await this.replicas.primary()).model;
  }

  /** Most sessions of this model that run at once. */
  get maxSessions(): number {
    return this.replicas.max;
  }
  /** Sessions loaded now. */
  get loadedSessions(): number {
    return this.replicas.loadedCount;
  }

  /** Sessions loaded now by where they run: 'cpu', or the GPU's ordinal. */
  sessionsByDevice(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const { model } of this.replicas.loaded) {
      const where = model.device === undefined ? 'cpu' : String(model.device);
      out[where] = (out[where] ?? 0) + 1;
    }
    return out;
  }

  /** The batching in force now (a detector's rises to `batching` once its graph took a batch axis). */
  get batchInForce(): BatchSettings {
    return this.queue.batch;
  }

  /**
   * What sessions load: the prepared file as it is (an int8 graph made float first where the runtime's
   * `dequantize` says so), or, for a model that takes dynamic batching at more than one image a call, its graph
   * with a free first axis. A graph the rewrite refuses (or whose rows would
   * influence each other in a batch) keeps one image a call, with a warning that says why. Last, a detector's
   * graph may take its image as bytes (withBytesInput; imageInput says which).
   */
  private graph(): Promise<Uint8Array | string> {
    this.source ??= (async () => {
      const rt = this.runtime,
        id = this.spec.id;
      const providers = rt.providersFor(this.spec, true);
      const src = await this.spec.load();
      if (!this.bytesPre && rt.imagePreprocess && rewriteApplies(rt.uint8Input, providers)) {
        // A preprocessing the model's files do not give stays unknown: the graph keeps its float input.
        const pre = await rt.imagePreprocess(id).catch(() => undefined);
        if (pre && !this.bytesPre) this.bytesPre = bytesPreprocess(pre);
      }
      this.madeWithOffer = this.bytesPre !== undefined;
      // An unreadable file is left for the session to refuse with its own words.
      const io = await (async () => (typeof src === 'string' ? readOnnxIoFromFile(src) : readOnnxInfo(src)))().catch(
        () => ({ inputs: [], outputs: [] }),
      );
      const plan = graphPlan({
        dequantize: rt.dequantize,
        fp16: rt.fp16,
        uint8Input: rt.uint8Input,
        providers,
        batchAxis: !this.spec.batch && !!this.spec.dynamicBatch && this.batching.maxBatch > 1,
        float16: !!this.spec.float16,
        float16Io: [...io.inputs, ...io.outputs].some((t) => t.elemType === ELEM_FLOAT16),
        engineFp16: rt.engineFp16(providers),
        pre: this.bytesPre,
        yoloOutputs:
          this.spec.detector && rt.reduceYoloOutput ? io.outputs.filter(reducibleOutput).map((o) => o.name) : undefined,
      });
      const made = plansAnything(plan)
        ? await rt
            .workerFor(replicaKey(this.sessionName, 0))
            .call<GraphOutcome>({ op: 'graph', source: src, plan }, `preparing the graph of model ${id}`)
        : undefined;
      const refused = made?.refused ?? {};
      const warn = (why: string | undefined, what: string) => {
        if (why) rt.warn({ model: id, reason: why }, `model ${id} ${what}: ${why}`);
      };
      warn(refused.float16Export, 'keeps its float16 inputs and outputs');
      warn(refused.dequantize, 'keeps its int8 graph');
      warn(refused.batchAxis, 'runs one image a call');
      warn(refused.fp16, 'runs in float32');
      warn(refused.uint8, 'takes its image as float32');
      warn(refused.bestClass, 'hands its whole output to the decoder');
      if (refused.batchAxis) this.batchRefused = refused.batchAxis;
      if (made?.batched) this.queue.setBatch(this.batching.maxBatch, this.batching.maxWaitMs);
      this.bytesInput = made?.uint8 ?? false;
      return made?.bytes ?? src;
    })();
    // A failed read is tried again by the next load.
    this.source.catch(() => {
      this.source = undefined;
    });
    return this.source;
  }

  /**
   * A detector's preprocessing ((pixel * scale - mean) / std, channel order, layout), for a graph that takes
   * its image as bytes and does that itself where the runtime's `uint8Input` says so. It counts when the graph
   * is made; a server's runtime also finds it through `imagePreprocess` when a model loads before any detector
   * was made for it (a preload, the add check).
   */
  offerBytesInput(pre: Uint8Preprocess): void {
    if (this.bytesPre) return;
    this.bytesPre = bytesPreprocess(pre);
    if (this.replicas.loadedCount === 0 && !this.replicas.loading) this.source = undefined;
  }

  /**
   * Which image input the graph that sessions load takes: 'uint8' (NHWC RGB bytes, normalised in the graph)
   * or 'float32' (the model's own). Makes the graph (no session) when it is not made yet.
   */
  async imageInput(): Promise<'uint8' | 'float32'> {
    await this.graph();
    return this.bytesInput ? 'uint8' : 'float32';
  }

  private async loadReplica(key: number): Promise<Loaded> {
    await this.dropping.get(key);
    const src = await this.graph();
    const rt = this.runtime;
    // The first session gets every intra-op thread (one client's latency); further ones share the cores.
    const threads = key === 0 ? rt.intraOpThreads : narrowThreads(rt.intraOpThreads, this.replicas.max);
    const l = await rt.createSession(
      this.spec.id,
      src,
      rt.providersFor(this.spec),
      key,
      threads,
      rt.devicesFor(this.spec, key > 0),
      this.sessionName,
      // The most rows a call carries: a batch padded up to its largest size, or the batching's most.
      Math.max(this.queue.batch.maxBatch, ...(this.batchSizes() ?? [])),
    );
    if (this.warmsUp(l.model.providers)) l.model.warmup = await this.warmUp(l, key);
    this.armIdleTimer();
    return l;
  }

  /**
   * The batch sizes this model's sessions run on these providers (default: where it is meant to run), or
   * null for every size (and for a model that runs one item a call).
   */
  batchSizes(providers?: string[]): number[] | null {
    const eps = providers ?? this.runtime.providersFor(this.spec, true);
    const maxBatch = this.queue.batch.maxBatch;
    // Asked for at every batch: made once per provider and most (the most rises once the graph is made).
    const key = `${eps[0]}\u0000${maxBatch}`;
    if (this.sizesMemo?.key !== key)
      this.sizesMemo = { key, sizes: batchSizesFor(eps, maxBatch, this.spec.batchSizes ?? this.runtime.batchSizes) };
    return this.sizesMemo.sizes;
  }
  private sizesMemo: { key: string; sizes: number[] | null } | undefined;

  /** Whether a session on these providers warms up as it loads. */
  private warmsUp(providers: string[]): boolean {
    const mode = this.spec.warmup ?? this.runtime.warmup;
    return mode === 'on' || (mode === 'auto' && usesGpu(providers));
  }

  /**
   * Runs each batch size the session will meet once on blank inputs, largest first (warmupOrder), before it
   * serves: a GPU provider's work for a new shape is done here rather than in a request. A graph whose
   * inputs cannot be made blank (a dimension the image sets, as OCR's) is skipped with a line that says
   * why; a warm-up run that fails leaves the session serving as it is, with a warning.
   */
  private async warmUp(l: Loaded, key: number): Promise<Warmup> {
    const id = this.spec.id;
    const sizes = warmupOrder(
      this.batchSizes(l.model.providers) ?? Array.from({ length: this.queue.batch.maxBatch }, (_, k) => k + 1),
    );
    try {
      const done = await l.worker.call<{ ms: number[] } | { skipped: string }>(
        { op: 'warmup', model: this.sessionName, sizes },
        `warming up model ${id}`,
      );
      if ('skipped' in done) {
        this.runtime.info(
          { model: id, replica: key, reason: done.skipped },
          `model ${id}: session ${key + 1} not warmed up: ${done.skipped}`,
        );
        return done;
      }
      const ms = done.ms.map((x) => Math.round(x * 10) / 10);
      this.runtime.info(
        { model: id, replica: key, sizes, ms },
        `model ${id}: session ${key + 1} warmed up at batch sizes ${sizes.join(', ')} in ${Math.round(done.ms.reduce((a, b) => a + b, 0))} ms`,
      );
      return { sizes, ms };
    } catch (e) {
      const why = (e as Error).message.split('\n')[0]!.slice(0, 300);
      this.runtime.warn(
        { model: id, replica: key, reason: why },
        `model ${id}: session ${key + 1} not warmed up: ${why}`,
      );
      return { skipped: why };
    }
  }

  /** Drops the cached sessions (their workers are gone or going). */
  forget(): void {
    void this.replicas.takeAll();
  }

  /** Items dropped from the queue unrun because their request's signal fired. */
  get dropped(): number {
    return this.queue.dropped;
  }

  /** Throws the 503 a run would get now, when this caller's lane of the queue is full (check before costly preparation). */
  checkRoom(priority: RunPriority = 'interactive'): void {
    this.queue.checkRoom(priority);
  }

  /**
   * Runs through the model's bounded queue in the lane of the context's priority; a full lane rejects at once
   * with 503 overloaded_error. The context's signal drops the item if it fires before the run starts.
   * Feeds may be deferred (a function): they are made when the run starts, so a large input is not held
   * while the run waits; a dropped item's are never made. Whatever they read must stay as it is until then.
   */
  run(feeds: Feeds | DeferredFeeds, outputs?: string[], ctx: RunContext = {}, opts: RunOptions = {}): Promise<Outputs> {
    const t0 = performance.now();
    this.requests++;
    this.stopIdleTimer();
    const done = this.queue.submit(
      { feeds, outputs, transfer: opts.transfer, decode: opts.decode },
      ctx.signal,
      ctx.priority ?? 'interactive',
    );
    done
      .then(
        () => this.record(performance.now() - t0),
        () => {
          this.errors++;
        },
      )
      .finally(() => {
        this.lastUsedAt = Date.now();
        this.armIdleTimer();
      });
    return done;
  }

  private record(ms: number): void {
    if (this.latencies.length < 256) this.latencies.push(ms);
    else this.latencies[this.latencyAt++ % 256] = ms;
  }

  /** Idle unload after the model's (or the runtime's) idle time, counted from the last run that ended. */
  get idleUnloadMs(): number {
    return this.spec.idleUnloadMs ?? this.runtime.idleUnloadMs;
  }

  private armIdleTimer(): void {
    this.stopIdleTimer();
    if (this.retired) return;
    const ms = this.idleUnloadMs;
    if (!(ms > 0) || this.replicas.loadedCount === 0) return;
    this.idleTimer = setTimeout(() => {
      this.idleTimer = undefined;
      if (this.queue.pending > 0 || this.queue.active > 0) return; // a run started meanwhile re-arms it
      void this.unload().catch(() => {
        /* a worker that died has nothing loaded anyway */
      });
    }, ms);
    this.idleTimer.unref();
  }

  stopIdleTimer(): void {
    if (this.idleTimer) clearTimeout(this.idleTimer);
    this.idleTimer = undefined;
  }

  /**
   * Let go by the runtime (runtime.unregister): the runs waiting or running on it finish on its sessions, at
   * most `drainMs` (then those left fail as an unload fails them), and its sessions and worker threads go.
   */
  async retire(drainMs = 60_000): Promise<void> {
    this.retired = true;
    this.stopIdleTimer();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.queue.whenIdle(),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, drainMs);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
    await this.unload();
  }

  /** Releases the session and, with one worker per model, ends its worker thread: the memory goes back. */
  async unload(): Promise<void> {
    this.stopIdleTimer();
    // Counted as the sessions are taken, not once they are gone: the state reads unloaded from then on, and a
    // reader of both saw the count lag the state while the worker ended.
    if (this.replicas.loadedCount > 0 || this.replicas.loading) this.unloads++;
    // Its workers leave the pool first: a run that comes while they end loads the model again in new ones.
    const workers = this.runtime.detachWorkers(this.sessionName, this.replicas.keys);
    await this.release();
    for (const w of workers) await w.terminate();
    // A graph made before a detector offered its preprocessing is made again, with it, at the next load.
    if (this.bytesPre && !this.madeWithOffer) this.source = undefined;
  }

  /** Serving state and counters. */
  state(): ModelState {
    const sorted = [...this.latencies].sort((a, b) => a - b);
    const l = this.replicas.loadedPrimary?.model;
    return {
      state: l ? 'loaded' : this.replicas.loading ? 'loading' : 'unloaded',
      providers: l?.providers ?? null,
      devices: devicesOf(this.replicas.loaded.map((r) => r.model)),
      engine: l ? { kind: l.engine, cuda_graphs: l.cudaGraph ?? null, pinned_inputs: l.pinnedInputs ?? null } : null,
      sessions: { loaded: this.replicas.loadedCount, max: this.replicas.max },
      batch: {
        max_size: this.queue.batch.maxBatch,
        max_delay_ms: this.queue.batch.maxWaitMs,
        sizes: this.batchSizes(l?.providers),
      },
      warmup: !l?.warmup ? null : 'skipped' in l.warmup ? l.warmup : { batch_sizes: l.warmup.sizes, ms: l.warmup.ms },
      memory_bytes: l?.memoryBytes ?? null,
      loaded_at: l ? new Date(l.loadedAt).toISOString() : null,
      last_used_at: this.lastUsedAt ? new Date(this.lastUsedAt).toISOString() : null,
      requests: this.requests,
      errors: this.errors,
      p50_ms: sorted.length ? Math.round(sorted[Math.floor((sorted.length - 1) / 2)]! * 10) / 10 : null,
      queue_depth: this.depth,
      pending: this.queue.pending,
      idle_unload_s: this.idleUnloadMs / 1000,
      unloads: this.unloads,
    };
  }

  /**
   * A session whose CUDA graphs stopped at a run (the native engine goes on with plain runs on its card): its
   * serving state says so from now, and the log says why, once.
   */
  private graphChanged(l: Loaded): void {
    const change = l.worker.takeGraphChange(this.sessionName);
    if (!change) return;
    l.model.cudaGraph = change;
    this.runtime.warn(
      { model: this.spec.id, device: l.model.device, reason: change.note },
      `model ${this.spec.id}: CUDA graphs stopped; its session runs without them: ${change.note ?? 'no reason given'}`,
    );
  }

  /** Session runs and the inputs they carried (runs < items when micro-batching merged some). */
  readonly stats = { runs: 0, items: 0, padded: 0 };

  private async runNow(item: ReadyItem, items = 1): Promise<Outputs> {
    // Compute time starts once a session is lent: waiting for one (or for a further one to load) is not compute.
    const replica = await this.replicas.acquire();
    let out: Record<string, WireTensor>;
    try {
      this.stats.runs++;
      this.stats.items += items;
      const transfer: ArrayBuffer[] = [];
      const feeds = packTensors(item.feeds, item.transfer ?? false, transfer);
      const t0 = performance.now();
      out = await replica.loaded!.worker.call<Record<string, WireTensor>>(
        {
          op: 'run',
          model: this.sessionName,
          feeds,
          outputs: item.outputs,
          ...(items === 1 && item.decode ? { decode: item.decode } : {}),
        },
        `model ${this.spec.id} run`,
        transfer,
      );
      observeExecution(this.spec.id, items, performance.now() - t0);
      this.graphChanged(replica.loaded!);
    } finally {
      this.replicas.release(replica);
    }
    const outputs: Outputs = {};
    for (const [k, t] of Object.entries(out)) outputs[k] = new ort.Tensor(t.type, t.data as never, t.dims);
    return outputs;
  }

  /**
   * Concatenates every feed along axis 0, runs once, splits every output back along axis 0. Items whose
   * other dimensions differ (e.g. text crops of different widths) cannot share a tensor: each shape group
   * runs as its own call.
   */
  private async runBatched(items: ReadyItem[]): Promise<Outputs[]> {
    const key = (it: ReadyItem) =>
      JSON.stringify([Object.entries(it.feeds).map(([k, t]) => [k, t.type, t.dims.slice(1)]), it.outputs ?? null]);
    const groups = new Map<string, number[]>();
    items.forEach((it, i) => {
      const k = key(it);
      groups.set(k, [...(groups.get(k) ?? []), i]);
    });
    if (groups.size > 1) {
      const out: Outputs[] = new Array(items.length);
      for (const idx of groups.values()) {
        const res = await this.runGroup(idx.map((i) => items[i]));
        idx.forEach((i, j) => {
          out[i] = res[j];
        });
      }
      return out;
    }
    return this.runGroup(items);
  }

  /**
   * One session call for the group: each item's feeds cross as they are (shared memory stays shared, an
   * item's own buffers move when it hands them over) and the worker joins them along axis 0, so the main
   * thread copies nothing; each item gets its own rows of every output back, or a detector its decoded boxes.
   */
  private async runGroup(items: ReadyItem[]): Promise<Outputs[]> {
    if (items.length === 1) return [await this.runNow(items[0])];
    const replica = await this.replicas.acquire();
    // Blank rows up to the next batch size the session runs (where the model keeps to a few). Rows, not items:
    // an OCR item carries every crop of its page.
    const rows = items.reduce((n, it) => n + (Object.values(it.feeds)[0]?.dims[0] ?? 1), 0);
    const pad = paddedSize(rows, this.batchSizes(replica.loaded!.model.providers)) - rows;
    let out: Array<Record<string, WireTensor>>;
    try {
      this.stats.runs++;
      this.stats.items += items.length;
      this.stats.padded += pad;
      const transfer: ArrayBuffer[] = [];
      const wire = items.map((it) => ({
        feeds: packTensors(it.feeds, it.transfer ?? false, transfer),
        ...(it.decode ? { decode: it.decode } : {}),
      }));
      const t0 = performance.now();
      out = await replica.loaded!.worker.call<Array<Record<string, WireTensor>>>(
        {
          op: 'runBatch',
          model: this.sessionName,
          items: wire,
          outputs: items[0].outputs,
          ...(pad ? { pad } : {}),
        },
        `model ${this.spec.id} run`,
        transfer,
      );
      observeExecution(this.spec.id, items.length, performance.now() - t0, pad);
      this.graphChanged(replica.loaded!);
    } finally {
      this.replicas.release(replica);
    }
    return out.map((o) => {
      const outputs: Outputs = {};
      for (const [k, t] of Object.entries(o)) outputs[k] = new ort.Tensor(t.type, t.data as never, t.dims);
      return outputs;
    });
  }

  /** Releases this model's session in its worker (it loads again on the next run). */
  async release(): Promise<void> {
    for (const l of await Promise.all(this.replicas.takeAll())) {
      if (l?.worker.alive)
        await l.worker.call({ op: 'release', model: this.sessionName }, `releasing model ${this.spec.id}`);
    }
  }
}

/** The devices of these sessions, each once, in order; null when none runs on a GPU. */
function devicesOf(models: LoadedModel[]): number[] | null {
  const d = [...new Set(models.flatMap((m) => (m.device === undefined ? [] : [m.device])))].sort((a, b) => a - b);
  return d.length ? d : null;
}

/** Worker key of a model's k-th session: the first keeps the model's id (one worker per model as before). */
export function replicaKey(id: string, k: number): string {
  return k === 0 ? id : `${id}#${k + 1}`;
}

/** The normalisation fields of a detector's preprocessing, copied (a detector's spec carries more). */
function bytesPreprocess(pre: Uint8Preprocess): Uint8Preprocess {
  return { layout: pre.layout, channelOrder: pre.channelOrder, scale: pre.scale, mean: pre.mean, std: pre.std };
}
