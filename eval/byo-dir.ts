// The one way to find the real bring-your-own model exports (SIGHTFLOW_BYO_MODELS_DIR, default
// ../shared/byo-models beside the project): public ONNX detectors and the CLIP tokenizer files, used as they
// are by tests and evaluations and never copied into the repository. Like eval/dir.ts: a clone without them
// passes, every reader asks here first and is skipped with BYO_MODELS_MISSING as its reason, CI (which has
// them) fails on any skip with this reason, and scripts/eval-data-users.ts finds the readers by their imports
// of this file, so the run without the data (scripts/test.d/85-no-eval-data.sh) covers them too.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { projectRoot } from '../src/base/paths.js';

/** The skip reason, word for word what the test summary groups by and what CI refuses. */
export const BYO_MODELS_MISSING = 'bring-your-own model exports not found (set SIGHTFLOW_BYO_MODELS_DIR)';

/** The exports there, by the model id the tests and evaluations register them under. */
export const BYO_MODELS = {
  'yolov8n-int8': 'yolov8n-int8/yolov8n_int8.onnx',
  'yolo11n-int8-320': 'yolo11n-int8-320/yolo11n_int8.onnx',
  'yolo11n-face-int8': 'yolo11n-face-int8/yolo11n_face_int8.onnx',
} as const;
export type ByoModelId = keyof typeof BYO_MODELS;

/** The CLIP ViT-B/32 tokenizer in the Hugging Face layout (tokenizer.json). */
export const CLIP_TOKENIZER = 'clip-vit-b32-tokenizer/tokenizer.json';

/** The root of the exports, whether or not it is there. */
export function byoRoot(): string {
  const env = process.env.SIGHTFLOW_BYO_MODELS_DIR;
  return env ? resolve(env) : resolve(projectRoot, '..', 'shared', 'byo-models');
}

export function isByoModelId(id: string): id is ByoModelId {
  return Object.hasOwn(BYO_MODELS, id);
}

/** A file under the root, whether or not it is there. */
export function byoPath(part: string): string {
  return resolve(byoRoot(), part);
}

/** Whether every part (a path under the root, e.g. BYO_MODELS[id]) is there. */
export function hasByoModels(...parts: string[]): boolean {
  return parts.every((p) => existsSync(byoPath(p)));
}

/** For node:test's `skip` option: the reason when a part is missing, false when all are there. */
export function byoModelsSkip(...parts: string[]): string | false {
  return hasByoModels(...parts) ? false : BYO_MODELS_MISSING;
}

/** First thing in a bench's or evaluation's run() that needs a part: as eval/dir.ts's skipWithoutEvalData. */
export function skipWithoutByoModels(opts: { json: boolean }, ...parts: string[]): boolean {
  if (hasByoModels(...parts)) return false;
  console.log(`skipped: ${BYO_MODELS_MISSING}`);
  if (opts.json) console.log(JSON.stringify({ skipped: true, reason: BYO_MODELS_MISSING }));
  return true;
}
