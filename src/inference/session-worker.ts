// Worker-thread entry that owns ONNX Runtime sessions. onnxruntime-node runs a session synchronously on
// the thread that calls run(), so sessions live here and the main thread (HTTP, SSE, decoding) stays free.
// Every message is answered once, by its call number; a failure is sent back as text, never thrown.
import { parentPort } from 'node:worker_threads';
import ort from 'onnxruntime-node';
import { type FromWorker, packTensors, sharedInput, type SessionInfo, type ToWorker } from './session-wire.js';
import { DECODED_BOXES, decodeYolo, packBoxes } from '../detection/yolo.js';

const port = parentPort;
if (!port) throw new Error('session-worker.ts is a worker_threads entry, not a module to import');

const sessions = new Map<string, ort.InferenceSession>();
/** Per model and input, the memory a shared input is copied into (a run that finds it held copies into its own). */
const scratch = new Map<string, { buf?: ArrayBufferView; busy: boolean }>();

async function handle(m: ToWorker, transfer: ArrayBuffer[]): Promise<unknown> {
  switch (m.op) {
    case 'load': {
      const options: ort.InferenceSession.SessionOptions = {
        executionProviders: m.providers,
        intraOpNumThreads: m.intraOpThreads,
        interOpNumThreads: 1,
        graphOptimizationLevel: 'all',
        executionMode: 'sequential',
        // Idle intra-op threads that spin only steal cores from the rest of the process (and other
        // models' workers); measured faster in wall time too on a busy 2-core host.
        extra: { session: { intra_op: { allow_spinning: '0' } } },
      };
      const session = typeof m.source === 'string'
        ? await ort.InferenceSession.create(m.source, options)
        : await ort.InferenceSession.create(m.source, options);
      await sessions.get(m.model)?.release();
      sessions.set(m.model, session);
      const info: SessionInfo = {
        inputNames: [...session.inputNames],
        outputNames: [...session.outputNames],
        outputMetadata: session.outputMetadata.map((o) => ({
          name: o.name, isTensor: o.isTensor, shape: o.isTensor ? [...o.shape] : undefined,
        })),
        inputMetadata: session.inputMetadata.map((i) => ({
          name: i.name, isTensor: i.isTensor, type: i.isTensor ? i.type : undefined, shape: i.isTensor ? [...i.shape] : undefined,
        })),
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
        const { data, release } = sharedInput(t.data, scratch.get(key)!);
        releases.push(release);
        feeds[k] = new ort.Tensor(t.type, data as never, t.dims);
      }
      let out: ort.InferenceSession.ReturnType;
      try {
        out = m.outputs ? await session.run(feeds, m.outputs) : await session.run(feeds);
      } finally {
        for (const r of releases) r();
      }
      if (m.decode) {
        // A detector's raw output (a YOLOv8's is 2.7 MB a run) is decoded here and only its boxes cross: a new
        // large buffer on the main thread each run made V8 run a full collection of the main heap about
        // every second under load.
        const t = (m.decode.output ? out[m.decode.output] : undefined) ?? Object.values(out)[0]!;
        const boxes = packBoxes(decodeYolo(t.data as Float32Array, t.dims, m.decode.options));
        return packTensors({ [DECODED_BOXES]: { type: 'float64', dims: [boxes.length / 6, 6], data: boxes } }, true, transfer);
      }
      // Outputs are ours alone: their buffers move to the main thread.
      return packTensors(out, true, transfer);
    }
    case 'release': {
      const s = sessions.get(m.model);
      sessions.delete(m.model);
      for (const k of scratch.keys()) if (k.startsWith(`${m.model}\u0000`)) scratch.delete(k);
      await s?.release();
      return null;
    }
  }
}

port.on('message', (m: ToWorker) => {
  const transfer: ArrayBuffer[] = [];
  handle(m, transfer).then(
    (value) => port.postMessage({ call: m.call, ok: true, value } satisfies FromWorker, transfer),
    (e: unknown) => port.postMessage({ call: m.call, ok: false, message: e instanceof Error ? e.message : String(e) } satisfies FromWorker),
  );
});
