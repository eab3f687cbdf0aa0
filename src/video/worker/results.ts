// The aggregated result of a succeeded task, stored with the task at success, and its usage row.
// The provider's per-track summary is used when it has one (it alone sees feature vectors); otherwise the
// summary is folded from the frames the worker archived, so every provider gets a result.
import type { Services } from '../../services/services.js';
import { bill } from '../../usage/billing.js';
import type { FrameOutput, ProviderResult, TrackSummary } from '../task-contract.js';

export class TrackFold {
  private readonly tracks = new Map<number, TrackSummary>();

  add(frame: FrameOutput): void {
    const f = frame.stream_info.frame_index;
    for (const r of frame.delta.results) {
      for (const t of r.targets) {
        const s = this.tracks.get(t.track_id);
        if (!s) {
          this.tracks.set(t.track_id, {
            track_id: t.track_id,
            class: t.class,
            first_frame: f,
            last_frame: f,
            frames_seen: 1,
            best_confidence: t.confidence,
          });
        } else {
          if (s.last_frame !== f) s.frames_seen++;
          s.last_frame = Math.max(s.last_frame, f);
          s.best_confidence = Math.max(s.best_confidence, t.confidence);
        }
      }
    }
  }

  summaries(): TrackSummary[] {
    return [...this.tracks.values()].sort((a, b) => a.track_id - b.track_id);
  }
}

export interface TaskResults {
  id: string;
  object: 'mm.pipeline.result';
  model: string;
  usage: { processed_frames: number; processing_time_ms: number };
  tracks: TrackSummary[];
}

export function buildResults(
  id: string,
  model: string,
  processedFrames: number,
  result: ProviderResult,
  fold: TrackFold,
): TaskResults {
  return {
    id,
    object: 'mm.pipeline.result',
    model,
    usage: { processed_frames: processedFrames, processing_time_ms: Math.round(result.usage.processing_time_ms) },
    tracks: result.tracks.length > 0 ? result.tracks : fold.summaries(),
  };
}

/** One ledger row per task that processed frames (succeeded, or failed/cancelled part way). */
export async function recordUsage(
  s: Services,
  task: { projectId: string; keyId: string | null; model: string },
  frames: number,
  ms: number,
): Promise<void> {
  if (frames <= 0) return;
  await bill(s.usage, task, { endpoint: '/v1/video/process', model: task.model, frames, ms }, { when: 'now' });
}
