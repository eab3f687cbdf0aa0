// One task's per-frame pipeline (docs/video.md, "Steps"): for each sampled frame the steps run in
// order over one list of targets. What each step does is its descriptor's (pipeline/<step>/step.ts, listed
// in steps.ts): detect adds tracked targets, ocr reads text (of targets, or of the whole frame as new
// targets), feature sets an appearance vector, index writes moments beside the targets (it sees each whole
// chunk, chunk(), and finishes at the task's end, finish()/close()). A target a step's `when` does not
// select passes that step unchanged. roi is {left, top, width, height} in source pixels (the decoder hands
// frames at source size).
import type { FrameOutput, StreamTarget, TrackSummary, VideoTaskRequest } from '../task-contract.js';
import { checkSteps } from './plan.js';
import type {
  FrameModels,
  FrameRefetch,
  FrameRun,
  PlannedStep,
  StepFrame,
  StepRun,
  StepTask,
  TaskContext,
  WorkTarget,
} from '../pipeline/frame-step.js';
import { STEPS } from './step-list.js';
import { trackerSettings } from '../pipeline/target-tracker.js';
import { ContinuedTrackIds } from '../pipeline/continued-track-ids.js';
import { TrackSummaries } from '../pipeline/track-summary.js';

export type { FrameModels } from '../pipeline/frame-step.js';

/** A decoded RGB24 frame (packed rows) at source size. */
export interface PipelineFrame {
  index: number;
  width: number;
  height: number;
  data: Uint8Array;
  /** StepFrame.before: where the frame can be decoded again (a file), undefined where it cannot. */
  before?: unknown;
}

const round = (v: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};

/** What the registered steps add to a chunk's target, in registry order (so the JSON keys keep one order). */
const ADD_TO_TARGET = STEPS.flatMap((s) => (s.addToTarget ? [s.addToTarget] : []));

/**
 * The pipeline's state after a frame (docs/video.md, "When a worker dies"): the task's track ids and each
 * step run's own state (its tracker), in step order; null for a run without state. `steps` names the planned
 * steps, so a snapshot is never put back into a pipeline of other steps.
 */
export interface PipelineSnapshot {
  v: 1;
  steps: string[];
  ids: unknown;
  runs: unknown[];
}

export class FramePipeline {
  readonly #summaries = new TrackSummaries();
  readonly #runs: StepRun[];
  readonly #frameRuns: FrameRun[];
  /** The frame last processed: the one the next chunk is of. */
  #last: StepFrame | null = null;
  readonly #ids: ContinuedTrackIds;

  private constructor(
    readonly plan: PlannedStep[],
    models: FrameModels,
    request: VideoTaskRequest,
    task?: StepTask,
    firstTrackId = 1,
  ) {
    this.#ids = new ContinuedTrackIds(firstTrackId);
    const ctx: TaskContext = {
      models,
      priority: task ? 'background' : 'interactive',
      tracking: trackerSettings(request.tracker),
      ids: this.#ids,
      task,
    };
    this.#runs = plan.map((step) => {
      const r = step.open(ctx);
      return typeof r === 'function' ? { frame: r } : r;
    });
    this.#frameRuns = this.#runs.flatMap((r) => (r.frame ? [r.frame] : []));
  }

  /**
   * Checks the request (ApiError on a bad step, model, class or tracker option) and prepares each step's
   * state (its tracker). Each detect step's detector (parameters.model, default the built-in) is loaded only
   * when a step names it; its labels check that step's `classes`. `task`: the task it runs for (steps that
   * write beyond the chunk, such as index, need it). `firstTrackId`: where the track ids start (above every id
   * of the task so far, when it continues after its worker died).
   */
  static async create(
    request: VideoTaskRequest,
    models: FrameModels,
    task?: StepTask,
    firstTrackId = 1,
  ): Promise<FramePipeline> {
    return new FramePipeline(await checkSteps(request, models, task), models, request, task, firstTrackId);
  }

  /**
   * The state after the frame last processed, for another worker to continue from (restore()); null when the
   * task cannot be continued that way: a step run with state beyond its frames and no snapshot of it (index),
   * or tracks with mean feature vectors, which the archive the next worker reads does not hold.
   */
  snapshot(): PipelineSnapshot | null {
    if (!this.canSnapshot) return null;
    const runs = this.#runs.map((r) => (r.snapshot ? r.snapshot() : null));
    return { v: 1, steps: this.plan.map((p) => p.kind), ids: this.#ids.snapshot(), runs };
  }

  /** Whether snapshot() would give a state now, without taking it (a frame that stores no checkpoint). */
  get canSnapshot(): boolean {
    if (!this.#summaries.fromArchive) return false;
    return this.#runs.every((r) => r.snapshot || !(r.chunk || r.finish));
  }

  /** Puts a snapshot() back into this freshly created pipeline (before its first frame); throws when it does
   * not fit this pipeline's steps. `frames` decodes again a frame a step kept pixels of. */
  async restore(s: unknown, frames: FrameRefetch): Promise<void> {
    const snap = s as Partial<PipelineSnapshot> | null;
    const kinds = this.plan.map((p) => p.kind);
    if (
      !snap ||
      snap.v !== 1 ||
      !Array.isArray(snap.steps) ||
      !Array.isArray(snap.runs) ||
      snap.steps.join(',') !== kinds.join(',') ||
      snap.runs.length !== this.#runs.length
    )
      throw new Error(`The checkpoint's pipeline state does not fit the task's steps (${kinds.join(', ')})`);
    this.#ids.restore(snap.ids);
    for (const [i, r] of this.#runs.entries()) {
      const state = snap.runs[i];
      if (state === null || state === undefined) continue;
      if (!r.restore) throw new Error(`The checkpoint holds state for step ${i} (${kinds[i]}), which keeps none`);
      await r.restore(state, frames);
    }
  }

  /** Above every track id handed out so far (a checkpoint's next_track_id). */
  get nextTrackId(): number {
    return this.#ids.next;
  }

  /** Runs every step on one frame (call once per sampled frame, in order) and returns its targets. */
  async process(frame: PipelineFrame, signal?: AbortSignal): Promise<StreamTarget[]> {
    const image = { data: frame.data, width: frame.width, height: frame.height, channels: 3 as const };
    const at: StepFrame = { index: frame.index, width: frame.width, height: frame.height, image, signal };
    if (frame.before !== undefined) at.before = frame.before;
    const targets: WorkTarget[] = [];
    this.#last = at;
    for (const run of this.#frameRuns) {
      signal?.throwIfAborted();
      await run(at, targets);
    }
    return targets.map((t) => {
      this.#summaries.add(frame.index, t);
      const out: StreamTarget = {
        track_id: t.trackId,
        class: t.class,
        confidence: round(t.confidence, 4),
        roi: {
          left: round(t.box[0], 1),
          top: round(t.box[1], 1),
          width: round(t.box[2] - t.box[0], 1),
          height: round(t.box[3] - t.box[1], 1),
        },
      };
      for (const add of ADD_TO_TARGET) add(t, out);
      return out;
    });
  }

  /** Hands the chunk of the frame just processed to the steps that see whole chunks; call before emitting it. */
  async chunk(out: FrameOutput): Promise<void> {
    const frame = this.#last;
    this.#last = null;
    if (!frame) return;
    for (const r of this.#runs) if (r.chunk) await r.chunk(out, frame);
  }

  /** The task's normal end (after its last chunk): each step flushes what it holds; throws what failed. */
  async finish(): Promise<void> {
    for (const r of this.#runs) if (r.finish) await r.finish();
  }

  /** After a cancel or failure: each step's best-effort close (never throws); `handedOn` as StepRun.close's. */
  async close(handedOn = false): Promise<void> {
    await Promise.all(this.#runs.map((r) => r.close?.(handedOn).catch(() => undefined)));
  }

  /** Per-track summary of everything processed so far (the task's results). */
  tracks(): TrackSummary[] {
    return this.#summaries.list();
  }
}
