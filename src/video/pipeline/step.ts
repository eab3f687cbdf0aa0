// What a pipeline step is: one descriptor exporting both its lifecycles, listed in steps/step-list.ts. A
// descriptor says what a request's step looks like (its schema, joined into POST /v1/video/process), how it is
// checked and planned (frame-step.ts: every problem an ApiError naming steps[i]...), what it adds to each target
// of a chunk, what it does in the worker over the whole task (worker-step.ts) and what it adds to the API's
// answers (the task record, results and chunk fields; webhook events a task may ask for). The frame pipeline
// (steps/frame-pipeline.ts), the worker and the video part's shell know no step by name.
import type { z } from 'zod';
import type { Queryable } from '../../store/db.js';
import type { StreamTarget } from '../task-contract.js';
import type { FrameModels, PlanInput, PlannedStep, StepScope, WorkTarget } from './frame-step.js';
import type { WorkerHooks } from './worker-step.js';

export type { StepRequest } from './frame-step.js';

/** What a step adds to the API's answers and accepts beside its own parameters; every field is optional. */
export interface StepApi {
  /** Event types the step puts in chunks that a task's webhook may ask for (`webhook.events`). */
  webhookEvents?: readonly string[];
  /** Fields the step adds to the task record (GET /v1/video/tasks/:id), for the OpenAPI document. */
  record?: z.ZodRawShape;
  /** Fields it adds to the results of a succeeded task, for the OpenAPI document. */
  results?: z.ZodRawShape;
  /** Fields it adds to a stream chunk, for the OpenAPI document. */
  chunk?: z.ZodRawShape;
  /** The record's fields for one task (read whatever the task's steps: none answers {}). */
  recordOf?(q: Queryable, taskId: string): Promise<Record<string, unknown>>;
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
  prepare?(
    index: number,
    params: Record<string, unknown> | undefined,
    models: Pick<FrameModels, 'detector'>,
    scope?: StepScope,
  ): Promise<Prepared>;
  /** Checks the step's parameters and `when` and plans it. */
  plan(input: PlanInput<Prepared>): PlannedStep;
  /** Copies what the step put on a work target into the chunk's target (called for every registered step, in registry order). */
  addToTarget?(target: WorkTarget, out: StreamTarget): void;
  /** Work on the whole task in the worker (worker-step.ts): after the other steps on each chunk, per-task state, settings changed while it runs, a summary at the end. */
  worker?: WorkerHooks;
  /** What it adds to the API's answers and accepts beside its parameters. */
  api?: StepApi;
}

/** Keeps a descriptor's own schema and prepared types (so the registry's schemas stay exact). */
export function defineStep<Schema extends z.ZodObject, Prepared = undefined>(
  d: StepDescriptor<Schema, Prepared>,
): StepDescriptor<Schema, Prepared> {
  return d;
}
