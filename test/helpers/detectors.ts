// A detector on the CPU provider for the inference tests: its own data dir, the runtime released after the
// test, a log kept for warnings.
import { Detector } from '../../src/detection/detect.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime, type RuntimeOptions } from '../../src/inference/runtime.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { collectingLog, tempDataDir } from './inference.js';

type TestContext = Parameters<typeof tempDataDir>[0];

/**
 * Model `id` (default the built-in CenterNet; `file`: an ONNX registered as bring-your-own under that id, in
 * `dataDir` when given) on a runtime of one session of two threads, bytes input off, `opts` over that.
 */
export async function cpuDetector(
  t: TestContext,
  opts: Partial<RuntimeOptions> = {},
  model: { id?: string; file?: string; dataDir?: string } = {},
) {
  const id = model.id ?? 'centernet-coco';
  const dataDir = model.dataDir ?? (await tempDataDir(t));
  if (model.file) await writeByoManifest(dataDir, { id, task: 'detect', file: model.file });
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare(id);
  const log = collectingLog();
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    intraOpThreads: 2,
    sessions: 1,
    uint8Input: 'off',
    log,
    ...opts,
  });
  t.after(() => runtime.release());
  return { det: await Detector.create(runtime, registry, id), log, registry };
}
