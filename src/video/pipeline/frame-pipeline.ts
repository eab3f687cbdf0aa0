// One task's per-frame pipeline (docs/api.md, "Video tasks"): for each sampled frame the steps run in
// order over one list of targets.
//  - detect adds targets: its detections of the requested classes at or above confidence_threshold (default
//    0.5), each with a track id from this step's tracker (target-tracker.ts). Its `when` has nothing to select
//    (it does not change existing targets) and is ignored.
//  - ocr reads the region of each target its `when` selects and sets `text` (possibly ''). With no producing
//    step before it, it reads the whole frame and adds one target of class `text` per line, tracked too.
//  - feature sets `feature_digest` on each selected target (feature/colour-layout.ts) and feeds the track's mean vector.
//  - a target a step's `when` does not select passes that step unchanged.
// roi is {left, top, width, height} in source pixels (the decoder hands frames at source size).
import type { Detector } from '../../detection/detect.js';
import type { TaskModels } from '../../task-models.js';
import type { StreamTarget, TrackSummary, VideoTaskRequest } from '../worker/provider.js';
import { describeRegions, featureDigest } from './feature/colour-layout.js';
import { detectStepModel, planSteps, selects, type StepPlan } from './plan.js';
import { candidateFloor, TargetTracker, trackerSettings, TrackIds, type Candidate } from './target-tracker.js';
import { TrackSummaries } from './track-summary.js';

/** A decoded RGB24 frame (packed rows) at source size. */
export interface PipelineFrame {
  index: number;
  width: number;
  height: number;
  data: Uint8Array;
}

interface WorkTarget {
  trackId: number;
  class: string;
  confidence: number;
  box: [number, number, number, number];
  text?: string;
  feature?: Float32Array;
}

const round = (v: number, digits: number) => {
  const f = 10 ** digits;
  return Math.round(v * f) / f;
};

function clampBox(b: readonly number[], w: number, h: number): [number, number, number, number] {
  const c = (v: number, hi: number) => Math.min(hi, Math.max(0, v));
  return [c(b[0], w), c(b[1], h), c(b[2], w), c(b[3], h)];
}

/** The detector of every detect step, by step index (ApiError 400 for an unknown `parameters.model`). */
export async function stepDetectors(request: Pick<VideoTaskRequest, 'steps'>, models: Pick<FrameModels, 'detector'>): Promise<Map<number, Detector>> {
  const out = new Map<number, Detector>();
  if (!Array.isArray(request.steps)) return out;
  for (const [i, s] of request.steps.entries()) {
    if (s?.model !== 'detect') continue;
    const id = detectStepModel(i, s.parameters as Record<string, unknown> | undefined);
    out.set(i, await (id === undefined ? models.detector() : models.detector(id, `steps[${i}].parameters.model`)));
  }
  return out;
}

/** The task models the steps run: the detector (detect) and OCR (ocr). */
export type FrameModels = Pick<TaskModels, 'detector' | 'ocrImage' | 'ocrRegion'>;

export class FramePipeline {
  readonly #summaries = new TrackSummaries();
  readonly #trackers = new Map<number, TargetTracker>();
  /** Lowest detector score each detect step hands its tracker (below the reporting threshold, see target-tracker.ts). */
  readonly #floor: Map<number, number>;

  private constructor(readonly plan: StepPlan[], private readonly detectors: ReadonlyMap<number, Detector>, private readonly models: FrameModels, request: VideoTaskRequest) {
    const settings = trackerSettings(request.tracker);
    const ids = new TrackIds();
    for (const step of plan) {
      if (step.kind === 'detect') this.#trackers.set(step.index, new TargetTracker(settings, step.index, ids, step.threshold));
      if (step.kind === 'ocr' && step.frameLevel) this.#trackers.set(step.index, new TargetTracker(settings, step.index, ids, 0));
    }
    this.#floor = new Map(plan.flatMap((s) => (s.kind === 'detect' ? [[s.index, candidateFloor(settings, s.threshold)] as const] : [])));
  }

  /**
   * Checks the request (ApiError on a bad step, model, class or tracker option) and prepares its trackers.
   * Each detect step's detector (parameters.model, default the built-in) is loaded only when a step names it;
   * its labels check that step's `classes`.
   */
  static async create(request: VideoTaskRequest, models: FrameModels): Promise<FramePipeline> {
    const detectors = await stepDetectors(request, models);
    return new FramePipeline(planSteps(request, (i) => detectors.get(i)?.labels ?? []), detectors, models, request);
  }

  /** Runs every step on one frame (call once per sampled frame, in order) and returns its targets. */
  async process(frame: PipelineFrame, signal?: AbortSignal): Promise<StreamTarget[]> {
    const image = { data: frame.data, width: frame.width, height: frame.height, channels: 3 as const };
    const targets: WorkTarget[] = [];
    for (const step of this.plan) {
      signal?.throwIfAborted();
      if (step.kind === 'detect') {
        const detector = this.detectors.get(step.index)!;
        const raw = await detector.detectRaw(image, this.#floor.get(step.index)!);
        const candidates: Array<Candidate & { classId: number }> = raw
          .filter((d) => !step.classIds || step.classIds.has(d.classId))
          .map((d) => ({ box: clampBox(d.box, frame.width, frame.height), score: d.score, cls: detector.labels[d.classId] ?? String(d.classId), classId: d.classId }));
        for (const { candidate, trackId } of this.#trackers.get(step.index)!.assign(candidates)) {
          targets.push({ trackId, class: candidate.cls, confidence: candidate.score, box: [...candidate.box] });
        }
      } else if (step.kind === 'ocr' && step.frameLevel) {
        const r = await this.models.ocrImage(image, { language: step.language });
        const candidates = r.blocks.map((b) => ({ box: clampBox(b.bbox, frame.width, frame.height), score: b.confidence, cls: 'text', text: b.text }));
        for (const { candidate, trackId } of this.#trackers.get(step.index)!.assign(candidates)) {
          targets.push({ trackId, class: 'text', confidence: candidate.score, box: [...candidate.box], text: candidate.text });
        }
      } else if (step.kind === 'ocr') {
        for (const t of targets) {
          if (!selects(step.when, t)) continue;
          signal?.throwIfAborted();
          t.text = (await this.models.ocrRegion(image, t.box, { language: step.language })).text;
        }
      } else {
        const chosen = targets.filter((t) => selects(step.when, t) && t.box[2] > t.box[0] && t.box[3] > t.box[1]);
        const vectors = describeRegions(image, chosen.map((t) => t.box));
        chosen.forEach((t, i) => { t.feature = vectors[i]; });
      }
    }
    return targets.map((t) => {
      this.#summaries.add(frame.index, t);
      const out: StreamTarget = {
        track_id: t.trackId,
        class: t.class,
        confidence: round(t.confidence, 4),
        roi: { left: round(t.box[0], 1), top: round(t.box[1], 1), width: round(t.box[2] - t.box[0], 1), height: round(t.box[3] - t.box[1], 1) },
      };
      if (t.text !== undefined) out.text = t.text;
      if (t.feature) out.feature_digest = featureDigest(t.feature);
      return out;
    });
  }

  /** Per-track summary of everything processed so far (the task's results). */
  tracks(): TrackSummary[] {
    return this.#summaries.list();
  }
}
