// The one way to find the real bring-your-own model exports (SIGHTFLOW_BYO_MODELS_DIR, default
// ../shared/byo-models beside the project). They are test data, never copied into the repository: tests,
// benches and evaluations that use them ask here first and are skipped with BYO_MODELS_MISSING as the reason.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const BYO_MODELS_MISSING = 'bring-your-own model exports not found (set SIGHTFLOW_BYO_MODELS_DIR)';

/** The files by name (sha256 from the folder's README). */
export const BYO_MODELS = {
  'yolov8n-int8': { file: 'yolov8n-int8/yolov8n_int8.onnx', sha256: '8c6f0ca55e9b86c15fd6788a9edb78da087881df55cb225a64842284b84e250c', bytes: 3_504_059 },
  'yolo11n-int8-320': { file: 'yolo11n-int8-320/yolo11n_int8.onnx', sha256: '5ea9b19c6c4d89041175fd2d4f9d2e1581d16f37b817021d547278fc5e2f2b58', bytes: 2_923_867 },
  'yolo11n-face-int8': { file: 'yolo11n-face-int8/yolo11n_face_int8.onnx', sha256: 'ac80e0317da6ff218fe3bd4355cf22ae33c539ca103c9a1b84013aa31adfbc26', bytes: 3_013_313 },
} as const;
export type ByoModelName = keyof typeof BYO_MODELS;

export function byoModelsRoot(): string {
  const env = process.env.SIGHTFLOW_BYO_MODELS_DIR;
  return env ? resolve(env) : resolve(fileURLToPath(new URL('../..', import.meta.url)), '..', 'shared', 'byo-models');
}

/** The path of one export (whether or not it is there). */
export function byoModelPath(name: ByoModelName): string {
  return resolve(byoModelsRoot(), BYO_MODELS[name].file);
}

/** For node:test's `skip` option: the reason when one of the files is missing, false when all are there. */
export function byoModelsSkip(...names: ByoModelName[]): string | false {
  return names.every((n) => existsSync(byoModelPath(n))) ? false : BYO_MODELS_MISSING;
}
