// A task's steps (docs/api.md, "Video tasks") checked and turned into a plan the frame pipeline runs.
// The HTTP schema already rejects unknown step models and parameters; this file re-checks what the
// pipeline relies on (a provider may be handed a request that never passed the schema: a remote node's,
// a test's) and checks what only the pipeline knows: detector class names. Every problem is an ApiError.
import { errors } from '../../errors.js';
import type { VideoTaskRequest } from '../provider.js';
import { DESCRIPTOR_MODEL } from './descriptor.js';
import { parseIndexStep } from './index/index-step.js';

export interface When {
  classIs?: ReadonlySet<string>;
  minConfidence?: number;
}

export type StepPlan =
  | { kind: 'detect'; index: number; model: string | undefined; classIds: Set<number> | undefined; threshold: number }
  | { kind: 'ocr'; index: number; language: string; when: When; frameLevel: boolean }
  | { kind: 'feature'; index: number; model: string; when: When };

/** Default detect confidence_threshold, as for POST /v1/vision/detect. */
export const DEFAULT_CONFIDENCE = 0.5;

/**
 * Feature models this build can run. Until the embedding models of the vectors module land, the default
 * (parameters.model omitted) is the documented colour-layout descriptor; asking for a model by name that is
 * not here is a 400, rather than silently getting something else.
 */
export const FEATURE_MODELS: readonly string[] = [DESCRIPTOR_MODEL];

const STEP_PARAMS: Record<string, readonly string[]> = {
  detect: ['model', 'classes', 'confidence_threshold'],
  ocr: ['model', 'language'],
  feature: ['model'],
};

/** OCR models an ocr step may name (as POST /v1/vision/ocr's `model`). */
export const OCR_STEP_MODELS: readonly string[] = ['pp-ocrv4'];

/** A detect step's `parameters.model` (undefined: the default detector); a non-string is a 400. */
export function detectStepModel(i: number, params: Record<string, unknown> | undefined | null): string | undefined {
  const m = params?.model;
  if (m === undefined || m === null) return undefined;
  if (typeof m !== 'string') throw errors.invalidParam(`steps[${i}].parameters.model`, `Expected a detect model id string for steps[${i}].parameters.model`);
  return m;
}

function unitNumber(param: string, v: unknown): number {
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) {
    throw errors.invalidParam(param, `Expected a number between 0 and 1 for ${param} but received ${String(v)}`);
  }
  return v;
}

function when(i: number, w: VideoTaskRequest['steps'][number]['when']): When {
  if (w === undefined || w === null) return {};
  if (typeof w !== 'object') throw errors.invalidParam(`steps[${i}].when`, `Expected an object for steps[${i}].when`);
  const out: When = {};
  if (w.class_is !== undefined) {
    if (!Array.isArray(w.class_is) || w.class_is.some((c) => typeof c !== 'string')) {
      throw errors.invalidParam(`steps[${i}].when.class_is`, `Expected an array of class names for steps[${i}].when.class_is`);
    }
    out.classIs = new Set(w.class_is.map((c) => c.trim().toLowerCase()));
  }
  if (w.min_confidence !== undefined) out.minConfidence = unitNumber(`steps[${i}].when.min_confidence`, w.min_confidence);
  return out;
}

/**
 * Checks the steps against each detect step's detector labels (index = class id; labelsOf(step index)) and
 * returns the plan. An ocr step with
 * no detect step before it reads whole frames and produces `text` targets; that is decided by
 * the order of steps, not per frame, so a frame where an earlier detect found nothing gets no OCR at all.
 */
export function planSteps(request: Pick<VideoTaskRequest, 'steps'>, labelsOf: (stepIndex: number) => readonly string[]): StepPlan[] {
  if (!Array.isArray(request.steps) || request.steps.length === 0) {
    throw errors.invalidParam('steps', 'Expected at least one step in steps');
  }
  const plan: StepPlan[] = [];
  let producer = false;
  // The index step reads frames beside the pipeline (index/moment-indexer.ts); it adds nothing to targets.
  parseIndexStep(request);
  request.steps.forEach((step, i) => {
    if (step.model === 'index') return;
    const params = (step.parameters ?? {}) as Record<string, unknown>;
    const allowed = STEP_PARAMS[step.model];
    if (!allowed) {
      throw errors.invalidParam(`steps[${i}].model`, `Expected one of detect, ocr, feature, index for steps[${i}].model but received ${JSON.stringify(step.model)}`);
    }
    for (const k of Object.keys(params)) {
      if (!allowed.includes(k)) throw errors.invalidParam(`steps[${i}].parameters.${k}`, `Unknown parameter ${k} for a ${step.model} step; expected one of ${allowed.join(', ')}`);
    }
    if (step.model === 'detect') {
      const threshold = params.confidence_threshold === undefined ? DEFAULT_CONFIDENCE : unitNumber(`steps[${i}].parameters.confidence_threshold`, params.confidence_threshold);
      plan.push({ kind: 'detect', index: i, model: detectStepModel(i, params), classIds: classIds(i, params.classes, labelsOf(i)), threshold });
      producer = true;
    } else if (step.model === 'ocr') {
      if (params.model !== undefined && (typeof params.model !== 'string' || !OCR_STEP_MODELS.includes(params.model))) {
        throw errors.unknownModel(`steps[${i}].parameters.model`, params.model, 'ocr', OCR_STEP_MODELS);
      }
      const language = params.language ?? 'auto';
      if (typeof language !== 'string') throw errors.invalidParam(`steps[${i}].parameters.language`, `Expected a language code string for steps[${i}].parameters.language`);
      plan.push({ kind: 'ocr', index: i, language, when: when(i, step.when), frameLevel: !producer });
      if (!producer) producer = true;
    } else {
      const model = params.model ?? DESCRIPTOR_MODEL;
      if (typeof model !== 'string' || !FEATURE_MODELS.includes(model)) {
        throw errors.unknownFeatureModel(`steps[${i}].parameters.model`, model, FEATURE_MODELS);
      }
      plan.push({ kind: 'feature', index: i, model, when: when(i, step.when) });
    }
  });
  return plan;
}

function classIds(i: number, classes: unknown, labels: readonly string[]): Set<number> | undefined {
  if (classes === undefined || classes === null) return undefined;
  const param = `steps[${i}].parameters.classes`;
  if (!Array.isArray(classes)) throw errors.invalidParam(param, `Expected an array of class names for ${param}`);
  const ids = new Set<number>();
  for (const name of classes) {
    const want = typeof name === 'string' ? name.trim().toLowerCase() : undefined;
    const id = want === undefined ? -1 : labels.findIndex((l) => l.toLowerCase() === want);
    if (id < 0) {
      throw errors.unknownClass(param, name, labels);
    }
    ids.add(id);
  }
  return ids;
}

/** True when a target is selected by a step's `when` (no filter selects everything). */
export function selects(w: When, target: { class: string; confidence: number }): boolean {
  if (w.classIs && !w.classIs.has(target.class)) return false;
  if (w.minConfidence !== undefined && !(target.confidence >= w.minConfidence)) return false;
  return true;
}
