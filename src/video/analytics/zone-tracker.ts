// Inside/outside of a zone per track with the same anti-flicker rule as lines (line-counter.ts): the state
// flips after min_samples consecutive sightings on the other side of the polygon's edge, each at least the
// margin away from it. A track starts outside, so one that appears inside enters after min_samples sightings.
import { distanceToBoundary, pointInPolygon } from './geometry.js';
import type { CompiledZone } from './rules.js';
import type { TrackState } from './track-state.js';

/**
 * +1 entered, -1 exited, 0 nothing. Call once per sighting of the track (of a class the zone counts). When
 * the anchor is on its confirmed side, it stays there until the track has travelled its distance to the
 * boundary (or, outside, to the bounding box): st.zoneQuiet[i] says until when the engine may skip the call.
 */
export function stepZone(zone: CompiledZone, st: TrackState, i: number): number {
  const o = zone.anchor * 2;
  const px = st.cur[o],
    py = st.cur[o + 1];
  const inside = st.zoneIn[i] === 1;
  const outX = px < zone.minX ? zone.minX - px : px > zone.maxX ? px - zone.maxX : 0;
  const outY = py < zone.minY ? zone.minY - py : py > zone.maxY ? py - zone.maxY : 0;
  const raw = outX === 0 && outY === 0 && pointInPolygon(zone.flat, px, py);
  if (raw === inside) {
    st.zonePend[i] = 0;
    // Rounding: see line-counter.ts.
    const room =
      (outX > 0 || outY > 0 ? Math.sqrt(outX * outX + outY * outY) : distanceToBoundary(zone.flat, px, py)) - 1e-6;
    if (room > 0) st.zoneQuiet[i] = st.travel + room;
    return 0;
  }
  const mb = zone.marginBox * st.boxHeight;
  const margin = mb > zone.marginPx ? mb : zone.marginPx;
  if (margin > 0 && distanceToBoundary(zone.flat, px, py) < margin) {
    st.zonePend[i] = 0;
    return 0;
  }
  if (++st.zonePend[i] < zone.minSamples) return 0;
  st.zonePend[i] = 0;
  st.zoneIn[i] = raw ? 1 : 0;
  return raw ? 1 : -1;
}
