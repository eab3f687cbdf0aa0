// What the inference runtime does on the host it runs on: which execution providers load, whether a GPU
// provider's outputs match the CPU's, and images/s of the built-in detectors by intra-op threads and
// sessions. For hosts other than the development machine (a GPU server, a many-core box): it needs only
// the built runtime and the prepared models, not the server, so it travels as a small bundle
// (scripts/device-bundle.sh). Prints a table; --json ends with one JSON line.
//   node bench/device/providers.js --models data/models [--seconds 3] [--gpu-only] [--batch 1,8,32] [--json]
// --gpu-only keeps the CPU row the GPU's outputs are checked against and skips the CPU threads/sessions sweep.
// --batch replaces the sweep with the in-process ceiling under dynamic batching at each maximum batch size, on
// every provider the host loads (--gpu-only: the GPU ones): clients submit one image each, as requests do, and
// the model's queue joins them; each row also checks that a batched run answers what a run alone does.
// --models-only=a,b names the models (any folder under --models with one .onnx; default the two built-in
// ones); --sessions=1,4 the sessions of the batch rows, each (default 1 on a GPU, the cores' default split on
// the CPU).
// --dequantize adds, for a model with an int8 graph, its rows with the graph made float as a GPU provider
// loads it (src/inference/dequantize-graph.ts) under the name `<model> (float)`; the model's own rows always
// run its graph as exported, whatever the provider.
// --uint8 adds, for a model whose bundle recorded its preprocessing (bench/device/inputs.ts), its rows with
// the graph as a GPU provider loads it under the settings' auto (made float with --dequantize, float16 with
// --fp16, where each applies) and given a uint8 NHWC RGB input that it normalises itself
// (src/inference/uint8-input.ts, as the detector feeds it on a GPU provider), named by its steps, e.g.
// `<model> (float, fp16, uint8)`: the photo crosses as a quarter of the bytes. Its other rows take floats.
// With --batch those rows run as the detector runs the model on a GPU server: the session's worker decodes each
// image's boxes (`<model> (..., uint8, decoded)`), from the output reduced in the graph where it is a YOLO one
// (src/inference/best-class.ts); such a model also gets the same rows decoded from its whole output
// (`..., decoded, whole output)`), which is what the reduction saves.
// --fp16 adds, for each float graph (a model's own, and with --dequantize its int8 graph made float), its rows
// with the graph run in float16 as a GPU provider loads it (src/inference/fp16-graph.ts) under the name
// `<model> (fp16)` (`<model> (float, fp16)`); its other rows run float32, whatever the provider.
// --engine native runs every row's sessions on the native ONNX Runtime engine (src/inference/native-session.ts:
// TensorRT in FP16 with its caches, the CUDA provider's settings), its providers column marked `[native]`;
// --cuda-graphs adds CUDA graphs on the CUDA provider (`[native, CUDA graphs]` where the session replays them;
// a session that cannot says why in the row's `cuda_graph_note`). Each native row on a card also answers the photo
// once more after its timed runs (`again_same`) and sets its answer against the CPU's through the binding
// (`vs_cpu`); --native-checks does both on the CPU too.
// --server-rows keeps only each model's rows as a GPU server runs it (with --dequantize --fp16 --uint8 --batch: the
// graph made float, in float16, taking bytes, decoded in the worker), not the rows of each step; --detail-rows keeps
// the others (each step's rows), so a check can run the rows its goals need first and the rest as time allows.
// --until=EPOCH_MS starts no row after that moment: the rows not run are listed in the JSON's `skipped_rows`.
// --json-file=FILE writes the JSON after every row as well, so a run stopped from outside leaves the rows it made.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { availableProviders } from '../../src/inference/execution-providers.js';
import type { EngineSettings } from '../../src/inference/native-session.js';
import { InferenceRuntime, Tensor, type LoadedModel, type RuntimeOptions } from '../../src/inference/runtime.js';
import { dequantizeGraph } from '../../src/inference/dequantize-graph.js';
import { withFloat16 } from '../../src/inference/fp16-graph.js';
import type { Uint8Preprocess } from '../../src/inference/uint8-input.js';
import { reducibleOutput } from '../../src/inference/best-class-output.js';
import { readOnnxInfo } from '../../src/inference/onnx-metadata.js';
import { DECODED_BOXES, detectLayout, impliedClassCount, type DecodeOptions } from '../../src/detection/yolo.js';

interface Args {
  models: string;
  seconds: number;
  json: boolean;
  gpuOnly: boolean;
  batch?: number[];
  only?: string[];
  sessions?: number[];
  waitMs: number;
  dequantize: boolean;
  uint8: boolean;
  fp16: boolean;
  engine: 'binding' | 'native';
  cudaGraphs: boolean;
  serverRows: boolean;
  detailRows: boolean;
  until?: number;
  jsonFile?: string;
}

function parseArgs(argv: string[]): Args {
  const out: Args = {
    models: 'data/models',
    seconds: 3,
    json: false,
    gpuOnly: false,
    waitMs: 2,
    dequantize: false,
    uint8: false,
    fp16: false,
    engine: 'binding',
    cudaGraphs: false,
    serverRows: false,
    detailRows: false,
  };
  for (let i = 0; i < argv.length; i++) {
    let [k, v] = argv[i]!.replace(/^--/, '').split('=');
    // `--flag value` as well as `--flag=value`
    if (
      v === undefined &&
      ['models', 'seconds', 'batch', 'models-only', 'sessions', 'wait-ms', 'engine', 'until', 'json-file'].includes(
        k!,
      ) &&
      argv[i + 1] &&
      !argv[i + 1]!.startsWith('--')
    )
      v = argv[++i];
    if (k === 'models' && v) out.models = v;
    else if (k === 'seconds' && v) out.seconds = Number(v);
    else if (k === 'json') out.json = true;
    else if (k === 'gpu-only') out.gpuOnly = true;
    else if (k === 'dequantize') out.dequantize = true;
    else if (k === 'uint8') out.uint8 = true;
    else if (k === 'fp16') out.fp16 = true;
    else if (k === 'cuda-graphs') out.cudaGraphs = true;
    else if (k === 'native-checks') nativeChecksOnCpu = true;
    else if (k === 'server-rows') out.serverRows = true;
    else if (k === 'detail-rows') out.detailRows = true;
    else if (k === 'until' && v) out.until = Number(v);
    else if (k === 'json-file' && v) out.jsonFile = v;
    else if (k === 'engine' && (v === 'binding' || v === 'native')) out.engine = v;
    else if (k === 'engine') throw new Error(`--engine takes binding or native, not ${v}`);
    else if (k === 'batch' && v)
      out.batch = v
        .split(',')
        .map(Number)
        .filter((n) => n >= 1);
    else if (k === 'models-only' && v) out.only = v.split(',');
    else if (k === 'sessions' && v)
      out.sessions = v
        .split(',')
        .map(Number)
        .filter((n) => n >= 1);
    else if (k === 'wait-ms' && v) out.waitMs = Number(v);
  }
  if (out.serverRows && out.detailRows)
    throw new Error('--server-rows and --detail-rows each keep what the other drops');
  if (out.until !== undefined && !(out.until > 0)) throw new Error('--until takes a time in milliseconds since 1970');
  return out;
}

/** Rows not started because --until had passed: model, providers, sessions and batch, as the table names them. */
const skippedRows: string[] = [];

/** Whether --until has passed (no row starts after it); the row's name is recorded as skipped when it has. */
function late(args: Args, row: string): boolean {
  if (args.until === undefined || Date.now() < args.until) return false;
  skippedRows.push(row);
  return true;
}

const log = {
  info: (o: object, msg: string) => console.error(`info: ${msg} ${JSON.stringify(o)}`),
  warn: (o: object, msg: string) => console.error(`warn: ${msg} ${JSON.stringify(o)}`),
};

/** A deterministic input in [0, 1) (random-looking, never zeros: zeros can run faster than real data). */
function input(dims: number[]): Float32Array {
  const n = dims.reduce((a, b) => a * b, 1);
  const out = new Float32Array(n);
  let s = 12345;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    out[i] = (s >>> 8) / 16777216;
  }
  return out;
}

interface Row {
  model: string;
  providers: string;
  threads: number;
  sessions: number;
  clients: number;
  images_per_s: number;
  p50_ms: number;
  split: boolean;
  batch?: number;
  p99_ms?: number;
  images_per_call?: number;
  /** The row could not run (a provider that failed to load, a graph it refused): why, and no figures. */
  error?: string;
  /** --cuda-graphs: why the session runs without them. */
  cuda_graph_note?: string;
}

/** One in-process ceiling row under dynamic batching, and whether the batched answers equal runs alone. */
interface BatchRow extends Row {
  batch: number;
  same_as_alone: boolean | null;
  /** The first run alone and the first full batch after the session loaded: each a new input shape. */
  first_run_ms?: number;
  first_batch_ms?: number | null;
  /** Blank images a call added to reach a batch size the session keeps to. */
  padded_per_call?: number;
  refused?: string;
  /** Native engine on a card: the photo answered the same after the timed runs as before them. */
  again_same?: boolean;
  /** Native engine on a card: the photo's answer against the CPU's (boxes as a set, else the relative L2). */
  vs_cpu?: { detections?: ReturnType<typeof compareDetections>; rel_l2?: number };
}

/** A real photo's input tensor written beside the model by bench/device/inputs.ts, when the bundle has one. */
function photoInput(file: string, dims: number[]): Float32Array | undefined {
  const dir = dirname(file);
  if (!existsSync(join(dir, 'input.f32'))) return undefined;
  const want = JSON.parse(readFileSync(join(dir, 'input.json'), 'utf8')) as { dims: number[] };
  if (want.dims.join() !== dims.join())
    throw new Error(`${dir}/input.f32 is [${want.dims}], the model takes [${dims}]`);
  const b = readFileSync(join(dir, 'input.f32'));
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** The preprocessing bench/device/inputs.ts recorded beside the model, for its rows with a uint8 input. */
function recordedPre(file: string): Uint8Preprocess | undefined {
  const json = join(dirname(file), 'input.json');
  if (!existsSync(json)) return undefined;
  return (JSON.parse(readFileSync(json, 'utf8')) as { pre?: Uint8Preprocess }).pre;
}

/** The photo as bytes (input.u8), when the bundle has it; else deterministic bytes of the model's input size. */
function photoBytes(file: string, dims: number[]): Uint8Array {
  const u8 = join(dirname(file), 'input.u8');
  const n = dims.reduce((a, b) => a * b, 1);
  if (existsSync(u8)) {
    const b = readFileSync(u8);
    if (b.length !== n) throw new Error(`${u8} has ${b.length} bytes, the model takes [${dims}]`);
    return new Uint8Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  }
  return Uint8Array.from(input(dims), (v) => Math.floor(v * 256));
}

/** A model's input in shared memory, as the detector makes it: float32, or bytes for a graph that takes them. */
function sharedFeed(x: Float32Array | Uint8Array): Float32Array | Uint8Array {
  const s =
    x instanceof Uint8Array
      ? new Uint8Array(new SharedArrayBuffer(x.byteLength))
      : new Float32Array(new SharedArrayBuffer(x.byteLength));
  s.set(x);
  return s;
}

/**
 * A runtime on these providers, threads and sessions, logging to stderr; `more`: the rest of its options. No
 * warm-up at load: the rows time each new shape's first run themselves (first_run_ms, first_batch_ms), which
 * is what the server's warm-up moves to a session's load.
 */
const runtime = (providers: string[], threads: number, sessions: number, more: RuntimeOptions) =>
  new InferenceRuntime({
    providers,
    intraOpThreads: threads,
    sessions,
    log,
    available: availableProviders(),
    warmup: 'off',
    ...(engine ? { engine } : {}),
    ...more,
  });

/** The engine every row runs on (--engine native); unset: the binding. */
let engine: EngineSettings | undefined;
/** --native-checks: the native rows' checks on the CPU too (the dry run's, so they cannot rot). */
let nativeChecksOnCpu = false;

/** Where a session ran: its providers, marked with the native engine and its CUDA graphs where they ran there. */
function ranOn(loaded: LoadedModel): string {
  if (!engine) return loaded.providers.join(',');
  return `${loaded.providers.join(',')} [native${loaded.cudaGraph?.on ? ', CUDA graphs' : ''}]`;
}

/** A CUDA graph the session was asked for and does not replay: why, for the row. */
const graphNote = (loaded: LoadedModel) =>
  loaded.cudaGraph && !loaded.cudaGraph.on ? { cuda_graph_note: loaded.cudaGraph.note ?? 'off' } : {};

/** The loaded session and its first input, with dimensions that are not fixed taken as 1. */
async function firstInput(model: string, h: { session(): Promise<LoadedModel> }) {
  const loaded = await h.session();
  const meta = loaded.inputMetadata?.[0];
  if (!meta) throw new Error(`${model}: no input metadata`);
  const dims = (meta.shape ?? []).map((d) => (typeof d === 'number' ? d : 1));
  return { loaded, meta, dims };
}

/**
 * `clients` concurrent callers of `run` for `seconds`, each starting its next call when the last one is back:
 * the calls' latencies (sorted, milliseconds), how many were done and the wall time (seconds).
 */
async function timedClients(
  clients: number,
  seconds: number,
  run: () => Promise<unknown>,
): Promise<{ lat: number[]; done: number; wall: number }> {
  const lat: number[] = [];
  let done = 0;
  const until = performance.now() + seconds * 1000;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const t0 = performance.now();
        await run();
        lat.push(performance.now() - t0);
        done++;
      }
    }),
  );
  const wall = (performance.now() - started) / 1000;
  lat.sort((a, b) => a - b);
  return { lat, done, wall };
}

/** split: overlapping runs keep off the wide session (the runtime's default); false lends every session alike. */
async function measure(
  model: string,
  file: string,
  providers: string[],
  threads: number,
  sessions: number,
  clients: number,
  seconds: number,
  split = true,
  float = false,
  bytes?: Uint8Preprocess,
  half = false,
): Promise<{ row: Row; first: Float32Array; dims: readonly number[]; ran: string[] }> {
  const rt = runtime(providers, threads, sessions, {
    splitCores: split,
    dequantize: float ? 'on' : 'off',
    uint8Input: bytes ? 'on' : 'off',
    fp16: half ? 'on' : 'off',
  });
  try {
    const h = rt.register({ id: model, load: async () => file, float16: half });
    if (bytes) h.offerBytesInput(bytes);
    const { loaded, meta, dims } = await firstInput(model, h);
    const data = bytes ? photoBytes(file, dims) : (photoInput(file, dims) ?? input(dims));
    const feeds = () => ({
      [meta.name]:
        data instanceof Uint8Array
          ? new Tensor('uint8', data.slice(), dims)
          : new Tensor('float32', data.slice(), dims),
    });
    const out0 = (await h.run(feeds()))[loaded.outputNames[0]];
    const first = out0.data as Float32Array;
    for (let i = 0; i < 2; i++) await h.run(feeds()); // warm-up
    // With several sessions, the clients' load first (untimed) until the runs that overlap have loaded theirs.
    for (let i = 0; i < 20 && sessions > 1 && h.loadedSessions < (split ? sessions + 1 : sessions); i++) {
      await Promise.all(Array.from({ length: clients }, () => h.run(feeds())));
    }
    const { lat, done, wall } = await timedClients(clients, seconds, () => h.run(feeds()));
    return {
      row: {
        model,
        providers: ranOn(loaded),
        ...graphNote(loaded),
        threads,
        sessions,
        clients,
        images_per_s: +(done / wall).toFixed(2),
        p50_ms: +lat[Math.floor(lat.length / 2)].toFixed(1),
        split,
      },
      first,
      dims: out0.dims,
      ran: loaded.providers,
    };
  } finally {
    await rt.release();
  }
}

/**
 * The in-process ceiling with dynamic batching at most `batch` images a call: `sessions * batch * 2` clients
 * each submit one image at a time (as requests do) and the model's queue joins them. Before timing, the
 * first image run alone and inside a full batch must answer the same (within float tolerance).
 */
async function measureBatch(
  model: string,
  file: string,
  providers: string[],
  threads: number,
  sessions: number,
  batch: number,
  waitMs: number,
  seconds: number,
  float = false,
  bytes?: Uint8Preprocess,
  half = false,
  decode?: Decode,
): Promise<BatchRow> {
  const rt = runtime(providers, threads, sessions, {
    batch: { maxBatch: batch, maxWaitMs: waitMs },
    dequantize: float ? 'on' : 'off',
    uint8Input: bytes ? 'on' : 'off',
    fp16: half ? 'on' : 'off',
    reduceYoloOutput: decode?.reduce ?? false,
  });
  try {
    const h = rt.register({
      id: model,
      load: async () => file,
      dynamicBatch: true,
      float16: half,
      detector: !!decode,
    });
    if (bytes) h.offerBytesInput(bytes);
    const { loaded, meta, dims } = await firstInput(model, h);
    // Inputs in shared memory, as the detector makes them: they cross to the session's worker as they are and
    // the worker copies them into the batch, so this thread copies nothing per image.
    const data = sharedFeed(bytes ? photoBytes(file, dims) : (photoInput(file, dims) ?? input(dims)));
    const noise = input(dims);
    const other = sharedFeed(bytes ? Uint8Array.from(noise, (v) => Math.floor(v * 256)) : noise);
    const feeds = (d = data) => ({
      [meta.name]: d instanceof Uint8Array ? new Tensor('uint8', d, dims) : new Tensor('float32', d, dims),
    });
    // Decoded as a detector decodes (its boxes from the session's worker), or the graph's first output.
    const name = decode ? DECODED_BOXES : loaded.outputNames[0]!;
    const runOpts = decode ? { decode: { output: loaded.outputNames[0]!, options: decode.options } } : {};
    const run = (d?: Float32Array | Uint8Array) => h.run(feeds(d), undefined, {}, runOpts);
    // The first run of each input shape: on a GPU, the provider picks its kernels for a shape when it first
    // meets it (cuDNN's search), a cost every new batch size pays once; these say what a warm-up would save.
    let t0 = performance.now();
    const alone = (await run())[name]!.data as Float32Array | Float64Array;
    const firstRunMs = performance.now() - t0;
    let firstBatchMs: number | null = null;
    let same: boolean | null = null;
    if (h.batchInForce.maxBatch > 1) {
      t0 = performance.now();
      const outs = await Promise.all(Array.from({ length: batch }, (_, i) => run(i % 2 ? other : data)));
      firstBatchMs = performance.now() - t0;
      const first = outs[0]![name]!.data as Float32Array | Float64Array;
      const sameSet = () => {
        const c = compareDetections(first, alone);
        return c.matched === c.detections;
      };
      // Decoded boxes: the confident ones as a set (a box near the threshold may be in one list only).
      same = decode
        ? sameSet()
        : first.length === alone.length &&
          (outs[0]![name]!.dims.at(-1) === 6 && first.length % 6 === 0
            ? sameSet()
            : // float16 keeps 11 bits: a kernel chosen for the batch size rounds differently from the one alone.
              maxRelDiff(first as Float32Array, alone as Float32Array) < (half ? 5e-3 : 1e-4));
    }
    const clients = Math.max(1, sessions * batch * 2);
    for (let i = 0; i < 2; i++) await Promise.all(Array.from({ length: clients }, () => run())); // warm-up, further sessions load
    const runs0 = h.stats.runs;
    const padded0 = h.stats.padded;
    const { lat, done, wall } = await timedClients(clients, seconds, () => run());
    // On the native engine on a card: the photo's answer after the timed runs (a CUDA graph replayed many times)
    // against its first, and that first against the CPU's (the binding on the same graph).
    let nativeChecks: Pick<BatchRow, 'again_same' | 'vs_cpu'> = {};
    if (engine && (providers[0] !== 'cpu' || nativeChecksOnCpu)) {
      const again = (await run())[name]!.data as Float32Array | Float64Array;
      const boxes = decode !== undefined || (alone.length % 6 === 0 && loaded.outputMetadata[0]?.shape?.at(-1) === 6);
      const cpu = await cpuAnswer(model, file, float, bytes, half, decode, name, runOpts);
      nativeChecks = {
        again_same: boxes
          ? compareDetections(again, alone).matched === compareDetections(again, alone).detections
          : maxRelDiff(again as Float32Array, alone as Float32Array) < (half ? 5e-3 : 1e-4),
        vs_cpu: boxes
          ? { detections: compareDetections(alone, cpu) }
          : { rel_l2: +maxRelDiff(alone as Float32Array, cpu as Float32Array).toExponential(2) },
      };
    }
    return {
      model,
      providers: ranOn(loaded),
      ...graphNote(loaded),
      ...nativeChecks,
      threads,
      sessions,
      clients,
      split: true,
      batch,
      images_per_s: +(done / wall).toFixed(2),
      p50_ms: +lat[Math.floor(lat.length / 2)]!.toFixed(1),
      p99_ms: +lat[Math.floor(lat.length * 0.99)]!.toFixed(1),
      images_per_call: +(done / Math.max(1, h.stats.runs - runs0)).toFixed(2),
      // Blank images a call added to reach one of the batch sizes the session keeps to (SIGHTFLOW_BATCH_SIZES).
      padded_per_call: +((h.stats.padded - padded0) / Math.max(1, h.stats.runs - runs0)).toFixed(2),
      same_as_alone: same,
      first_run_ms: +firstRunMs.toFixed(1),
      first_batch_ms: firstBatchMs === null ? null : +firstBatchMs.toFixed(1),
      ...(h.batchRefused ? { refused: h.batchRefused } : {}),
    };
  } finally {
    await rt.release();
  }
}

/** The photo's answer on the CPU through the binding, once per graph variant (the native rows' reference). */
const cpuAnswers = new Map<string, Float32Array | Float64Array>();
async function cpuAnswer(
  model: string,
  file: string,
  float: boolean,
  bytes: Uint8Preprocess | undefined,
  half: boolean,
  decode: Decode | undefined,
  name: string,
  runOpts: object,
): Promise<Float32Array | Float64Array> {
  const key = `${model}\u0000${file}`;
  const known = cpuAnswers.get(key);
  if (known) return known;
  const rt = runtime(['cpu'], availableParallelism(), 1, {
    engine: undefined,
    dequantize: float ? 'on' : 'off',
    uint8Input: bytes ? 'on' : 'off',
    fp16: half ? 'on' : 'off',
    reduceYoloOutput: decode?.reduce ?? false,
  });
  try {
    const h = rt.register({ id: model, load: async () => file, float16: half, detector: !!decode });
    if (bytes) h.offerBytesInput(bytes);
    const { loaded, meta, dims } = await firstInput(model, h);
    const d = bytes ? photoBytes(file, dims) : (photoInput(file, dims) ?? input(dims));
    const t = d instanceof Uint8Array ? new Tensor('uint8', d, dims) : new Tensor('float32', d, dims);
    const out = await h.run({ [meta.name]: t }, undefined, {}, decode ? runOpts : {});
    const answer = out[decode ? name : loaded.outputNames[0]!]!.data as Float32Array | Float64Array;
    cpuAnswers.set(key, answer);
    return answer;
  } finally {
    await rt.release();
  }
}

/**
 * A detections list ([1, N, 6]: x1, y1, x2, y2, score, class, sorted by score) compared as a set: rows whose
 * scores differ in the last bits may swap places, so an element-wise distance says nothing there. For each
 * CPU detection scoring at least 0.3, the same-class GPU detection that overlaps it most.
 */
function compareDetections(
  gpu: Float32Array | Float64Array,
  cpu: Float32Array | Float64Array,
): { detections: number; matched: number; min_iou: number; max_score_diff: number } {
  const rows = (d: Float32Array | Float64Array): (Float32Array | Float64Array)[] =>
    Array.from({ length: d.length / 6 }, (_, i) => d.subarray(i * 6, i * 6 + 6));
  const iou = (a: Float32Array | Float64Array, b: Float32Array | Float64Array) => {
    const w = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
    const h = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
    const inter = w * h;
    const union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    return union > 0 ? inter / union : 0;
  };
  const g = rows(gpu);
  let detections = 0,
    matched = 0,
    minIou = 1,
    maxScoreDiff = 0;
  for (const c of rows(cpu).filter((r) => r[4] >= 0.3)) {
    detections++;
    let best: Float32Array | Float64Array | undefined,
      bestIou = 0;
    for (const r of g)
      if (r[5] === c[5] && iou(r, c) > bestIou) {
        best = r;
        bestIou = iou(r, c);
      }
    minIou = Math.min(minIou, bestIou);
    if (best && bestIou >= 0.9) {
      matched++;
      maxScoreDiff = Math.max(maxScoreDiff, Math.abs(best[4] - c[4]));
    }
  }
  return { detections, matched, min_iou: +minIou.toFixed(4), max_score_diff: +maxScoreDiff.toExponential(2) };
}

function maxRelDiff(a: Float32Array, b: Float32Array): number {
  let num = 0,
    den = 0;
  for (let i = 0; i < a.length; i++) {
    num += (a[i] - b[i]) ** 2;
    den += b[i] ** 2;
  }
  return Math.sqrt(num / (den || 1));
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.engine === 'native') {
    // TensorRT's engines and timing caches for this run only: each row builds its own, as a first start does.
    const cacheDir = mkdtempSync(join(tmpdir(), 'sf-trt-cache-'));
    process.on('exit', () => rmSync(cacheDir, { recursive: true, force: true }));
    engine = { kind: 'native', tensorrtCacheDir: cacheDir, cudnnSearch: 'exhaustive', cudaGraph: args.cudaGraphs };
  }
  const cores = availableParallelism();
  const available = availableProviders();
  console.log(`cores ${cores}; providers this host can load: ${available.join(', ')}`);
  const rows: Row[] = [];
  const batchRows: BatchRow[] = [];
  const checks: Check[] = [];
  if (args.jsonFile) {
    const file = args.jsonFile;
    progress = () => writeFileSync(file, `${JSON.stringify(resultJson(args, rows, batchRows, checks))}\n`);
    progress();
  }
  for (const model of args.only ?? ['centernet-coco', 'yolov8n-int8']) {
    const dir = join(args.models, model);
    if (!existsSync(dir)) {
      console.log(`${model}: not in ${args.models}, skipped`);
      continue;
    }
    const onnx = readdirSync(dir).find((f) => f.endsWith('.onnx'));
    if (!onnx) throw new Error(`no .onnx in ${dir}`);
    const file = join(dir, onnx);
    const r = args.dequantize ? dequantizeGraph(new Uint8Array(readFileSync(file))) : undefined;
    if (r && !r.ok) console.log(`${model}: its graph stays int8 (${r.reason}), no float rows`);
    for (const float of r?.ok && r.changed ? [false, true] : [false]) {
      const name = float ? `${model} (float)` : model;
      if (args.serverRows) continue;
      await measureModel(args, name, file, float, { rows, batchRows, checks });
      if (!args.fp16) continue;
      const h = withFloat16(float && r?.ok ? r.bytes : new Uint8Array(readFileSync(file)));
      if (!h.ok) console.log(`${name}: no fp16 rows (${h.reason})`);
      else {
        const half = float ? `${model} (float, fp16)` : `${model} (fp16)`;
        await measureModel(args, half, file, float, { rows, batchRows, checks }, undefined, true);
      }
    }
    if (!args.uint8) continue;
    // The bytes rows run the graph as a GPU provider loads it under every setting's auto: an int8 graph made
    // float (--dequantize), in float16 (--fp16) where it takes it, and taking bytes; the rows above show each step.
    const pre = recordedPre(file);
    const made = r?.ok && r.changed;
    const half = args.fp16 && withFloat16(made ? r.bytes : new Uint8Array(readFileSync(file))).ok;
    const steps = [made && 'float', half && 'fp16', 'uint8'].filter(Boolean).join(', ');
    if (pre && args.batch) {
      // As the detector runs it on a GPU server: the session's worker decodes each image's boxes, from the
      // output reduced in the graph where it is a YOLO one (src/inference/best-class.ts); for such a model also
      // from its whole output, which is what the reduction saves.
      const d = decodeFor(file);
      const lists = { rows, batchRows, checks };
      if (!args.detailRows)
        await measureModel(args, `${model} (${steps}, decoded)`, file, !!made, lists, pre, half, {
          ...d,
          reduce: true,
        });
      if (d.reducible && !args.serverRows)
        await measureModel(args, `${model} (${steps}, decoded, whole output)`, file, !!made, lists, pre, half, {
          ...d,
          reduce: false,
        });
    } else if (pre) {
      // Unbatched, the bytes row is one step's own row (a server's rows are batched and decoded).
      if (!args.serverRows)
        await measureModel(args, `${model} (${steps})`, file, !!made, { rows, batchRows, checks }, pre, half);
    } else console.log(`${model}: no preprocessing recorded beside it (bench/device/inputs.ts), no uint8 rows`);
  }
  report(args, rows, batchRows, checks);
}

type Check = { model: string; provider: string; rel_l2: number; detections?: ReturnType<typeof compareDetections> };

/** A batch row's decoding as a detector's: its options, and whether the output is reduced in the graph. */
interface Decode {
  options: DecodeOptions;
  reduce: boolean;
}

/**
 * How a detector decodes the model's declared first output (a COCO detector: 80 classes where the shape does not
 * say), and whether that output is one the graph reduces (a YOLOv8 or YOLOv5 one).
 */
function decodeFor(file: string): { options: DecodeOptions; reducible: boolean } {
  const out = readOnnxInfo(new Uint8Array(readFileSync(file))).outputs[0];
  if (!out) throw new Error(`${file}: no outputs declared`);
  const dims = out.shape.map((d) => (typeof d === 'number' ? d : 1));
  const numClasses = impliedClassCount(out.shape) ?? 80;
  const layout = detectLayout(dims, numClasses);
  const options: DecodeOptions = { layout, numClasses, minScore: 0.25, iouThreshold: 0.7, maxDetections: 100 };
  return { options, reducible: ['yolov8', 'yolov5', 'yolox'].includes(layout) && reducibleOutput(out) };
}

/**
 * Every row of one model (its graph as exported, `float`: made float, `bytes`: taking bytes, `half`: run in
 * float16) into the lists.
 */
async function measureModel(
  args: Args,
  model: string,
  file: string,
  float: boolean,
  out: { rows: Row[]; batchRows: BatchRow[]; checks: Check[] },
  bytes?: Uint8Preprocess,
  half = false,
  decode?: Decode,
): Promise<void> {
  const { rows, batchRows, checks } = out;
  const cores = availableParallelism();
  const available = availableProviders();
  if (args.batch) {
    const gpus = ['tensorrt', 'cuda'].filter((p) => available.includes(p));
    const lists = [...(args.gpuOnly && gpus.length ? [] : [['cpu']]), ...gpus.map((g) => [g, 'cpu'])];
    for (const eps of lists) {
      const onCpu = eps[0] === 'cpu';
      // On the CPU the sessions split the cores, one thread each (the runtime's default on a small host).
      for (const sessions of args.sessions ?? [onCpu ? Math.min(cores, 2) : 1]) {
        for (const b of args.batch) {
          if (late(args, `${model} ${eps.join(',')} ${sessions} session(s) batch ${b}`)) continue;
          batchRows.push(
            await measureBatch(
              model,
              file,
              eps,
              cores,
              sessions,
              b,
              b > 1 ? args.waitMs : 0,
              args.seconds,
              float,
              bytes,
              half,
              decode,
            ).catch((e: Error) => ({
              ...failedRow(model, eps, cores, sessions, e),
              batch: b,
              same_as_alone: null,
            })),
          );
          progress();
        }
      }
    }
    return;
  }
  // Unbatched: the model's rows as a whole, or none once --until has passed.
  if (late(args, `${model} (unbatched rows)`)) return;
  const cpu = await measure(model, file, ['cpu'], cores, 1, 1, args.seconds, true, float, bytes, half);
  rows.push(cpu.row);
  for (const gpu of ['cuda', 'tensorrt'].filter((p) => available.includes(p))) {
    let g: Awaited<ReturnType<typeof measure>>;
    try {
      g = await measure(model, file, [gpu, 'cpu'], cores, 1, 1, args.seconds, true, float, bytes, half);
    } catch (e) {
      // The provider failed on this graph: the row says why and the other providers and models still run.
      rows.push(failedRow(model, [gpu, 'cpu'], cores, 1, e as Error));
      continue;
    }
    rows.push(g.row);
    const list = g.dims.length === 3 && g.dims[2] === 6 ? compareDetections(g.first, cpu.first) : undefined;
    checks.push({
      model,
      provider: g.ran.join(','),
      rel_l2: +maxRelDiff(g.first, cpu.first).toExponential(2),
      ...(list ? { detections: list } : {}),
    });
    rows.push((await measure(model, file, [gpu, 'cpu'], cores, 1, 8, args.seconds, true, float, bytes, half)).row);
    // More sessions on one GPU: whether their runs overlap one run's host work (CPU-placed nodes, copies)
    // with another's kernels.
    for (const s of [2, 4, 8]) {
      if (late(args, `${model} ${gpu},cpu ${s} session(s) unbatched`)) continue;
      rows.push(
        (await measure(model, file, [gpu, 'cpu'], cores, s, s * 4, args.seconds, false, float, bytes, half)).row,
      );
      progress();
    }
  }
  if (args.gpuOnly) return;
  for (const t of [1, 2, 4, 8].filter((t) => t < cores))
    rows.push((await measure(model, file, ['cpu'], t, 1, 1, args.seconds, true, float, bytes, half)).row);
  for (const s of [2, 4, 8].filter((s) => s <= cores)) {
    // Each sessions count both ways, alternating: the wide session kept off overlapping runs, and beside them.
    rows.push((await measure(model, file, ['cpu'], cores, s, s * 2, args.seconds, true, float, bytes, half)).row);
    rows.push((await measure(model, file, ['cpu'], cores, s, s * 2, args.seconds, false, float, bytes, half)).row);
  }
}

/** A row that could not run, with why (its first line). */
function failedRow(model: string, providers: string[], threads: number, sessions: number, e: Error): Row {
  const error = String(e?.message ?? e)
    .split('\n')[0]!
    .slice(0, 300);
  console.error(`${model} on ${providers.join(',')}, ${sessions} session(s): failed: ${error}`);
  return {
    model,
    providers: providers.join(','),
    threads,
    sessions,
    clients: 0,
    images_per_s: 0,
    p50_ms: 0,
    split: false,
    error,
  };
}

/** After each row with --json-file: the JSON so far. */
let progress: () => void = () => {};

/** What --json prints last (and --json-file holds): the rows, and those --until left out. */
function resultJson(args: Args, rows: Row[], batchRows: BatchRow[], checks: Check[]): Record<string, unknown> {
  const cores = availableParallelism();
  const available = availableProviders();
  const skipped = skippedRows.length ? { skipped_rows: [...skippedRows] } : {};
  return args.batch
    ? { cores, available, batch_rows: batchRows, ...skipped }
    : { cores, available, rows, checks, ...skipped };
}

function report(args: Args, rows: Row[], batchRows: BatchRow[], checks: Check[]): void {
  progress();
  for (const s of skippedRows) console.log(`skipped (past --until): ${s}`);
  if (args.batch) {
    console.log(
      'model                providers        sessions batch clients images/s images/call p50_ms p99_ms batched=alone',
    );
    for (const r of batchRows) {
      console.log(
        `${r.model.padEnd(20)} ${r.providers.padEnd(16)} ${String(r.sessions).padStart(8)} ${String(r.batch).padStart(5)} ${String(r.clients).padStart(7)} ${r.images_per_s.toFixed(2).padStart(8)} ${String(r.images_per_call).padStart(11)} ${r.p50_ms.toFixed(1).padStart(6)} ${String(r.p99_ms).padStart(6)} ${r.error ? `failed: ${r.error}` : r.same_as_alone === null ? (r.refused ? 'one a call: ' + r.refused : '-') : r.same_as_alone}`,
      );
    }
    if (args.json) console.log(JSON.stringify(resultJson(args, rows, batchRows, checks)));
    return;
  }
  console.log('model                providers        threads sessions clients images/s p50_ms wide session');
  for (const r of rows) {
    const wide = r.error ? `failed: ${r.error}` : r.sessions < 2 ? '' : r.split ? 'alone only' : 'beside';
    console.log(
      `${r.model.padEnd(20)} ${r.providers.padEnd(16)} ${String(r.threads).padStart(7)} ${String(r.sessions).padStart(8)} ${String(r.clients).padStart(7)} ${r.images_per_s.toFixed(2).padStart(8)} ${r.p50_ms.toFixed(1).padStart(6)} ${wide}`,
    );
  }
  for (const c of checks) {
    const d = c.detections;
    const sets = d
      ? `; as a set: ${d.matched}/${d.detections} cpu detections (score >= 0.3) matched (same class, IoU >= 0.9; least IoU ${d.min_iou}, score within ${d.max_score_diff})`
      : '';
    console.log(`${c.model} on ${c.provider}: output relative L2 distance to cpu ${c.rel_l2}${sets}`);
  }
  if (args.json) console.log(JSON.stringify(resultJson(args, rows, batchRows, checks)));
}

await main();
