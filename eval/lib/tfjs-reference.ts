// The model's own runtime (TFJS graph model on the wasm backend), used only to check the importer
// (test/inference/importer.test.ts) and as the peer in the detect eval and bench. @tensorflow/* are dev
// dependencies, so this file lives outside src/ and the service never imports it.
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';

type Tf = typeof import('@tensorflow/tfjs');

export interface TfjsReference {
  /** Runs the graph on one NHWC float32 input and returns the named outputs as flat arrays. */
  run(input: Float32Array, shape: number[], outputs: string[]): Promise<Float32Array[]>;
  threads: number;
  dispose(): void;
}

let tfPromise: Promise<{ tf: Tf; threads: number }> | undefined;

async function loadTf(): Promise<{ tf: Tf; threads: number }> {
  const require = createRequire(import.meta.url);
  const tf = (await import('@tensorflow/tfjs')) as Tf;
  const wasm = await import('@tensorflow/tfjs-backend-wasm');
  // Node has no fetch for file:// URLs in TFJS's loader, so point it at the .wasm files shipped in the package.
  const wasmDir = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/dist/tfjs-backend-wasm.wasm'));
  wasm.setWasmPaths(wasmDir + '/');
  await tf.setBackend('wasm');
  await tf.ready();
  return { tf, threads: wasm.getThreadsCount() };
}

/** Loads a TFJS graph model (model.json + weight shards) from disk into the wasm backend. */
export async function loadTfjsReference(modelJsonPath: string): Promise<TfjsReference> {
  tfPromise ??= loadTf();
  const { tf, threads } = await tfPromise;
  const json = JSON.parse(await readFile(modelJsonPath, 'utf8'));
  const dir = dirname(modelJsonPath);
  const weightSpecs = json.weightsManifest.flatMap((g: { weights: unknown[] }) => g.weights);
  const buffers = [];
  for (const g of json.weightsManifest) for (const p of g.paths) buffers.push(await readFile(join(dir, p)));
  const all = Buffer.concat(buffers);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
  const model = await tf.loadGraphModel(
    tf.io.fromMemory({
      modelTopology: json.modelTopology,
      weightSpecs,
      weightData,
      format: json.format,
      generatedBy: json.generatedBy,
      convertedBy: json.convertedBy,
      signature: json.signature,
    }),
  );
  return {
    threads,
    async run(input, shape, outputs) {
      const x = tf.tensor(input, shape, 'float32');
      // execute(), not executeAsync(): the graph has no control flow, and this keeps TFJS quiet about it.
      const res = model.execute(x, outputs) as import('@tensorflow/tfjs').Tensor | import('@tensorflow/tfjs').Tensor[];
      const list = Array.isArray(res) ? res : [res];
      const out = await Promise.all(list.map(async (t) => new Float32Array(await t.data())));
      x.dispose();
      for (const t of list) t.dispose();
      return out;
    },
    dispose() {
      model.dispose();
    },
  };
}
