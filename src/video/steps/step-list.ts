// Every pipeline step, in the order the request schema lists them. Adding a step is its descriptor
// (pipeline/step.ts: schema, checks and plan, what it does per frame and in the worker, what it adds to the API's
// answers) in a folder of pipeline/, or in a room of its own beside it when it has tables or routes (analytics/,
// moments/), and one line here. What the steps add to the API is gathered here, so the video part's shell
// (schemas.ts, tasks/) names none of them.
import { detectStep } from '../pipeline/detect/step.js';
import { ocrStep } from '../pipeline/ocr/step.js';
import { featureStep } from '../pipeline/feature/step.js';
import { analyticsStep } from '../analytics/step.js';
import { indexStep } from '../moments/step.js';
import type { z } from 'zod';
import type { Queryable } from '../../store/db.js';
import type { StepApi, StepDescriptor } from '../pipeline/step.js';

export const STEPS = [detectStep, ocrStep, featureStep, analyticsStep, indexStep] as const;

/** The step names a request may use, in registry order. */
export const STEP_MODELS: readonly string[] = STEPS.map((s) => s.name);

const byName: ReadonlyMap<string, StepDescriptor<never, unknown>> = new Map(
  STEPS.map((s) => [s.name, s as unknown as StepDescriptor<never, unknown>]),
);

/** The descriptor of a step name, or undefined. */
export function stepNamed(name: unknown): StepDescriptor<never, unknown> | undefined {
  return typeof name === 'string' ? byName.get(name) : undefined;
}

type Schemas<T extends readonly unknown[]> = { -readonly [K in keyof T]: T[K] extends { schema: infer S } ? S : never };

/** The steps' request schemas as a tuple, for the request body's discriminated union. */
export function stepSchemas(): Schemas<typeof STEPS> {
  return STEPS.map((s) => s.schema) as unknown as Schemas<typeof STEPS>;
}

/** Every step's fields of one kind of answer (the task record, the results, a chunk), in registry order. */
export function stepApiFields(kind: 'record' | 'results' | 'chunk'): z.ZodRawShape {
  return Object.assign({}, ...STEPS.map((s) => (s.api as StepApi | undefined)?.[kind] ?? {}));
}

/** The event types a task's webhook may ask for (`webhook.events`), with the step that emits each. */
export const WEBHOOK_EVENTS: ReadonlyMap<string, string> = new Map(
  STEPS.flatMap((s) => ((s.api as StepApi | undefined)?.webhookEvents ?? []).map((e) => [e, s.name] as const)),
);

/** What every step adds to one task's record (GET /v1/video/tasks/:id). */
export async function stepRecordFields(q: Queryable, taskId: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const s of STEPS) Object.assign(out, await (s.api as StepApi | undefined)?.recordOf?.(q, taskId));
  return out;
}
