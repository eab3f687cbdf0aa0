// Writes each built-in detector's input tensor for a real photo (a COCO image with 24 labelled objects from
// the evaluation data, else assets/astronaut.jpg; decoded and letterboxed as the server does it) into `<models>/<id>/input.f32` + `input.json`, for
// bench/device/providers.ts to run on a host that has no addon: a GPU provider's detections are compared
// with the CPU's on a real image, where random input gives near-equal scores whose order any rounding flips.
// Beside it the same photo as the bytes a graph with a uint8 input takes (`input.u8`, the letterbox written as
// bytes) and the model's preprocessing (`input.json`'s `pre`), for providers.ts --uint8.
//   npx tsx bench/device/inputs.ts <out-models-dir>
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Detector, modelInput, modelInputBytes } from '../../src/detection/detect.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { decodeToRgb } from '../../src/media/image-decode.js';
import { projectRoot } from '../../src/base/paths.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { BYO_MODELS, byoPath, hasByoModels } from '../../eval/byo-dir.js';
import { evalDir } from '../../eval/dir.js';

const DEVICE_MODELS = ['centernet-coco', 'yolov8n-int8'];

const out = process.argv[2];
if (!out) throw new Error('usage: inputs.ts <out-models-dir>');
const dataDir = mkdtempSync(join(tmpdir(), 'sf-inputs-'));
const rt = new InferenceRuntime({ providers: ['cpu'], sessions: 1, log: { info() {}, warn() {} } });
try {
  // yolov8n-int8 is a bring-your-own export (../shared/byo-models), registered as a user would; without the
  // exports here its bundle keeps no photo input and providers.ts feeds it a random one.
  const byo = hasByoModels(BYO_MODELS['yolov8n-int8']);
  if (byo)
    await writeByoManifest(dataDir, { id: 'yolov8n-int8', task: 'detect', file: byoPath(BYO_MODELS['yolov8n-int8']) });
  const registry = await ModelRegistry.open(dataDir, { modelsDir: join(projectRoot, 'data', 'models') });
  const coco = (() => {
    try {
      return join(evalDir(), 'detection_coco128', 'images', '000000000110.jpg');
    } catch {
      return '';
    }
  })();
  const source = coco && existsSync(coco) ? coco : join(projectRoot, 'assets', 'astronaut.jpg');
  const rgb = await decodeToRgb(readFileSync(source), 'jpeg', 'image', 50_000_000);
  for (const id of DEVICE_MODELS.filter((m) => byo || m !== 'yolov8n-int8')) {
    await registry.prepare(id);
    const { pre } = await Detector.create(rt, registry, id);
    const { tensor } = await modelInput(rgb, pre);
    const data = tensor.data as Float32Array;
    writeFileSync(join(out, id, 'input.f32'), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    const bytes = (await modelInputBytes(rgb, pre)).tensor.data as Uint8Array;
    writeFileSync(join(out, id, 'input.u8'), bytes);
    const { layout, channelOrder, scale, mean, std } = pre;
    writeFileSync(
      join(out, id, 'input.json'),
      JSON.stringify({
        dims: tensor.dims,
        source: source.split('/').slice(-2).join('/'),
        pre: { layout, channelOrder, scale, mean, std },
      }),
    );
  }
} finally {
  await rt.close();
  rmSync(dataDir, { recursive: true, force: true });
}
