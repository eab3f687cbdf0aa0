// `npm run eval -- fp16-export [--model <id>] [--quick] [--json]`: a detector exported in float16 (inputs and
// outputs float16, as Ultralytics' `export half=True` makes it for a GPU; test/helpers/half-export.ts makes one
// from the model's float graph) registered as a bring-your-own model and scored through the API's path on the
// photos of detection_coco128: as it loads on the CPU (float32 throughout, src/inference/float16-export.ts) and
// with SIGHTFLOW_INFERENCE_FP16=on (float16 inside, float32 at its edges: what a GPU provider loads), each
// against the model's float graph. Before, such an export could not be added (its input wanted float16). Both
// must stay within fp16's 0.005 of mAP@0.5 (exit 1 otherwise). Default model: yolov8n-int8 (made float first, as
// the float graph it is compared with); --quick takes the first 8 photos.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { halfExport } from '../../test/helpers/half-export.js';
import { skipWithoutEvalData } from '../dir.js';
import { argValue, chooseModel } from '../lib/model-choice.js';
import { evalImages, printScores, rounded, scoreJson, scoreModel } from './detect.js';
import { MAX_DELTA } from './fp16.js';

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'detection_coco128')) return;
  const id = argValue(args, 'model') ?? 'yolov8n-int8';
  const chosen = await chooseModel(id, { json });
  if (!chosen) return;
  try {
    await scoreHalfExport(chosen.registry, id, quick, json);
  } finally {
    chosen.cleanup();
  }
}

/** The model's float16 export, widened (the CPU's load) and kept in float16, against its float graph. */
async function scoreHalfExport(registry: ModelRegistry, id: string, quick: boolean, json: boolean): Promise<void> {
  const tmp = mkdtempSync(join(tmpdir(), 'sightflow-eval-half-'));
  try {
    const halfId = `${id}-half`;
    const file = join(tmp, `${halfId}.onnx`);
    writeFileSync(file, halfExport(new Uint8Array(await readFile(await registry.onnxPath(id)))));
    // The model's own manifest settings (a built-in detector's preprocessing and labels) go with its export, not
    // what describes its source file.
    const {
      id: _id,
      task,
      format: _f,
      source: _s,
      description: _d,
      sha256: _h,
      convert: _c,
      ...extra
    } = registry.get(id).manifest;
    await writeByoManifest(tmp, { id: halfId, task, file, extra });
    const halfRegistry = await ModelRegistry.open(tmp);
    await halfRegistry.prepare(halfId);
    const images = evalImages(quick);
    const float = await scoreModel(registry, id, images, true, false);
    const widened = await scoreModel(halfRegistry, halfId, images, false, false);
    const kept = await scoreModel(halfRegistry, halfId, images, false, true);
    console.log(
      `fp16 eval of ${id} exported in float16 on ${images.length} images (${float.boxes} labelled boxes; ${float.about})`,
    );
    printScores([
      ['float graph (float32)', float],
      ['float16 export, as loaded on the CPU (float32 throughout)', widened],
      ['float16 export, SIGHTFLOW_INFERENCE_FP16=on (float16 inside)', kept],
    ]);
    const deltas = [widened.map50 - float.map50, kept.map50 - float.map50];
    const ok = deltas.every((d) => Math.abs(d) <= MAX_DELTA);
    console.log(
      `  export - float graph: mAP@0.5 ${deltas.map((d) => d.toFixed(4)).join(' (widened), ')} (float16 inside) (${ok ? 'within' : 'BEYOND'} the ${MAX_DELTA} allowed)`,
    );
    if (!ok) process.exitCode = 1;
    if (json) {
      console.log(
        JSON.stringify({
          task: 'fp16-export',
          model: id,
          images: images.length,
          float32: scoreJson(float),
          export_widened: scoreJson(widened),
          export_float16: scoreJson(kept),
          map50_deltas: deltas.map((d) => rounded(d)),
          max_delta: MAX_DELTA,
          ok,
        }),
      );
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
