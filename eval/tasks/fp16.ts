// `npm run eval -- fp16 [--model <id>] [--dequantize] [--quick] [--json]`: a detector's detections with its
// graph in float32 and in float16 (src/inference/fp16-graph.ts, what a GPU provider loads under
// SIGHTFLOW_INFERENCE_FP16=auto), both on the CPU provider through the API's path on the same photos of
// detection_coco128, with mAP@0.5 and mAP@0.5:0.95 of each. ONNX Runtime on the CPU casts around the float16
// nodes it has no kernels for, so each node's result is rounded to float16 as on a GPU. The float16 graph's
// mAP@0.5 must stay within 0.005 of the float32 graph's: the run fails (exit 1) when it does not. Default
// model: the built-in CenterNet; --dequantize makes an int8 export float first (as a GPU provider loads it),
// so that one compares float32 and float16 of that float graph. --quick takes the first 8 photos.
import { skipWithoutEvalData } from '../dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { argValue, chooseModel } from '../lib/model-choice.js';
import { evalImages, printScores, rounded, scoreJson, scoreModel } from './detect.js';

/** The most mAP@0.5 may move between the float32 and float16 graphs. */
export const MAX_DELTA = 0.005;

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'detection_coco128')) return;
  const id = argValue(args, 'model') ?? 'centernet-coco';
  const dequantize = args.includes('--dequantize');
  const chosen = await chooseModel(id, { json });
  if (!chosen) return;
  try {
    const images = evalImages(quick);
    const full = await scoreModel(chosen.registry, id, images, dequantize, false);
    const half = await scoreModel(chosen.registry, id, images, dequantize, true);
    const delta = half.map50 - full.map50;
    const made = dequantize ? ', made float' : '';
    console.log(`fp16 eval of ${id}${made} on ${images.length} images (${full.boxes} labelled boxes; ${full.about})`);
    printScores([
      ['float32 graph', full],
      ['float16 graph', half],
    ] as const);
    const ok = Math.abs(delta) <= MAX_DELTA;
    console.log(
      `  float16 - float32: mAP@0.5 ${delta.toFixed(4)}, mAP@0.5:0.95 ${(half.map50_95 - full.map50_95).toFixed(4)} (${ok ? 'within' : 'BEYOND'} the ${MAX_DELTA} allowed)`,
    );
    if (!ok) process.exitCode = 1;
    if (json) {
      console.log(
        JSON.stringify({
          task: 'fp16',
          model: id,
          ...(dequantize ? { dequantized: true } : {}),
          images: images.length,
          float32: scoreJson(full),
          float16: scoreJson(half),
          map50_delta: rounded(delta),
          max_delta: MAX_DELTA,
          ok,
        }),
      );
    }
  } finally {
    chosen.cleanup();
  }
}
