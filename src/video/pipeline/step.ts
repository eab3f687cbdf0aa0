// What a pipeline step is: one folder under pipeline/ exporting a StepDescriptor, listed in steps.ts. A
// descriptor says what a request's step looks like (its schema, joined into POST /v1/video/process), how it
// is checked and planned (every problem an ApiError naming steps[i]...), how it runs on each frame over the
// frame's targets, and what it adds to each target of a chunk. The frame pipeline (frame-pipeline.ts) knows
// no step by name.
import type { z } from 'zod';
import { errors } from '../../errors.js';
import type { RgbImage } from '../../media/rgb-image.js';
import type { TaskModels } from '../../task-models.js';
import type { StreamTarget, VideoTaskRequest } from '../worker/provider.js';
import type { TrackerSettings, TrackIds } from './target-tracker.js';

/** A step as a request names it (a remote node's or a test's request may not have passed the schema). */
export type StepRequest = VideoTaskRequest['steps'][number];

/** The task models the steps run: the detector (detect) and OCR (ocr). */
export type FrameModels = Pick<TaskModels, 'detector' | 'ocrImage' | 'ocrRegion'>;

/** One target as the steps of a frame build it up; turned into a chunk's StreamTarget after the last step. */
export interface WorkTarget {
  trackId: number;
  class: string;
  confidence: number;
  box: [number, number, number, number];
  text?: string;
  feature?: Float32Array;
  /** What a step adds beyond these, under its own name (read back by its addToTarget). */
  extra?: Record<string, unknown>;
}

/** One sampled frame as the steps see it. */
export interface StepFrame {
  index: number;
  width: number;
  height: number;
  image: RgbImage;
  signal?: AbortSignal;
}

/** Per task, shared by its steps: the models, the tracker settings and the one source of track ids. */
export interface TaskContext {
  models: FrameModels;
  tracking: TrackerSettings;
  ids: TrackIds;
}

/** A `when` filter, checked: which targets a step works on. */
export interface When {
  classIs?: ReadonlySet<string>;
  minConfidence?: number;
}

/** What a descriptor's plan() is given for step i. */
export interface PlanInput<Prepared> {
  index: number;
  /** The step's parameters (already checked to be among the descriptor's `parameters`). */
  params: Record<string, unknown>;
  /** Parses the step's `when` (ApiError when malformed); a step that selects nothing does not call it. */
  when(): When;
  /** Whether an earlier step adds targets (so this one can work on them rather than on the whole frame). */
  afterProducer: boolean;
  /** What prepare() loaded for this step. */
  prepared: Prepared;
}

/** A checked step of one request. */
export interface PlannedStep {
  kind: string;
  index: number;
  /** Whether this step adds targets: later steps then work on them. */
  produces: boolean;
  /** The step's per-task state (its tracker, say) and what it does on each frame, in step order. */
  open(task: TaskContext): (frame: StepFrame, targets: WorkTarget[]) => Promise<void>;
}

export interface StepDescriptor<Schema extends z.ZodObject = z.ZodObject, Prepared = undefined> {
  /** The step's `model` in a request. */
  name: string;
  /** Its request schema: a strict object with `model: z.literal(name)`, `parameters`, `when`. */
  schema: Schema;
  /** Parameter names it takes (re-checked for requests that never passed the schema). */
  parameters: readonly string[];
  /**
   * Loads what checking the step needs (detect: its detector, whose labels check `classes`). Runs for every
   * step of the request, in order, before any step is planned.
   */
  prepare?(index: number, params: Record<string, unknown> | undefined, models: Pick<FrameModels, 'detector'>): Promise<Prepared>;
  /** Checks the step's parameters and `when` and plans it. */
  plan(input: PlanInput<Prepared>): PlannedStep;
  /** Copies what the step put on a work target into the chunk's target (called for every registered step, in registry order). */
  addToTarget?(target: WorkTarget, out: StreamTarget): void;
}

/** Keeps a descriptor's own schema and prepared types (so the registry's schemas stay exact). */
export function defineStep<Schema extends z.ZodObject, Prepared = undefined>(d: StepDescriptor<Schema, Prepared>): StepDescriptor<Schema, Prepared> {
  return d;
}

export function unitNumber(param: string, v: unknown): number {
  if (typeof v !== 'number' || !(v >= 0 && v <= 1)) {
    throw errors.invalidParam(param, `Expected a number between 0 and 1 for ${param} but received ${String(v)}`);
  }
  return v;
}

/** Checks step i's `when` and turns it into a filter. */
export function parseWhen(i: number, w: StepRequest['when']): When {
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

/** True when a target is selected by a step's `when` (no filter selects everything). */
export function selects(w: When, target: { class: string; confidence: number }): boolean {
  if (w.classIs && !w.classIs.has(target.class)) return false;
  if (w.minConfidence !== undefined && !(target.confidence >= w.minConfidence)) return false;
  return true;
}

export function clampBox(b: readonly number[], w: number, h: number): [number, number, number, number] {
  const c = (v: number, hi: number) => Math.min(hi, Math.max(0, v));
  return [c(b[0], w), c(b[1], h), c(b[2], w), c(b[3], h)];
}
