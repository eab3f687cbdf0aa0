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
  /** Another track id continued this one's line state (continueLines): it is not continued again. */
  joined = false;
  /** The last sighting's box, and how far (an upper bound, in pixels) any anchor has moved over the track's
   * life: the sum over sightings of max |dx| + max |dy| of the box edges. An anchor's distance to a line or
   * a polygon edge changes by no more than that, which is what lets the engine skip rules a track is far
   * from (lineQuiet, zoneQuiet). */
  box = new Float64Array(4);
  travel = 0;
  /** Per rule: `travel` below which the rule's outcome cannot change (0: check at the next sighting). */
  lineQuiet: Float64Array;
  zoneQuiet: Float64Array;
  /** The smallest of lineQuiet (zoneQuiet) over the rules that count the class `linesCls` (`zonesCls`): the
   * engine skips all lines (zones) below it; and the earliest time a zone's dwell event can be due. */
  linesQuiet = 0;
  linesCls = '';
  zonesQuiet = 0;
  zonesCls = '';
  zonesDwellDue = Infinity;
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

  constructor(
    readonly id: number,
    rules: CompiledRules,
  ) {
    this.lineSide = new Int8Array(rules.lines.length);
    this.linePend = new Uint8Array(rules.lines.length);
    this.lineCrossT = new Float64Array(rules.lines.length).fill(NaN);
    this.lineD = new Float64Array(rules.lines.length);
    this.lineQuiet = new Float64Array(rules.lines.length);
    this.zoneQuiet = new Float64Array(rules.zones.length);
    this.zoneIn = new Uint8Array(rules.zones.length);
    this.zonePend = new Uint8Array(rules.zones.length);
    this.zoneEnterT = new Float64Array(rules.zones.length);
    this.zoneDwell = new Uint8Array(rules.zones.length);
  }

  /** Takes over `from`'s line state as if its last sighting were this track's (engine.ts, #join); once per track. */
  continueLines(from: TrackState): void {
    from.joined = true;
    this.lineSide.set(from.lineSide);
    this.lineCrossT.set(from.lineCrossT);
    this.lineD.set(from.lineD);
    this.cur.set(from.cur);
    this.box.set(from.box);
    this.seenAt = from.seenAt;
  }

  /** Takes a sighting's box: adds the bound on how far any anchor moved since the last one to `travel`. */
  move(x1: number, y1: number, x2: number, y2: number): void {
    const b = this.box;
    if (this.seenAt >= 0) {
      const dx1 = Math.abs(x1 - b[0]),
        dx2 = Math.abs(x2 - b[2]),
        dy1 = Math.abs(y1 - b[1]),
        dy2 = Math.abs(y2 - b[3]);
      // NaN (never expected: boxes are checked) would make every later comparison false: check always.
      const m = (dx1 > dx2 ? dx1 : dx2) + (dy1 > dy2 ? dy1 : dy2);
      this.travel = m === m ? this.travel + m : Infinity;
    }
    b[0] = x1;
    b[1] = y1;
    b[2] = x2;
    b[3] = y2;
  }

  /** Re-sizes the per-rule arrays for new rules, keeping the state of rules whose key is unchanged. */
  remap(from: CompiledRules, to: CompiledRules): void {
    const lineIdx = new Map(from.lines.map((l, i) => [l.key + l.id, i]));
    const n = to.lines.length;
    const side = new Int8Array(n),
      pend = new Uint8Array(n),
      crossT = new Float64Array(n).fill(NaN),
      lineD = new Float64Array(n);
    to.lines.forEach((l, i) => {
      const j = lineIdx.get(l.key + l.id);
      if (j !== undefined) {
        side[i] = this.lineSide[j];
        pend[i] = this.linePend[j];
        crossT[i] = this.lineCrossT[j];
        lineD[i] = this.lineD[j];
      }
      // A new line has no previous distance: the next sighting only sets its side.
      else if (this.hasPrev) lineD[i] = NaN;
    });
    this.lineSide = side;
    this.linePend = pend;
    this.lineCrossT = crossT;
    this.lineD = lineD;
    // Every rule is checked at the next sighting; quiet spans start again from there.
    this.lineQuiet = new Float64Array(n);
    this.zoneQuiet = new Float64Array(to.zones.length);
    this.linesQuiet = 0;
    this.zonesQuiet = 0;
    const zoneIdx = new Map(from.zones.map((z, i) => [z.key + z.id, i]));
    const m = to.zones.length;
    const inside = new Uint8Array(m),
      zpend = new Uint8Array(m),
      enter = new Float64Array(m),
      dwell = new Uint8Array(m);
    to.zones.forEach((z, i) => {
      const j = zoneIdx.get(z.key + z.id);
      if (j !== undefined) {
        inside[i] = this.zoneIn[j];
        zpend[i] = this.zonePend[j];
        enter[i] = this.zoneEnterT[j];
        dwell[i] = this.zoneDwell[j];
      }
    });
    this.zoneIn = inside;
    this.zonePend = zpend;
    this.zoneEnterT = enter;
    this.zoneDwell = dwell;
  }
}
