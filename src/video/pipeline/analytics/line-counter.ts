// Counting line crossings without counting flicker.
//
// The rule (defaults in rules.schema.ts, FLICKER_DEFAULTS; each overridable per line):
//  - margin: the anchor's signed distance d to the line is compared to a dead band of
//    max(margin_px, margin_box x box height) pixels (default max(4, 0.1 h)). Inside the band a track has no
//    new side; a track's first side is the first one it is seen on beyond the band.
//  - consecutive samples: the side flips only after min_samples (default 2) consecutive sampled frames
//    beyond the band on the other side; a sample back in the band restarts the run, one back on the old side
//    forgets the attempt.
//  - through the segment: the flip counts only when the anchor's last step across the infinite line (the
//    segment between two consecutive sightings, however far apart) passes between A and B. So a fast object
//    at a low sampling rate still counts: it needs one sighting beyond the band on the old side and
//    min_samples on the new side, not any sighting near the line.
//  - once: a flip counts one crossing; crossing back is a crossing the other way. The state lives with the
//    track id, so an id lost and found again on the same side has not flipped and counts nothing.
// Why these numbers (test/video/analytics/flicker.test.ts, eval `counting`): detector jitter of a standing
// person's foot point is a few percent of the box height per frame, so a band of 0.1 h absorbs it; the
// 4 px floor covers small far-away boxes. min_samples 2 discards one-frame box glitches (an occlusion
// that cuts a box's bottom for one frame moves its foot point by half a box). The price: a track must stay
// visible for 2 samples past the band after crossing, e.g. 0.2 s at 10 fps sampling.
import { cross, crossingParam } from './geometry.js';
import type { CompiledLine } from './rules.js';
import type { TrackState } from './track-state.js';

/** +1 `in` (to the side where (B-A)x(P-A) > 0), -1 `out`, 0 nothing. Call once per sighting of the track. */
export function stepLine(line: CompiledLine, st: TrackState, i: number): number {
  const o = line.anchor * 2;
  const px = st.cur[o], py = st.cur[o + 1];
  const d = cross(line.ax, line.ay, line.bx, line.by, px, py) * line.invLen;
  if (st.hasPrev) {
    const qx = st.prev[o], qy = st.prev[o + 1];
    const dq = cross(line.ax, line.ay, line.bx, line.by, qx, qy);
    if ((dq > 0) !== (d > 0) || dq === 0) {
      const t = crossingParam(line.ax, line.ay, line.bx, line.by, qx, qy, px, py);
      if (!Number.isNaN(t)) st.lineCrossT[i] = t;
    }
  }
  const mb = line.marginBox * st.boxHeight;
  const margin = mb > line.marginPx ? mb : line.marginPx;
  const beyond = d >= margin ? 1 : d <= -margin ? -1 : 0;
  const side = st.lineSide[i];
  if (side === 0) {
    if (beyond !== 0) { st.lineSide[i] = beyond; st.linePend[i] = 0; st.lineCrossT[i] = NaN; }
    return 0;
  }
  if (beyond === side) { st.linePend[i] = 0; st.lineCrossT[i] = NaN; return 0; }
  if (beyond === 0) { st.linePend[i] = 0; return 0; }
  if (++st.linePend[i] < line.minSamples) return 0;
  const t = st.lineCrossT[i];
  st.lineSide[i] = beyond;
  st.linePend[i] = 0;
  st.lineCrossT[i] = NaN;
  return t >= 0 && t <= 1 ? beyond : 0;
}

/**
 * The naive counter public line counters behave like by default, kept as the peer of the eval and bench:
 * every change of the anchor's side between two consecutive sightings through the segment counts.
 */
export function naiveStep(line: CompiledLine, st: TrackState): number {
  if (!st.hasPrev) return 0;
  const o = line.anchor * 2;
  const px = st.cur[o], py = st.cur[o + 1], qx = st.prev[o], qy = st.prev[o + 1];
  const d = cross(line.ax, line.ay, line.bx, line.by, px, py);
  const dq = cross(line.ax, line.ay, line.bx, line.by, qx, qy);
  if (d === 0 || (d > 0) === (dq > 0)) return 0;
  const t = crossingParam(line.ax, line.ay, line.bx, line.by, qx, qy, px, py);
  return t >= 0 && t <= 1 ? (d > 0 ? 1 : -1) : 0;
}
