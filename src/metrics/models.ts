// Inference metrics per model id (model ids are the registry's: bounded by the models installed). Executions,
// their batch sizes, queue waits and compute times are recorded as they happen; requests, errors, queue
// depth, loaded state and memory are read from the runtime's own counters (ModelHandle.state(), the same
// numbers GET /v1/models/:id shows as `serving`) when scraped.
import { collected, metricsOn, type Sample } from './registry.js';
import { BATCH_BUCKETS, HistogramFamily, LATENCY_BUCKETS, ValueFamily } from './series.js';

/** What the runtime tells about one registered model (a subset of runtime.ts ModelState). */
export interface ModelGaugeSource {
  id: string;
  /** Executions so far (ModelHandle.stats.runs). */
  runs: number;
  state: {
    state: 'unloaded' | 'loading' | 'loaded';
    memory_bytes: number | null;
    requests: number;
    errors: number;
    queue_depth: number;
    pending: number;
    unloads: number;
  };
  /** Items waiting now in each lane of the model's queue (each lane holds up to queue_depth). */
  lanes: Record<Lane, number>;
  /** Sessions loaded now by where they run: 'cpu' or a GPU's ordinal. */
  sessions?: Record<string, number>;
}

/** The model queue's lanes: a client's request, or a background task such as a camera's frames. */
export type Lane = 'interactive' | 'background';
const LANES: readonly Lane[] = ['interactive', 'background'];

const queueWait = new HistogramFamily(
  'sightflow_model_queue_wait_seconds',
  "Time an inference item waited in its model's queue (lane: interactive or background) before its execution started",
  LATENCY_BUCKETS,
);
const compute = new HistogramFamily(
  'sightflow_model_compute_seconds',
  'Time of one model execution in its session worker (a batch counts once)',
  LATENCY_BUCKETS,
);
const batchSize = new HistogramFamily(
  'sightflow_model_batch_size',
  'Items per model execution (above 1 when micro-batching merged requests)',
  BATCH_BUCKETS,
);
const padded = new ValueFamily(
  'sightflow_model_padded_items_total',
  "Blank images run to fill a batch up to one of the model's batch sizes (SIGHTFLOW_BATCH_SIZES; none on the CPU by default)",
);
const rejected = new ValueFamily(
  'sightflow_model_rejected_total',
  "Inference items refused at once because their lane of the model's queue was full (answered 503; a camera drops the frame)",
);

/** Items that waited in a queue (`at`: Date.now() when queued), as a batch starts; a batch may mix lanes. */
export function observeQueueWait(model: string, batch: ReadonlyArray<{ at: number; lane: Lane }>): void {
  if (!metricsOn) return;
  const now = Date.now();
  for (const b of batch) queueWait.get({ model, lane: b.lane }).observe((now - b.at) / 1000);
}

/** One execution: `items` real inputs, and `pad` blank ones that filled its batch size. */
export function observeExecution(model: string, items: number, ms: number, pad = 0): void {
  if (!metricsOn) return;
  compute.get({ model }).observe(ms / 1000);
  batchSize.get({ model }).observe(items);
  if (pad) padded.add({ model }, pad);
}

export function countRejected(model: string, lane: Lane): void {
  if (metricsOn) rejected.add({ model, lane });
}

let sources: Array<() => ModelGaugeSource[]> = [];
/** A runtime's registered models, read at scrape time. */
export function watchModels(read: () => ModelGaugeSource[]): () => void {
  sources.push(read);
  return () => {
    sources = sources.filter((f) => f !== read);
  };
}

function perModel(pick: (m: ModelGaugeSource) => number | null): () => Sample[] {
  return () =>
    sources
      .flatMap((f) => f())
      .flatMap((m) => {
        const v = pick(m);
        return v === null ? [] : [{ labels: { model: m.id }, value: v }];
      });
}

collected(
  'sightflow_model_requests_total',
  'Inference items submitted to a model (including rejected and failed ones)',
  'counter',
  perModel((m) => m.state.requests),
);
collected(
  'sightflow_model_errors_total',
  'Inference items that failed (rejected, cancelled or a failed execution)',
  'counter',
  perModel((m) => m.state.errors),
);
collected(
  'sightflow_model_executions_total',
  'Model executions (a micro-batch counts once)',
  'counter',
  perModel((m) => m.runs),
);
collected(
  'sightflow_model_sessions',
  'Sessions of a model loaded now, by the device they run on (cpu, or the GPU ordinal on a GPU provider)',
  'gauge',
  () =>
    sources
      .flatMap((f) => f())
      .flatMap((m) =>
        Object.entries(m.sessions ?? {}).map(([device, n]) => ({ labels: { model: m.id, device }, value: n })),
      ),
);
function perLane(pick: (m: ModelGaugeSource, lane: Lane) => number): () => Sample[] {
  return () =>
    sources
      .flatMap((f) => f())
      .flatMap((m) => LANES.map((lane) => ({ labels: { model: m.id, lane }, value: pick(m, lane) })));
}

collected(
  'sightflow_model_queue_pending',
  "Inference items waiting in a lane of a model's queue now",
  'gauge',
  perLane((m, lane) => m.lanes[lane]),
);
collected(
  'sightflow_model_queue_capacity',
  "Most items a lane of a model's queue holds; one more is refused with 503",
  'gauge',
  perLane((m) => m.state.queue_depth),
);
collected(
  'sightflow_model_loaded',
  'Whether a model is loaded in its worker now (1) or not (0)',
  'gauge',
  perModel((m) => (m.state.state === 'loaded' ? 1 : 0)),
);
collected(
  'sightflow_model_memory_bytes',
  'Process memory growth while a loaded model loaded, at least its weights (approximate)',
  'gauge',
  perModel((m) => m.state.memory_bytes),
);
collected(
  'sightflow_model_unloads_total',
  'Times a model was unloaded (idle unload or removal)',
  'counter',
  perModel((m) => m.state.unloads),
);
