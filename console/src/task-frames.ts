// The frames of a task as they arrive on the stream, kept sorted by frame index, with the lookups the player
// needs: which frame is showing at a video time, and the size of the box space when no video is available.
import type { AnalyticsEvent, StreamChunk, Target, TrackSummary } from './api/types';

/** The events a person checks a count by: each line crossing, zone entry and exit, at its stream time. */
const COUNTED = new Set(['line.crossed', 'zone.entered', 'zone.exited']);

export interface Frame {
  index: number;
  time: number;
  targets: Target[];
}

export class TaskFrames {
  readonly frames: Frame[] = [];
  /** Counted events (COUNTED) in stream order, the terminal chunk's closing exits included. */
  readonly events: AnalyticsEvent[] = [];
  fps = 0;

  add(chunk: StreamChunk): void {
    const info = chunk.stream_info;
    for (const e of chunk.analytics?.events ?? []) if (COUNTED.has(e.type)) this.events.push(e);
    if (info.fps > 0) this.fps = info.fps;
    const targets = chunk.delta.results.flatMap((r) => r.targets ?? []);
    // A terminal chunk may repeat the last frame's info without results: nothing to draw.
    if (chunk.finish_reason !== null && targets.length === 0) return;
    const last = this.frames[this.frames.length - 1];
    if (last && last.index === info.frame_index) {
      last.targets.push(...targets);
      return;
    }
    const fps = this.fps > 0 ? this.fps : 1;
    // The frame's own time where the server gives it (variable frame rates, a stream replayed from an offset).
    const time = info.stream_time_ms !== undefined ? info.stream_time_ms / 1000 : info.frame_index / fps;
    const frame = { index: info.frame_index, time, targets };
    if (!last || last.index < frame.index) this.frames.push(frame);
    else {
      // Out of order (should not happen: frame_index never decreases); insert where it belongs.
      const at = this.frames.findIndex((f) => f.index > frame.index);
      this.frames.splice(at, 0, frame);
    }
  }

  /** Position of the last frame at or before `t` seconds, or -1 before the first one. */
  positionAt(t: number): number {
    let lo = 0;
    let hi = this.frames.length - 1;
    let best = -1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.frames[mid]!.time <= t + 1e-3) {
        best = mid;
        lo = mid + 1;
      } else hi = mid - 1;
    }
    return best;
  }

  /** The smallest frame that holds every box: the coordinate space when the source video cannot be shown. */
  extent(): { width: number; height: number } {
    const e = this.boxExtent();
    return { width: Math.ceil(e.width * 1.05), height: Math.ceil(e.height * 1.05) };
  }

  /**
   * The frame the server draws a heatmap on when it knows no frame size (a task without an analytics step):
   * the boxes' right and bottom edges, rounded up.
   */
  boxExtent(): { width: number; height: number } {
    let width = 1;
    let height = 1;
    for (const f of this.frames) {
      for (const t of f.targets) {
        width = Math.max(width, t.roi.left + t.roi.width);
        height = Math.max(height, t.roi.top + t.roi.height);
      }
    }
    return { width: Math.ceil(width), height: Math.ceil(height) };
  }

  /** Per-track summary from the frames received so far (the server's /results is final once succeeded). */
  summary(): TrackSummary[] {
    const tracks = new Map<number, TrackSummary>();
    for (const f of this.frames) {
      for (const t of f.targets) {
        const s = tracks.get(t.track_id);
        if (!s)
          tracks.set(t.track_id, {
            track_id: t.track_id,
            class: t.class,
            first_frame: f.index,
            last_frame: f.index,
            frames_seen: 1,
            best_confidence: t.confidence,
          });
        else {
          s.last_frame = f.index;
          s.frames_seen++;
          s.best_confidence = Math.max(s.best_confidence, t.confidence);
        }
      }
    }
    return [...tracks.values()].sort((a, b) => a.track_id - b.track_id);
  }
}
