// The frame side of a pipeline step (docs/video.md, "Steps"): what a step sees of one sampled frame and its
// targets, how a request's steps are checked and planned (PlannedStep), and the per-task run that works on each
// frame, and, for a step that works beside the targets, on each whole chunk and at the task's end (StepRun).
// The provider that makes the frames (steps/frame-pipeline.ts) runs this side; the worker side is worker-step.ts.
import { errors } from '../../base/errors.js';
import type { RgbImage } from '../../media/rgb-image.js';
import type { RunPriority } from '../../inference/model-queue.js';
import type { TaskModels } from '../../task-models/task-models.js';
import type { CollectionsPort } from '../../services/collections-port.js';
import type { Logger } from '../../base/log.js';
import type { Db } from '../../store/db.js';
import type { FrameOutput, VideoTaskRequest } from '../task-contract.js';
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
  /**
   * Where this frame can be decoded again after the task moved to another worker (FrameRefetch): the decoder's
   * cursor of the sampled frame before it, null for the first; undefined where frames cannot be had again
   * (a live source, a pipeline outside a task).
   */
  before?: unknown;
}

/** Decodes again, at source size, the frame a StepFrame's `before` refers to (a step's restore() needs pixels). */
export type FrameRefetch = (before: unknown) => Promise<RgbImage>;

/** What a step may reach beyond the models: the database and log of the process that runs it and, where the
 * vectors part runs, its collections (the index step writes moments there). The video part hands it over. */
export interface StepServices {
  db?: Db;
  log?: Logger;
  collections?: CollectionsPort;
}

/** Who a request's steps are checked for (at task creation, and again where the task runs). */
export interface StepScope {
  projectId: string;
  services: StepServices;
}

/** The task a pipeline runs for; absent where a pipeline runs outside a task (a script's, a test's). */
export interface StepTask extends StepScope {
  id: string;
  request: VideoTaskRequest;
}

/** Per task, shared by its steps: the models, the tracker settings and the one source of track ids. */
export interface TaskContext {
  models: FrameModels;
  /**
   * The lane the steps' model runs take in each model queue: a task's frames (a file's, a camera's) go after
   * interactive requests ('background'); a pipeline outside a task (a script's, a test's) is 'interactive'.
   */
  priority: RunPriority;
  tracking: TrackerSettings;
  ids: TrackIds;
  task?: StepTask;
}

/** What a step does on each frame, over the frame's targets, in step order. */
export type FrameRun = (frame: StepFrame, targets: WorkTarget[]) => Promise<void>;

/** A step's per-task run beyond the frame's targets; every hook is optional. */
export interface StepRun {
  frame?: FrameRun;
  /** A frame's whole chunk, once every step ran on it and before it is emitted (archived): the frame is the
   * one the chunk is of, its data valid until this resolves. Throwing fails the task. */
  chunk?(chunk: FrameOutput, frame: StepFrame): Promise<void>;
  /** The task's normal end, after its last chunk and before its result: flush what is open; throws what failed. */
  finish?(): Promise<void>;
  /** After a cancel or failure: best effort within a short time, never throws. `handedOn`: the task goes on on
   * another worker from its last checkpoint (this worker lost it, or shut down), which finishes what is open. */
  close?(handedOn?: boolean): Promise<void>;
  /**
   * The run's state after the frame just processed, JSON-serialisable, for a file task that another worker may
   * continue (docs/video.md, "When a worker dies"); restore() puts it back into a freshly opened run. A run with
   * state beyond its frames (chunk or finish hooks) and no snapshot makes its task not resumable.
   */
  snapshot?(): unknown;
  restore?(state: unknown, frames: FrameRefetch): Promise<void> | void;
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
  /** The steps planned before this one, in order (a step that needs, or allows only one of, another). */
  before: readonly PlannedStep[];
}

/** A checked step of one request. */
export interface PlannedStep {
  kind: string;
  index: number;
  /** Whether this step adds targets: later steps then work on them. */
  produces: boolean;
  /** Class names its targets may have (a detect step's detector labels), for later steps that name classes. */
  labels?: readonly string[];
  /** The step's per-task state (its tracker, say) and what it does on each frame, in step order; or a
   * StepRun for a step that also sees whole chunks or finishes at the task's end. */
  open(task: TaskContext): FrameRun | StepRun;
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
      throw errors.invalidParam(
        `steps[${i}].when.class_is`,
        `Expected an array of class names for steps[${i}].when.class_is`,
      );
    }
    out.classIs = new Set(w.class_is.map((c) => c.trim().toLowerCase()));
  }
  if (w.min_confidence !== undefined)
    out.minConfidence = unitNumber(`steps[${i}].when.min_confidence`, w.min_confidence);
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
