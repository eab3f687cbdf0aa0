// Synthetic tracks for the analytics tests: a seeded generator and a driver that feeds anchor paths
// (bottom-centre points) to an engine as boxes.
import { AnalyticsEngine, type AnalyticsEvent, type AnalyticsFrame } from '../../../src/video/analytics/engine.js';
import { parseAnalytics } from '../../../src/video/analytics/rules.js';

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One track's sightings: anchor point per sample, null where it is not seen. */
export type Path = Array<readonly [number, number] | null>;

export function engineFor(params: unknown): AnalyticsEngine {
  return new AnalyticsEngine(parseAnalytics(params, 'parameters'));
}

/** Frames for several tracks' paths (same length or shorter), 10 samples a second, boxes 20 x h. */
export function framesOf(paths: Path[], h = 40, cls = 'person', width = 640, height = 480): AnalyticsFrame[] {
  const n = Math.max(...paths.map((p) => p.length));
  return Array.from({ length: n }, (_, f) => ({
    t_ms: f * 100,
    frame_index: f,
    width,
    height,
    tracks: paths.flatMap((p, id) => {
      const a = p[f];
      return a ? [{ track_id: id + 1, class: cls, box: [a[0] - 10, a[1] - h, a[0] + 10, a[1]] as const }] : [];
    }),
  }));
}

export function runAll(engine: AnalyticsEngine, frames: AnalyticsFrame[]): AnalyticsEvent[] {
  const events = frames.flatMap((f) => engine.process(f).events);
  return [...events, ...engine.finish()];
}
