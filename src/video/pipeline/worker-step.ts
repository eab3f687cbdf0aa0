// The worker side of a pipeline step: work on the task as a whole in the worker that runs it, whichever
// provider (local or remote) made its frames (steps/worker-steps.ts runs these hooks): a per-task record made
// with the task, per-task state over each frame's whole output before it is archived, settings changed while
// the task runs, and what it adds to the results when the task succeeds. The runs of tasks in one process are
// kept in a LiveSteps registry that the worker owns and hands to the parts that read a running task's state.
import type { Services } from '../../services/services.js';
import type { Queryable } from '../../store/db.js';
import type { FrameOutput, VideoTaskRequest } from '../task-contract.js';

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
  /**
   * A task another worker began (its worker died: docs/video.md, "When a worker dies"): each frame chunk it
   * archived, in order, before the first new frame; the step rebuilds what is a function of them. Their
   * events went out when the frames were first archived, except perhaps the `last` one's: its worker may have
   * died between the append and the deliveries, so a step delivers those again (by event id, at most once).
   */
  replay?(frame: Pick<FrameOutput, 'stream_info' | 'delta' | 'analytics'>, last: boolean): Promise<void>;
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
  created?(
    q: Queryable,
    taskId: string,
    index: number,
    body: { steps: VideoTaskRequest['steps']; webhook?: { events?: readonly string[] } },
  ): Promise<void>;
  /** When a worker starts the task. */
  open(ctx: WorkerStepContext): Promise<WorkerStepRun>;
}

/** The worker-side runs of the tasks running in this process, by task id and step name (owned by the worker). */
export interface LiveSteps {
  /** The run of a task's step when the task runs in this process. */
  get(taskId: string, name: string): WorkerStepRun | undefined;
}
