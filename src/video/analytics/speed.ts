// Ground speed of a track from a homography (four image points and their positions in metres): the anchor
// (bottom_center: the point on the ground) is projected to the ground plane at each sighting; the speed is
// the distance covered over the last `window_ms` of stream time (the oldest sighting inside it) divided by
// that time, then smoothed exponentially (alpha 0.5) so one jumpy box does not read as a sprint.
import { project, type Homography } from './geometry.js';
import type { TrackState } from './track-state.js';

const ALPHA = 0.5;
const out: [number, number] = [0, 0];

/** Updates st.speedKmh from the sighting at t_ms with anchor (x, y); NaN until two sightings are known. */
export function stepSpeed(h: Homography, windowMs: number, st: TrackState, tMs: number, x: number, y: number): void {
  if (!project(h, x, y, out)) return;
  const g = st.ground;
  g.push({ t: tMs, x: out[0], y: out[1] });
  while (g.length > 2 && tMs - g[1].t >= windowMs) g.shift();
  const first = g[0];
  const dt = tMs - first.t;
  if (dt <= 0) return;
  const kmh = (Math.hypot(out[0] - first.x, out[1] - first.y) / (dt / 1000)) * 3.6;
  st.speedKmh = Number.isNaN(st.speedKmh) ? kmh : ALPHA * kmh + (1 - ALPHA) * st.speedKmh;
}
