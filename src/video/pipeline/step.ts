// What a pipeline step is: one folder under pipeline/ exporting a StepDescriptor, listed in steps.ts. A
// descriptor says what a request's step looks like (its schema, joined into POST /v1/video/process), how it
// is checked and planned (every problem an ApiError naming steps[i]...), how it runs on each frame over the
// frame's targets, and what it adds to each target of a chunk. A step that works beside the targets (index:
// writing moments to a collection) also sees each whole chunk before it is emitted and finishes at the task's
// end (StepRun). A step that works on the task as a whole wherever its frames were made, local or remote
// provider (analytics: counting tracks, rules changed while it runs, a summary in the results), has worker
// hooks (WorkerHooks) that the worker runs over each chunk as archived (worker-steps.ts). The frame pipeline
// (frame-pipeline.ts) and the worker know no step by name.
import type { z } from 'zod';
import { errors } from '../../errors.js';
import type { RgbImage } from '../../media/rgb-image.js';
import type { TaskModels } from '../../task-models.js';
import type { Services } from '../../services.js';
import type { Queryable } from '../../store/db.js';
import type { FrameOutput, StreamTarget, VideoTaskRequest } from '../task-contract.js';
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

/** What a step may reach beyond the models: the services it needs, read when used (a part built after the
 * video part, such as vectors' collections, is set on the services object later). */
export type StepServices = Partial<Pick<Services, 'db' | 'log' | 'collections'>>;

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
  /** After a cancel or failure: best effort within a short time, never throws. */
  close?(): Promise<void>;
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

/** What a step's worker hooks are given when its task starts in a worker. */
export interface WorkerStepContext {
  s: Services;
  taskId: string;
  request: VideoTaskRequest;
  /** The step's index in request.steps. */
  index: number;
}

/** What a step's worker run adds when its task succeeds. */
export interface WorkerStepEnd {
  /** Fields of the task's results (GET /v1/video/tasks/:id/results). */
  results?: Record<string, unknown>;
  /** Fields of the terminal chunk. */
  chunk?: Record<string, unknown>;
}

/** One task's run of a step's worker hooks, in the worker that runs the task (per-task state lives here). */
export interface WorkerStepRun {
  /**
   * Each sampled frame after every other step (the provider's, local or remote), over the whole frame's
   * targets, before its chunk is archived: returns the frame as it is archived (with what the step adds).
   */
  frame(frame: FrameOutput): FrameOutput;
  /** After that chunk was archived (deliveries, saving state now and then). */
  archived?(frame: FrameOutput): Promise<void>;
  /** At every heartbeat: settings changed by another process (see `update`). */
  refresh?(): Promise<void>;
  /** New settings from the API while the task runs in this process, from the next frame on. */
  update?(settings: unknown, version: number): void;
  /** The task succeeded: close what is open and say what goes into the results and the terminal chunk. */
  finish?(): Promise<WorkerStepEnd>;
  /** The task is over, whichever way (after finish when it succeeded): release the state. */
  close?(): void;
}

/** A step that works on the task as a whole in the worker, beside or instead of its work in the provider. */
export interface WorkerHooks {
  /**
   * As the task is created (its per-task record, say), in the transaction that inserts it: a worker can take
   * the task the moment it is committed, and must find this already there. The body passed the schema and
   * the plan.
   */
  created?(q: Queryable, taskId: string, index: number, body: { steps: VideoTaskRequest['steps']; webhook?: { events?: readonly string[] } }): Promise<void>;
  /** When a worker starts the task. */
  open(ctx: WorkerStepContext): Promise<WorkerStepRun>;
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
   * step of the request, in order, before any step is planned. `scope`: the project and services the steps are
   * checked for (index: its collection); absent where no task is involved.
   */
  prepare?(index: number, params: Record<string, unknown> | undefined, models: Pick<FrameModels, 'detector'>, scope?: StepScope): Promise<Prepared>;
  /** Checks the step's parameters and `when` and plans it. */
  plan(input: PlanInput<Prepared>): PlannedStep;
  /** Copies what the step put on a work target into the chunk's target (called for every registered step, in registry order). */
  addToTarget?(target: WorkTarget, out: StreamTarget): void;
  /** Work on the whole task in the worker (worker-steps.ts): after the other steps on each chunk, per-task state, settings changed while it runs, a summary at the end. */
  worker?: WorkerHooks;
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
