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
import { crossingParam } from './geometry.js';
import type { CompiledLine } from './rules.js';
import type { TrackState } from './track-state.js';

/** Per line, packed for the per-frame loop: ax, ay, bx, by, 1/|AB|, margin_px, margin_box, min_samples. */
export const LINE_STRIDE = 8;

export function packLines(lines: readonly CompiledLine[]): { packed: Float64Array; anchorOffset: Int32Array } {
  const packed = new Float64Array(lines.length * LINE_STRIDE);
  lines.forEach((l, i) => packed.set([l.ax, l.ay, l.bx, l.by, l.invLen, l.marginPx, l.marginBox, l.minSamples], i * LINE_STRIDE));
  return { packed, anchorOffset: Int32Array.from(lines, (l) => l.anchor * 2) };
}

/**
 * Steps every line for one sighting of a track: out[i] = +1 `in` (to the side where (B-A)x(P-A) > 0), -1
 * `out`, 0 nothing. `mask` (when not null) says which lines count the track's class. One tight loop over
 * typed arrays: with 64 lines and 100 tracks it runs 6400 times a frame, so a line the track is settled
 * beside is skipped until the track could have reached it: with the side confirmed and nothing pending, a
 * sighting on the same side of the infinite line (in the band or beyond it) leaves the state as it was, and
 * the anchor, |d| from the line, stays on that side while st.travel grows by less than |d|. The nearest such
 * end over all lines goes to st.linesQuiet: until then the engine skips the call.
 */
export function stepLines(packed: Float64Array, anchorOffset: Int32Array, mask: Uint8Array | null, st: TrackState, out: Int8Array): number {
  const n = anchorOffset.length;
  const cur = st.cur, prev = st.prev, hasPrev = st.hasPrev, h = st.boxHeight;
  const lineD = st.lineD, lineSide = st.lineSide, linePend = st.linePend, lineCrossT = st.lineCrossT;
  const travel = st.travel, quiet = st.lineQuiet;
  let hits = 0, nearest = Infinity;
  for (let i = 0; i < n; i++) {
    out[i] = 0;
    if (mask !== null && mask[i] === 0) continue;
    if (travel < quiet[i]) {
      if (quiet[i] < nearest) nearest = quiet[i];
      continue;
    }
    const b = i * LINE_STRIDE, o = anchorOffset[i];
    const ax = packed[b], ay = packed[b + 1], bx = packed[b + 2], by = packed[b + 3];
    const px = cur[o], py = cur[o + 1];
    const c = (bx - ax) * (py - ay) - (by - ay) * (px - ax);
    const dq = lineD[i];
    lineD[i] = c;
    // dq is NaN for a line added while the track was away: no step to look at.
    if (hasPrev && dq === dq && ((dq > 0) !== (c > 0) || dq === 0)) {
      const t = crossingParam(ax, ay, bx, by, prev[o], prev[o + 1], px, py);
      if (t === t) lineCrossT[i] = t;
    }
    const d = c * packed[b + 4];
    const mb = packed[b + 6] * h;
    const margin = mb > packed[b + 5] ? mb : packed[b + 5];
    const beyond = d >= margin ? 1 : d <= -margin ? -1 : 0;
    const side = lineSide[i];
    if (side === 0) {
      if (beyond !== 0) { lineSide[i] = beyond; linePend[i] = 0; lineCrossT[i] = NaN; }
      nearest = 0;
      continue;
    }
    if (beyond === side) {
      if (linePend[i] !== 0) linePend[i] = 0;
      if (lineCrossT[i] === lineCrossT[i]) lineCrossT[i] = NaN;
      // Quiet until the anchor could reach the line: on this side every step ends here (beyond is side or
      // 0, nothing pending), so skipping them changes nothing. The 1e-6 px absorbs rounding in d.
      const ad = d < 0 ? -d : d;
      if (ad > 1e-6) {
        const q = (quiet[i] = travel + ad - 1e-6);
        if (q < nearest) nearest = q;
      } else nearest = 0;
      continue;
    }
    nearest = 0; // not settled: check at the next sighting
    if (beyond === 0) { linePend[i] = 0; continue; }
    if (++linePend[i] < packed[b + 7]) continue;
    const t = lineCrossT[i];
    lineSide[i] = beyond;
    linePend[i] = 0;
    lineCrossT[i] = NaN;
    if (t >= 0 && t <= 1) { out[i] = beyond; hits++; }
  }
  st.linesQuiet = nearest;
  st.linesCls = st.cls;
  return hits;
}
