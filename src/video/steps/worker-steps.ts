// The steps with worker hooks (step.ts, WorkerHooks) of one task, as the worker and the task API run them: opened
// when a worker starts the task, in step order; each frame goes through them after the provider's steps and
// before it is archived; their endings are merged into the results and the terminal chunk. Runs of tasks in
// this process are kept by task id in the worker's LiveStepRuns, which the worker hands to the parts that read
// a running task's state (an API call answered here reaches its step's state at once).
import type { Services } from '../../services/services.js';
import type { Queryable } from '../../store/db.js';
import type { FrameOutput, VideoTaskRequest } from '../task-contract.js';
import type { LiveSteps, WorkerHooks, WorkerStepEnd, WorkerStepRun } from '../pipeline/worker-step.js';
import { stepNamed } from './step-list.js';

/** The runs of the tasks one worker runs, by task id, then step name (the worker owns one). */
export class LiveStepRuns implements LiveSteps {
  private readonly runs = new Map<string, Map<string, WorkerStepRun>>();

  get(taskId: string, name: string): WorkerStepRun | undefined {
    return this.runs.get(taskId)?.get(name);
  }

  set(taskId: string, named: Map<string, WorkerStepRun>): void {
    this.runs.set(taskId, named);
  }

  delete(taskId: string): void {
    this.runs.delete(taskId);
  }
}

function hooked(request: Pick<VideoTaskRequest, 'steps'>): Array<{ index: number; name: string; hooks: WorkerHooks }> {
  if (!Array.isArray(request.steps)) return [];
  return request.steps.flatMap((st, index) => {
    const hooks = stepNamed(st?.model)?.worker;
    return hooks ? [{ index, name: st.model, hooks }] : [];
  });
}

/** As a task is created, in the transaction that inserts it: each step's `created` hook. */
export async function workerStepsCreated(
  q: Queryable,
  taskId: string,
  body: Parameters<NonNullable<WorkerHooks['created']>>[3],
): Promise<void> {
  for (const h of hooked(body)) await h.hooks.created?.(q, taskId, h.index, body);
}

export class WorkerSteps {
  private constructor(
    private readonly taskId: string,
    private readonly runs: WorkerStepRun[],
    private readonly live: LiveStepRuns,
  ) {}

  /** Opens the task's steps with worker hooks (none: an empty run, which passes frames unchanged), kept in `live` while it runs. */
  static async open(s: Services, taskId: string, request: VideoTaskRequest, live: LiveStepRuns): Promise<WorkerSteps> {
    const runs: WorkerStepRun[] = [];
    const named = new Map<string, WorkerStepRun>();
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
    return new WorkerSteps(taskId, runs, live);
  }

  get empty(): boolean {
    return this.runs.length === 0;
  }

  frame(frame: FrameOutput): FrameOutput {
    let out = frame;
    for (const r of this.runs) out = r.frame(out);
    return out;
  }

  /** A continued task's archived frames, in order, before its first new one (WorkerStepRun.replay). */
  async replay(frame: Pick<FrameOutput, 'stream_info' | 'delta' | 'analytics'>, last: boolean): Promise<void> {
    for (const r of this.runs) await r.replay?.(frame, last);
  }

  async archived(frame: FrameOutput): Promise<void> {
    for (const r of this.runs) await r.archived?.(frame);
  }

  async refresh(): Promise<void> {
    for (const r of this.runs) await r.refresh?.();
  }

  /** The task succeeded: every step's ending, merged (results fields, terminal chunk fields). */
  async finish(): Promise<Required<WorkerStepEnd>> {
    const end: Required<WorkerStepEnd> = { results: {}, chunk: {} };
    for (const r of this.runs) {
      const e = await r.finish?.();
      Object.assign(end.results, e?.results);
      Object.assign(end.chunk, e?.chunk);
    }
    return end;
  }

  close(): void {
    this.live.delete(this.taskId);
    for (const r of this.runs) r.close?.();
  }
}
