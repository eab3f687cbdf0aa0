// A task's steps (docs/video.md, "Steps") checked and turned into a plan the frame pipeline runs.
// The HTTP schema already rejects unknown step models and parameters; this file re-checks what the
// pipeline relies on (a provider may be handed a request that never passed the schema: a remote node's,
// a test's), and each step's descriptor (steps.ts) checks what only it knows, e.g. detector class names.
// Every problem is an ApiError.
import { errors } from '../../base/errors.js';
import type { VideoTaskRequest } from '../task-contract.js';
import { parseWhen, type FrameModels, type PlannedStep, type StepScope } from '../pipeline/frame-step.js';
import { STEP_MODELS, stepNamed } from './step-list.js';

/**
 * Loads what each step needs to be checked (detect: its detector), step by step in order, by step index
 * (ApiError 400 for an unknown `parameters.model`).
 */
export async function prepareSteps(
  request: Pick<VideoTaskRequest, 'steps'>,
  models: Pick<FrameModels, 'detector'>,
  scope?: StepScope,
): Promise<Map<number, unknown>> {
  const out = new Map<number, unknown>();
  if (!Array.isArray(request.steps)) return out;
  for (const [i, s] of request.steps.entries()) {
    const d = stepNamed(s?.model);
    if (d?.prepare) out.set(i, await d.prepare(i, s.parameters as Record<string, unknown> | undefined, models, scope));
  }
  return out;
}

/** Checks the steps (with what prepareSteps loaded for them) and returns the plan. */
export function planSteps(
  request: Pick<VideoTaskRequest, 'steps'>,
  prepared: ReadonlyMap<number, unknown>,
): PlannedStep[] {
  if (!Array.isArray(request.steps) || request.steps.length === 0) {
    throw errors.invalidParam('steps', 'Expected at least one step in steps');
  }
  const plan: PlannedStep[] = [];
  let producer = false;
  request.steps.forEach((step, i) => {
    const params = (step.parameters ?? {}) as Record<string, unknown>;
    const d = stepNamed(step.model);
    if (!d) {
      throw errors.invalidParam(
        `steps[${i}].model`,
        `Expected one of ${STEP_MODELS.join(', ')} for steps[${i}].model but received ${JSON.stringify(step.model)}`,
      );
    }
    for (const k of Object.keys(params)) {
      if (!d.parameters.includes(k))
        throw errors.invalidParam(
          `steps[${i}].parameters.${k}`,
          `Unknown parameter ${k} for a ${step.model} step; expected one of ${d.parameters.join(', ')}`,
        );
    }
    const planned = d.plan({
      index: i,
      params,
      when: () => parseWhen(i, step.when),
      afterProducer: producer,
      prepared: prepared.get(i) as never,
      before: [...plan],
    });
    if (planned.produces) producer = true;
    plan.push(planned);
  });
  return plan;
}

/** Checks a request's steps as a provider would run them: what they need loaded, then the plan. */
export async function checkSteps(
  request: Pick<VideoTaskRequest, 'steps'>,
  models: Pick<FrameModels, 'detector'>,
  scope?: StepScope,
): Promise<PlannedStep[]> {
  return planSteps(request, await prepareSteps(request, models, scope));
}
