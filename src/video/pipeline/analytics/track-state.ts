// What the engine remembers per track id: the anchors of its last two sightings and, per rule, the
// anti-flicker state of lines and zones. Arrays are sized to the rules in force and rebuilt on a rule
// change (rules whose geometry did not change keep their state: a PUT does not re-count a track).
import type { CompiledRules } from './rules.js';

export const ANCHOR_KINDS = 7;

export class TrackState {
  cls = '';
  /** Sample counter (the engine's, one per processed frame) of the last sighting. */
  seenAt = -1;
  lastT = 0;
  boxHeight = 0;
  hasPrev = false;
  /** x, y of each anchor kind at the last sighting, and at the one before. */
  cur = new Float64Array(ANCHOR_KINDS * 2);
  prev = new Float64Array(ANCHOR_KINDS * 2);
  // Lines: confirmed side (-1, 0 unknown, +1), consecutive samples beyond the margin on the other side,
  // and where (parameter along AB) the anchor last crossed the infinite line since the side was confirmed.
  lineSide: Int8Array;
  linePend: Uint8Array;
  lineCrossT: Float64Array;
  /** (B-A)x(P-A) at the last sighting, so a step needs one cross product, not two. */
  lineD: Float64Array;
  // Zones: confirmed inside, consecutive samples beyond the margin on the other side, entry time, dwell sent.
  zoneIn: Uint8Array;
  zonePend: Uint8Array;
  zoneEnterT: Float64Array;
  zoneDwell: Uint8Array;
  lastZone: string | null = null;
  // Speed: ground positions (metres) and times of recent sightings, and the smoothed speed.
  ground: Array<{ t: number; x: number; y: number }> = [];
  speedKmh = NaN;

  constructor(readonly id: number, rules: CompiledRules) {
    this.lineSide = new Int8Array(rules.lines.length);
    this.linePend = new Uint8Array(rules.lines.length);
    this.lineCrossT = new Float64Array(rules.lines.length).fill(NaN);
    this.lineD = new Float64Array(rules.lines.length);
    this.zoneIn = new Uint8Array(rules.zones.length);
    this.zonePend = new Uint8Array(rules.zones.length);
    this.zoneEnterT = new Float64Array(rules.zones.length);
    this.zoneDwell = new Uint8Array(rules.zones.length);
  }

  /** Re-sizes the per-rule arrays for new rules, keeping the state of rules whose key is unchanged. */
  remap(from: CompiledRules, to: CompiledRules): void {
    const lineIdx = new Map(from.lines.map((l, i) => [l.key + l.id, i]));
    const n = to.lines.length;
    const side = new Int8Array(n), pend = new Uint8Array(n), crossT = new Float64Array(n).fill(NaN), lineD = new Float64Array(n);
    to.lines.forEach((l, i) => {
      const j = lineIdx.get(l.key + l.id);
      if (j !== undefined) { side[i] = this.lineSide[j]; pend[i] = this.linePend[j]; crossT[i] = this.lineCrossT[j]; lineD[i] = this.lineD[j]; }
      // A new line has no previous distance: the next sighting only sets its side.
      else if (this.hasPrev) lineD[i] = NaN;
    });
    this.lineSide = side; this.linePend = pend; this.lineCrossT = crossT; this.lineD = lineD;
    const zoneIdx = new Map(from.zones.map((z, i) => [z.key + z.id, i]));
    const m = to.zones.length;
    const inside = new Uint8Array(m), zpend = new Uint8Array(m), enter = new Float64Array(m), dwell = new Uint8Array(m);
    to.zones.forEach((z, i) => {
      const j = zoneIdx.get(z.key + z.id);
      if (j !== undefined) { inside[i] = this.zoneIn[j]; zpend[i] = this.zonePend[j]; enter[i] = this.zoneEnterT[j]; dwell[i] = this.zoneDwell[j]; }
    });
    this.zoneIn = inside; this.zonePend = zpend; this.zoneEnterT = enter; this.zoneDwell = dwell;
  }
}
