// The steps with task hooks (step.ts, TaskHooks) of one task, as the worker and the task API run them: opened
// when a worker starts the task, in step order; each frame goes through them after the provider's steps and
// before it is archived; their endings are merged into the results and the terminal chunk. Runs of tasks in
// this process are kept by task id, so an API call answered here reaches its step's state at once.
import type { Services } from '../../services.js';
import type { FrameOutput, VideoTaskRequest } from '../worker/provider.js';
import type { TaskHooks, TaskStepEnd, TaskStepRun } from './step.js';
import { stepNamed } from './steps.js';

/** Runs in this process, by task id, then step name. */
const live = new Map<string, Map<string, TaskStepRun>>();

/** The run of a task's step (by its name) when the task runs in this process. */
export function liveTaskStep(taskId: string, name: string): TaskStepRun | undefined {
  return live.get(taskId)?.get(name);
}

function hooked(request: Pick<VideoTaskRequest, 'steps'>): Array<{ index: number; name: string; hooks: TaskHooks }> {
  if (!Array.isArray(request.steps)) return [];
  return request.steps.flatMap((st, index) => {
    const hooks = stepNamed(st?.model)?.task;
    return hooks ? [{ index, name: st.model, hooks }] : [];
  });
}

/** Right after a task was created: each step's `created` hook. */
export async function taskStepsCreated(s: Services, taskId: string, body: Parameters<NonNullable<TaskHooks['created']>>[3]): Promise<void> {
  for (const h of hooked(body)) await h.hooks.created?.(s, taskId, h.index, body);
}

export class TaskSteps {
  private constructor(private readonly taskId: string, private readonly runs: TaskStepRun[]) {}

  /** Opens the task's steps with task hooks (none: an empty run, which passes frames unchanged). */
  static async open(s: Services, taskId: string, request: VideoTaskRequest): Promise<TaskSteps> {
    const runs: TaskStepRun[] = [];
    const named = new Map<string, TaskStepRun>();
    try {
      for (const h of hooked(request)) {
        const run = await h.hooks.open({ s, taskId, request, index: h.index });
        runs.push(run);
        named.set(h.name, run);
      }
    } catch (e) {
      for (const r of runs) r.close?.();
      throw e;
    }
    if (named.size > 0) live.set(taskId, named);
    return new TaskSteps(taskId, runs);
  }

  get empty(): boolean {
    return this.runs.length === 0;
  }

  frame(frame: FrameOutput): FrameOutput {
    let out = frame;
    for (const r of this.runs) out = r.frame(out);
    return out;
  }

  async archived(frame: FrameOutput): Promise<void> {
    for (const r of this.runs) await r.archived?.(frame);
  }

  async refresh(): Promise<void> {
    for (const r of this.runs) await r.refresh?.();
  }

  /** The task succeeded: every step's ending, merged (results fields, terminal chunk fields). */
  async finish(): Promise<Required<TaskStepEnd>> {
    const end: Required<TaskStepEnd> = { results: {}, chunk: {} };
    for (const r of this.runs) {
      const e = await r.finish?.();
      Object.assign(end.results, e?.results);
      Object.assign(end.chunk, e?.chunk);
    }
    return end;
  }

  close(): void {
    live.delete(this.taskId);
    for (const r of this.runs) r.close?.();
  }
}
