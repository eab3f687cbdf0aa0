// `npm run eval -- dequantize [--model <id>] [--quick] [--json]`: an int8 export's detections as exported and
// with its graph made float (src/inference/dequantize-graph.ts, what a GPU provider loads under
// SIGHTFLOW_INFERENCE_DEQUANTIZE=auto), both on the CPU provider through the API's path on the same photos of
// detection_coco128, with mAP@0.5 and mAP@0.5:0.95 of each. The float graph keeps the export's own int8
// weights and drops only the activations' rounding, so its mAP@0.5 must not fall more than 0.005 under the
// int8 graph's: the run fails (exit 1) when it does. Default model yolov8n-int8 (eval/byo-dir.ts); --quick
// takes the first 8 photos, which shows the rewrite loads and scores alike, not the full set's delta.
import { skipWithoutEvalData } from '../dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { argValue, chooseModel } from '../lib/model-choice.js';
import { evalImages, printScores, rounded, scoreJson, scoreModel } from './detect.js';

/** The most mAP@0.5 the float graph may lose against the int8 one. */
const MAX_DROP = 0.005;

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'detection_coco128')) return;
  const id = argValue(args, 'model') ?? 'yolov8n-int8';
  const chosen = await chooseModel(id, { json });
  if (!chosen) return;
  try {
    const images = evalImages(quick);
    const int8 = await scoreModel(chosen.registry, id, images, false);
    const float = await scoreModel(chosen.registry, id, images, true);
    const drop = int8.map50 - float.map50;
    console.log(`dequantize eval of ${id} on ${images.length} images (${int8.boxes} labelled boxes; ${int8.about})`);
    printScores([
      ['int8 graph as exported ', int8],
      ['graph made float       ', float],
    ] as const);
    const ok = drop <= MAX_DROP;
    console.log(
      `  float - int8: mAP@0.5 ${(-drop).toFixed(4)}, mAP@0.5:0.95 ${(float.map50_95 - int8.map50_95).toFixed(4)} (${ok ? 'within' : 'BEYOND'} the ${MAX_DROP} allowed loss)`,
    );
    if (!ok) process.exitCode = 1;
    if (json) {
      console.log(
        JSON.stringify({
          task: 'dequantize',
          model: id,
          images: images.length,
          int8: scoreJson(int8),
          float: scoreJson(float),
          map50_drop: rounded(drop),
          max_drop: MAX_DROP,
          ok,
        }),
      );
    }
  } finally {
    chosen.cleanup();
  }
}
