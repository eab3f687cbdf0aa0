// Every pipeline step, in the order the request schema lists them. Adding a step is a folder under pipeline/
// exporting its descriptor (step.ts: schema, checks and plan, what it does per frame, what it adds to
// chunks) and one line here.
import { detectStep } from '../pipeline/detect/step.js';
import { ocrStep } from '../pipeline/ocr/step.js';
import { featureStep } from '../pipeline/feature/step.js';
import { analyticsStep } from '../analytics/step.js';
import { indexStep } from '../moments/step.js';
import type { StepDescriptor } from '../pipeline/step.js';

export const STEPS = [
  detectStep,
  ocrStep,
  featureStep,
  analyticsStep,
  indexStep,
] as const;

/** The step names a request may use, in registry order. */
export const STEP_MODELS: readonly string[] = STEPS.map((s) => s.name);

const byName: ReadonlyMap<string, StepDescriptor<never, unknown>> = new Map(STEPS.map((s) => [s.name, s as unknown as StepDescriptor<never, unknown>]));

/** The descriptor of a step name, or undefined. */
export function stepNamed(name: unknown): StepDescriptor<never, unknown> | undefined {
  return typeof name === 'string' ? byName.get(name) : undefined;
}

type Schemas<T extends readonly unknown[]> = { -readonly [K in keyof T]: T[K] extends { schema: infer S } ? S : never };

/** The steps' request schemas as a tuple, for the request body's discriminated union. */
export function stepSchemas(): Schemas<typeof STEPS> {
  return STEPS.map((s) => s.schema) as unknown as Schemas<typeof STEPS>;
}
