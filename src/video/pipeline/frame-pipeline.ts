// One task's per-frame pipeline (docs/video.md, "Steps"): for each sampled frame the steps run in
// order over one list of targets. What each step does is its descriptor's (pipeline/<step>/step.ts, listed
// in steps.ts): detect adds tracked targets, ocr reads text (of targets, or of the whole frame as new
// targets), feature sets an appearance vector. A target a step's `when` does not select passes that step
// unchanged. roi is {left, top, width, height} in source pixels (the decoder hands frames at source size).
import type { StreamTarget, TrackSummary, VideoTaskRequest } from '../worker/provider.js';
import { checkSteps } from './plan.js';
import type { FrameModels, PlannedStep, StepFrame, WorkTarget } from './step.js';
import { STEPS } from './steps.js';
import { trackerSettings, TrackIds } from './target-tracker.js';
import { TrackSummaries } from './track-summary.js';

export type { FrameModels } from './step.js';

/** A decoded RGB24 frame (packed rows) at source size. */
export interface PipelineFrame {
  index: number;
  width: number;
  height: number;
  data: Uint8Array;
}

const round = (v: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};

/** What the registered steps add to a chunk's target, in registry order (so the JSON keys keep one order). */
const ADD_TO_TARGET = STEPS.flatMap((s) => (s.addToTarget ? [s.addToTarget] : []));

export class FramePipeline {
  readonly #summaries = new TrackSummaries();
  readonly #run: Array<(frame: StepFrame, targets: WorkTarget[]) => Promise<void>>;

  private constructor(readonly plan: PlannedStep[], models: FrameModels, request: VideoTaskRequest) {
    const task = { models, tracking: trackerSettings(request.tracker), ids: new TrackIds() };
    this.#run = plan.map((step) => step.open(task));
  }

  /**
   * Checks the request (ApiError on a bad step, model, class or tracker option) and prepares each step's
   * state (its tracker). Each detect step's detector (parameters.model, default the built-in) is loaded only
   * when a step names it; its labels check that step's `classes`.
   */
  static async create(request: VideoTaskRequest, models: FrameModels): Promise<FramePipeline> {
    return new FramePipeline(await checkSteps(request, models), models, request);
  }

  /** Runs every step on one frame (call once per sampled frame, in order) and returns its targets. */
  async process(frame: PipelineFrame, signal?: AbortSignal): Promise<StreamTarget[]> {
    const image = { data: frame.data, width: frame.width, height: frame.height, channels: 3 as const };
    const at: StepFrame = { index: frame.index, width: frame.width, height: frame.height, image, signal };
    const targets: WorkTarget[] = [];
    for (const run of this.#run) {
      signal?.throwIfAborted();
      await run(at, targets);
    }
    return targets.map((t) => {
      this.#summaries.add(frame.index, t);
      const out: StreamTarget = {
        track_id: t.trackId,
        class: t.class,
        confidence: round(t.confidence, 4),
        roi: { left: round(t.box[0], 1), top: round(t.box[1], 1), width: round(t.box[2] - t.box[0], 1), height: round(t.box[3] - t.box[1], 1) },
      };
      for (const add of ADD_TO_TARGET) add(t, out);
      return out;
    });
  }

  /** Per-track summary of everything processed so far (the task's results). */
  tracks(): TrackSummary[] {
    return this.#summaries.list();
  }
}
