// Counting line crossings without counting flicker.
//
// The rule (defaults in rules.schema.ts, FLICKER_DEFAULTS; each overridable per line):
//  - margin: the anchor's signed distance d to the line is compared to a dead band of
//    max(margin_px, min(margin_box x box height, margin_max_px)) pixels (default max(4, min(0.1 h, 12))).
//    Inside the band a track has no new side.
//  - first side: the first side a track is seen on beyond the band; a track first seen inside the band takes
//    the side it was first seen on provisionally (d's sign; on the line itself, none): beyond the band on
//    that side confirms it, min_samples beyond the band on the other side count a crossing. A track born in
//    the band (a person coming out from behind another, a new id after a switch) used to take as its first
//    side the side it reached after crossing, and its crossing was lost.
//  - consecutive samples: the side flips only after min_samples (default 2) consecutive sampled frames
//    beyond the band on the other side; a sample back in the band restarts the run, one back on the old side
//    forgets the attempt.
//  - through the segment: the flip counts only when the anchor's last step across the infinite line (the
//    segment between two consecutive sightings, however far apart) passes between A and B. So a fast object
//    at a low sampling rate still counts: it needs one sighting beyond the band on the old side and
//    min_samples on the new side, not any sighting near the line.
//  - once: a flip counts one crossing; crossing back is a crossing the other way. The state lives with the
//    track id, so an id lost and found again on the same side has not flipped and counts nothing; a new id
//    born where another one was lost a moment before takes over its state (engine.ts, join_samples).
// Why these numbers (test/video/analytics/line-counter.test.ts, eval `counting`, docs/analytics.md,
// "Counting right by default"): detector jitter of a standing person's foot point is a few percent of the
// box height per frame, so a band of 0.1 h absorbs it on far-away people; the 4 px floor covers small
// boxes. For close people (120-250 px tall) 0.1 h is 12-25 px: crossings of tracks born in it were lost and
// the band let nothing through that a smaller one would not, so it stops growing at 12 px, where two
// consecutive samples beyond it are still rare for a standing person. min_samples 2 discards one-frame box
// glitches (an occlusion that cuts a box's bottom for one frame moves its foot point by half a box). The
// price: a track must stay visible for 2 samples past the band after crossing, e.g. 0.2 s at 10 fps
// sampling.
import { crossingParam } from './geometry.js';
import type { CompiledLine } from './rules.js';
import type { TrackState } from './track-state.js';

/** lineSide of a track first seen inside the band, on the side where d > 0 (negated: d < 0); not yet confirmed. */
export const PROVISIONAL = 2;

/** Per line, packed for the per-frame loop: ax, ay, bx, by, 1/|AB|, margin_px, margin_box, min_samples, margin_max_px. */
export const LINE_STRIDE = 9;

export function packLines(lines: readonly CompiledLine[]): { packed: Float64Array; anchorOffset: Int32Array } {
  const packed = new Float64Array(lines.length * LINE_STRIDE);
  lines.forEach((l, i) =>
    packed.set(
      [l.ax, l.ay, l.bx, l.by, l.invLen, l.marginPx, l.marginBox, l.minSamples, l.marginMaxPx],
      i * LINE_STRIDE,
    ),
  );
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
export function stepLines(
  packed: Float64Array,
  anchorOffset: Int32Array,
  mask: Uint8Array | null,
  st: TrackState,
  out: Int8Array,
): number {
  const n = anchorOffset.length;
  const cur = st.cur,
    prev = st.prev,
    hasPrev = st.hasPrev,
    h = st.boxHeight;
  const lineD = st.lineD,
    lineSide = st.lineSide,
    linePend = st.linePend,
    lineCrossT = st.lineCrossT;
  const travel = st.travel,
    quiet = st.lineQuiet;
  let hits = 0,
    nearest = Infinity;
  for (let i = 0; i < n; i++) {
    out[i] = 0;
    if (mask !== null && mask[i] === 0) continue;
    if (travel < quiet[i]) {
      if (quiet[i] < nearest) nearest = quiet[i];
      continue;
    }
    const b = i * LINE_STRIDE,
      o = anchorOffset[i];
    const ax = packed[b],
      ay = packed[b + 1],
      bx = packed[b + 2],
      by = packed[b + 3];
    const px = cur[o],
      py = cur[o + 1];
    const c = (bx - ax) * (py - ay) - (by - ay) * (px - ax);
    const dq = lineD[i];
    lineD[i] = c;
    // dq is NaN for a line added while the track was away: no step to look at.
    if (hasPrev && dq === dq && (dq > 0 !== c > 0 || dq === 0)) {
      const t = crossingParam(ax, ay, bx, by, prev[o], prev[o + 1], px, py);
      if (t === t) lineCrossT[i] = t;
    }
    const d = c * packed[b + 4];
    let mb = packed[b + 6] * h;
    if (mb > packed[b + 8]) mb = packed[b + 8];
    const margin = mb > packed[b + 5] ? mb : packed[b + 5];
    const beyond = d >= margin ? 1 : d <= -margin ? -1 : 0;
    let side = lineSide[i];
    if (side === 0) {
      nearest = 0;
      if (beyond !== 0) {
        lineSide[i] = beyond;
        linePend[i] = 0;
        lineCrossT[i] = NaN;
      }
      // First seen inside the band: the side it is on, provisionally (PROVISIONAL, see the header).
      else if (d !== 0) {
        lineSide[i] = d > 0 ? PROVISIONAL : -PROVISIONAL;
        linePend[i] = 0;
        lineCrossT[i] = NaN;
      }
      continue;
    }
    if (side === PROVISIONAL || side === -PROVISIONAL) {
      side = side > 0 ? 1 : -1;
      if (beyond === side) {
        lineSide[i] = side;
        linePend[i] = 0;
        lineCrossT[i] = NaN;
        nearest = 0;
        continue;
      }
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
    if (beyond === 0) {
      linePend[i] = 0;
      continue;
    }
    if (++linePend[i] < packed[b + 7]) continue;
    const t = lineCrossT[i];
    lineSide[i] = beyond;
    linePend[i] = 0;
    lineCrossT[i] = NaN;
    if (t >= 0 && t <= 1) {
      out[i] = beyond;
      hits++;
    }
  }
  st.linesQuiet = nearest;
  st.linesCls = st.cls;
  return hits;
}
