// Worker-thread entry that owns ONNX Runtime sessions. onnxruntime-node runs a session synchronously on
// the thread that calls run(), so sessions live here and the main thread (HTTP, SSE, decoding) stays free.
// Every message is answered once, by its call number; a failure is sent back as text, never thrown.
import { parentPort } from 'node:worker_threads';
import ort from 'onnxruntime-node';
import {
  type FromWorker,
  type HostAlloc,
  newLike,
  packTensors,
  sharedInput,
  type SessionInfo,
  type ToWorker,
  type WireTensor,
  type WorkerDecode,
} from './session-wire.js';
import { DECODED_BOXES, decodeYolo, decodeYoloBest, detectLayout, packBoxes } from '../detection/yolo.js';
import { bestClassOutput } from './best-class-output.js';
import { makeGraph } from './graph-steps.js';
import { sessionProviders } from './execution-providers.js';
import { createNativeSession, type EngineSession } from './native-session.js';

const port = parentPort;
if (!port) throw new Error('session-worker.ts is a worker_threads entry, not a module to import');

const sessions = new Map<string, EngineSession>();
/** Per model whose graph has reduced twins (best-class.ts), its outputs without them. */
const ownOutputs = new Map<string, string[] | undefined>();
/** Per model and input, the memory a shared input is copied into (a run that finds it held copies into its own). */
const scratch = new Map<string, { buf?: ArrayBufferView; busy: boolean }>();

/** What a run tells besides its answer: a session's CUDA graphs that stopped (takeGraphChange). */
type Told = { cudaGraph?: { model: string; on: boolean; note?: string } };

async function handle(m: ToWorker, transfer: ArrayBuffer[], told: Told): Promise<unknown> {
  switch (m.op) {
    case 'load': {
      const session = m.engine
        ? await createNativeSession(m.source, m.providers, m.device, m.intraOpThreads, m.engine)
        : await bindingSession(m);
      await sessions.get(m.model)?.release();
      sessions.set(m.model, session);
      // A reduced twin is fetched only by the decode that reads it: a run that asks for no output by name gets
      // the graph's own outputs.
      const twins = new Set(session.outputNames.map(bestClassOutput));
      const own = session.outputNames.filter((n) => !twins.has(n));
      ownOutputs.set(m.model, own.length < session.outputNames.length ? own : undefined);
      const info: SessionInfo = {
        inputNames: [...session.inputNames],
        outputNames: [...session.outputNames],
        outputMetadata: session.outputMetadata.map((o) => ({
          name: o.name,
          isTensor: o.isTensor,
          shape: o.isTensor ? [...o.shape] : undefined,
        })),
        inputMetadata: session.inputMetadata.map((i) => ({
          name: i.name,
          isTensor: i.isTensor,
          type: i.isTensor ? i.type : undefined,
          shape: i.isTensor ? [...i.shape] : undefined,
        })),
        ...(session.cudaGraph ? { cudaGraph: session.cudaGraph } : {}),
        ...(session.pinnedInputs !== undefined ? { pinnedInputs: session.pinnedInputs } : {}),
      };
      return info;
    }
    case 'run': {
      const session = sessions.get(m.model);
      if (!session) throw new Error(`model ${m.model} is not loaded in this worker`);
      const feeds: Record<string, ort.Tensor> = {};
      const releases: Array<() => void> = [];
      for (const [k, t] of Object.entries(m.feeds)) {
        const key = `${m.model}\u0000${k}`;
        if (!scratch.has(key)) scratch.set(key, { busy: false });
        const { data, release } = sharedInput(t.data, scratch.get(key)!, hostAlloc(session));
        releases.push(release);
        feeds[k] = new ort.Tensor(t.type, data as never, t.dims);
      }
      const best = m.decode && reducedOutput(session, m.decode);
      let out: ort.InferenceSession.ReturnType;
      try {
        const fetch = best ? [best] : (m.outputs ?? ownOutputs.get(m.model));
        out = fetch ? await session.run(feeds, fetch) : await session.run(feeds);
      } finally {
        for (const r of releases) r();
        tellGraphChange(session, m.model, told);
      }
      // A detector's raw output (a YOLOv8's runs to megabytes) is decoded here and only its boxes cross: a new
      // large buffer on the main thread each run made V8 run a full collection of the main heap about
      // every second under load.
      if (m.decode) return decoded(out, m.decode, 0, 1, transfer, best);
      // Outputs are ours alone: their buffers move to the main thread.
      return packTensors(out, true, transfer);
    }
    case 'runBatch': {
      const session = sessions.get(m.model);
      if (!session) throw new Error(`model ${m.model} is not loaded in this worker`);
      const rows = m.items.map((it) => Object.values(it.feeds)[0]!.dims[0]!);
      const total = rows.reduce((a, b) => a + b, 0);
      const pad = m.pad ?? 0;
      const feeds: Record<string, ort.Tensor> = {};
      const releases: Array<() => void> = [];
      // The reduced output when every item decodes from it.
      const bests = m.items.map((it) => it.decode && reducedOutput(session, it.decode));
      const best = bests.every((b) => b === bests[0]) ? bests[0] : undefined;
      let out: ort.InferenceSession.ReturnType;
      try {
        for (const name of Object.keys(m.items[0]!.feeds))
          feeds[name] = joined(
            session,
            m.model,
            name,
            m.items.map((it) => it.feeds[name]!),
            total,
            pad,
            releases,
          );
        const fetch = best ? [best] : (m.outputs ?? ownOutputs.get(m.model));
        out = fetch ? await session.run(feeds, fetch) : await session.run(feeds);
      } finally {
        for (const r of releases) r();
        tellGraphChange(session, m.model, told);
      }
      for (const [k, t] of Object.entries(out)) {
        if (t.dims[0] !== total + pad)
          throw new Error(`model ${m.model}: output ${k} has ${t.dims[0]} rows for a batch of ${total + pad}`);
      }
      let row = 0;
      return m.items.map((it, i) => {
        const first = row;
        row += rows[i]!;
        if (it.decode) return decoded(out, it.decode, first, rows[i]!, transfer, best);
        const own: Record<string, WireTensor> = {};
        for (const [k, t] of Object.entries(out)) {
          const per = (t.data as Float32Array).length / (total + pad);
          own[k] = {
            type: t.type,
            dims: [rows[i]!, ...t.dims.slice(1)],
            data: (t.data as Float32Array).slice(first * per, row * per),
          };
        }
        return packTensors(own, true, transfer);
      });
    }
    case 'warmup': {
      const session = sessions.get(m.model);
      if (!session) throw new Error(`model ${m.model} is not loaded in this worker`);
      // A graph whose inputs cannot be made blank (a dimension the image sets, a type not made here) is left
      // as it is: said, not failed.
      for (const meta of session.inputMetadata) {
        const why = cannotBlank(meta);
        if (why) return { skipped: why };
      }
      const ms: number[] = [];
      for (const size of m.sizes) {
        const feeds: Record<string, ort.Tensor> = {};
        for (const meta of session.inputMetadata) feeds[meta.name] = blankInput(meta, size);
        const fetch = ownOutputs.get(m.model);
        const t0 = performance.now();
        if (fetch) await session.run(feeds, fetch);
        else await session.run(feeds);
        ms.push(performance.now() - t0);
      }
      return { ms };
    }
    case 'graph': {
      const made = await makeGraph(m.source, m.plan);
      // The graph's bytes move back rather than being copied (a view of a larger buffer is cut out first).
      if (made.bytes) {
        if (made.bytes.byteLength !== made.bytes.buffer.byteLength) made.bytes = made.bytes.slice();
        transfer.push(made.bytes.buffer as ArrayBuffer);
      }
      return made;
    }
    case 'release': {
      const s = sessions.get(m.model);
      sessions.delete(m.model);
      ownOutputs.delete(m.model);
      for (const k of scratch.keys()) if (k.startsWith(`${m.model}\u0000`)) scratch.delete(k);
      for (const k of joinedScratch.keys()) if (k.startsWith(`${m.model}\u0000`)) joinedScratch.delete(k);
      await s?.release();
      return null;
    }
  }
}

/** A session of onnxruntime-node's binding: the providers by name, a GPU one with its device. */
async function bindingSession(m: Extract<ToWorker, { op: 'load' }>): Promise<EngineSession> {
  const options: ort.InferenceSession.SessionOptions = {
    executionProviders: sessionProviders(m.providers, m.device) as ort.InferenceSession.ExecutionProviderConfig[],
    intraOpNumThreads: m.intraOpThreads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    // Idle intra-op threads that spin only steal cores from the rest of the process (and other
    // models' workers); measured faster in wall time too on a busy 2-core host.
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  };
  return typeof m.source === 'string'
    ? await ort.InferenceSession.create(m.source, options)
    : await ort.InferenceSession.create(m.source, options);
}

/**
 * The output a detector's decode reads, reduced in the graph (best-class.ts), where the graph has it and it
 * decodes to the same boxes: the raw output is channels-first yolov8 ([N, 4 + C, A]) or yolov5 or yolox ([N, A, 5 + C]),
 * by the layout the detector resolved or, for `auto`, by the declared shape, with one feature a class.
 */
function reducedOutput(session: EngineSession, decode: WorkerDecode): string | undefined {
  const raw = decode.output ?? session.outputNames[0]!;
  const best = bestClassOutput(raw);
  if (!session.outputNames.includes(best)) return undefined;
  const { numClasses, input, strides } = decode.options;
  const meta = session.outputMetadata.find((o) => o.name === raw);
  const shape = meta?.isTensor ? meta.shape : [];
  const twin = session.outputMetadata.find((o) => o.name === best);
  const twinShape = twin?.isTensor ? twin.shape : [];
  let layout = decode.options.layout;
  if (layout === 'auto') {
    if (typeof shape[1] !== 'number' || typeof shape[2] !== 'number') return undefined;
    try {
      layout = detectLayout([1, shape[1], shape[2]], numClasses, input, strides);
    } catch {
      return undefined; // the decode says why
    }
  }
  if (layout === 'yolov8' && shape[1] === 4 + numClasses && twinShape[1] === 6) return best;
  if ((layout === 'yolov5' || layout === 'yolox') && shape[2] === 5 + numClasses && twinShape[2] === 7) return best;
  return undefined;
}

/** A detector's boxes for rows [first, first + n) of its output (n is 1: a detector run is one image). */
function decoded(
  out: ort.InferenceSession.ReturnType,
  decode: WorkerDecode,
  first: number,
  n: number,
  transfer: ArrayBuffer[],
  best?: string,
): Record<string, WireTensor> {
  const t = (best ? out[best] : decode.output ? out[decode.output] : undefined) ?? Object.values(out)[0]!;
  const data = t.data as Float32Array;
  const per = data.length / t.dims[0]!;
  const rows = first === 0 && n === t.dims[0] ? data : data.subarray(first * per, (first + n) * per);
  const dims = [n, ...t.dims.slice(1)];
  const boxes = packBoxes(best ? decodeYoloBest(rows, dims, decode.options) : decodeYolo(rows, dims, decode.options));
  return packTensors(
    { [DECODED_BOXES]: { type: 'float64', dims: [boxes.length / 6, 6], data: boxes } },
    true,
    transfer,
  );
}

/** Typed arrays of zeros for the tensor types a warm-up can make. */
const BLANK: Record<string, (n: number) => ArrayBufferView> = {
  float32: (n) => new Float32Array(n),
  float16: (n) => new Uint16Array(n),
  float64: (n) => new Float64Array(n),
  uint8: (n) => new Uint8Array(n),
  int8: (n) => new Int8Array(n),
  int32: (n) => new Int32Array(n),
  int64: (n) => new BigInt64Array(n),
  bool: (n) => new Uint8Array(n),
};

/** Why an input cannot be made blank at any batch size: not a tensor, a free dimension besides the batch, its type. */
function cannotBlank(meta: ort.InferenceSession.ValueMetadata): string | undefined {
  if (!meta.isTensor) return `input ${meta.name} is not a tensor`;
  const free = meta.shape.findIndex((d, i) => i > 0 && (typeof d !== 'number' || d < 1));
  if (free >= 0)
    return `input ${meta.name} has a free dimension ${free} (${String(meta.shape[free])}) besides the batch`;
  if (!BLANK[meta.type]) return `input ${meta.name} is ${meta.type}, which a warm-up does not make`;
  return undefined;
}

/** An input of zeros at this batch size, in the shape the graph declares (cannotBlank said it can be made). */
function blankInput(meta: ort.InferenceSession.ValueMetadata, size: number): ort.Tensor {
  if (!meta.isTensor) throw new Error(`input ${meta.name} is not a tensor`);
  const dims = meta.shape.map((d, i) => (i === 0 ? size : d)) as number[];
  const make = BLANK[meta.type]!;
  const n = dims.reduce((a, b) => a * b, 1);
  return new ort.Tensor(meta.type as 'float32', make(n) as never, dims as number[]);
}

/**
 * One input of a batch: the items' rows joined along axis 0 into memory this worker keeps per model and input
 * (reused by the next batch of that size; a run that finds it held joins into memory of its own). In page-locked
 * memory (a native session on a card) the memory is kept at the largest batch met and a smaller batch is a view
 * of its start: page-locked memory is slow to make and to give back, so it is made once, not per batch size.
 */
function joined(
  session: EngineSession,
  model: string,
  name: string,
  parts: WireTensor[],
  total: number,
  pad: number,
  releases: Array<() => void>,
): ort.Tensor {
  const first = parts[0]!;
  const src = parts.map((p) => p.data as unknown as Joinable);
  const filled = src.reduce((a, d) => a + d.length, 0);
  const len = pad ? filled + (filled / total) * pad : filled;
  const key = `${model}\u0000${name}\u0000batch`;
  const held = joinedScratch.get(key);
  const kind = src[0]!.constructor as { new (b: ArrayBufferLike, offset: number, n: number): Joinable };
  const free = held && !held.busy && held.buf.constructor === kind ? held.buf : undefined;
  let buf: Joinable;
  let keep: Joinable;
  if (free && free.length === len) buf = keep = free;
  else if (free && free.length > len && pinnedMemory.has(free.buffer)) {
    buf = new kind(free.buffer, 0, len);
    keep = free;
  } else buf = keep = newLike(src[0]!, len, held?.busy ? undefined : hostAlloc(session));
  if (!held || !held.busy) {
    const slot = { buf: keep, busy: true };
    joinedScratch.set(key, slot);
    releases.push(() => {
      slot.busy = false;
    });
  }
  let off = 0;
  for (const d of src) {
    buf.set(d as unknown as ArrayLike<number>, off);
    off += d.length;
  }
  // Blank rows, not a previous batch's images: a padded batch answers the same whatever ran before it.
  if (pad) buf.fill(0, off);
  return new ort.Tensor(first.type, buf as never, [total + pad, ...first.dims.slice(1)]);
}
type Joinable = ArrayBufferView & {
  length: number;
  set(a: ArrayLike<number>, offset?: number): void;
  fill(v: number, start?: number): void;
};
const joinedScratch = new Map<string, { buf: Joinable; busy: boolean }>();

/** Where a session's inputs are copied to: page-locked memory on a native engine's card, else the heap's. */
function hostAlloc(session: EngineSession): HostAlloc | undefined {
  if (!session.pinnedInputs) return undefined;
  return (bytes) => {
    const b = session.hostBuffer?.(bytes);
    if (b) pinnedMemory.add(b);
    return b;
  };
}
/** The page-locked memory hostAlloc gave. */
const pinnedMemory = new WeakSet<ArrayBufferLike>();

/** A native session's CUDA graphs that stopped during this call, for the answer. */
function tellGraphChange(session: EngineSession, model: string, told: Told): void {
  const change = session.takeGraphChange?.();
  if (change) told.cudaGraph = { model, ...change };
}

port.on('message', (m: ToWorker) => {
  const transfer: ArrayBuffer[] = [];
  const told: Told = {};
  handle(m, transfer, told).then(
    (value) => port.postMessage({ call: m.call, ok: true, value, ...told } satisfies FromWorker, transfer),
    (e: unknown) =>
      port.postMessage({
        call: m.call,
        ok: false,
        message: e instanceof Error ? e.message : String(e),
      } satisfies FromWorker),
  );
});
