// A task's per-track results, folded from the targets a provider emits. Unlike the worker's fold
// from archived chunks, this one sees feature vectors, so it can give the digest of each track's mean vector.
import type { TrackSummary } from '../task-contract.js';
import { featureDigest } from './feature/colour-layout.js';

interface Acc {
  summary: TrackSummary;
  sum: Float64Array | null;
  vectors: number;
}

export class TrackSummaries {
  readonly #tracks = new Map<number, Acc>();
  /** Some track has a feature vector (read for every frame's checkpoint, so kept rather than searched). */
  #vectors = false;

  add(frameIndex: number, t: { trackId: number; class: string; confidence: number; feature?: Float32Array }): void {
    let a = this.#tracks.get(t.trackId);
    if (!a) {
      a = {
        summary: {
          track_id: t.trackId,
          class: t.class,
          first_frame: frameIndex,
          last_frame: frameIndex,
          frames_seen: 0,
          best_confidence: t.confidence,
        },
        sum: null,
        vectors: 0,
      };
      this.#tracks.set(t.trackId, a);
    }
    const s = a.summary;
    // A track appears at most once per frame (one tracker per producing step), but be exact regardless.
    if (s.frames_seen === 0 || s.last_frame !== frameIndex) s.frames_seen++;
    s.first_frame = Math.min(s.first_frame, frameIndex);
    s.last_frame = Math.max(s.last_frame, frameIndex);
    s.best_confidence = Math.max(s.best_confidence, t.confidence);
    if (t.feature) {
      a.sum ??= new Float64Array(t.feature.length);
      this.#vectors = true;
      if (a.sum.length === t.feature.length) {
        for (let i = 0; i < t.feature.length; i++) a.sum[i] += t.feature[i];
        a.vectors++;
      }
    }
  }

  /**
   * Whether another worker could carry these summaries on from the archive alone: not once a track has a mean
   * feature vector, which the archived chunks do not hold (its task is then not resumable).
   */
  get fromArchive(): boolean {
    return !this.#vectors;
  }

  /**
   * Sorted by track id; feature_digest only for tracks a feature step saw. best_confidence is rounded as the
   * chunks' confidences are, so the results are the same whether they come from here or, for a task continued
   * on another worker, from the archived chunks (worker/results.ts).
   */
  list(): TrackSummary[] {
    return [...this.#tracks.values()]
      .sort((x, y) => x.summary.track_id - y.summary.track_id)
      .map((a) => {
        const summary = { ...a.summary, best_confidence: Math.round(a.summary.best_confidence * 1e4) / 1e4 };
        if (!a.sum || a.vectors === 0) return summary;
        const mean = a.sum.map((v) => v / a.vectors);
        return { ...summary, feature_digest: featureDigest(mean) };
      });
  }
}
