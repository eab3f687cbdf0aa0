// The analytics engine: per sampled frame, the tracked boxes in; line crossings, zone entries, exits,
// dwell and crowding events and running totals out. Pure and deterministic: the same frames with the same
// rules give the same events and totals, which is what makes a recount from stored tracks exact.
// Rules may change between two frames (setRules): the change applies at the next frame and bumps `version`.
import { anchorOf, compileRules, type CompiledRules } from './rules.js';
import type { AnalyticsParameters } from './rules.schema.js';
import { packLines, stepLines } from './line-counter.js';
import { stepZone } from './zone-tracker.js';
import { stepSpeed } from './speed.js';
import { LineTotals, Transitions, ZoneTotals, type LineSummary, type ZoneSummary } from './totals.js';
import { TrackState } from './track-state.js';
import type { AnalyticsEvent } from './events.js';

/** A track's state is forgotten after this many sampled frames without it (trackers never reuse ids). */
export const FORGET_SAMPLES = 300;

export { EVENT_TYPES, type AnalyticsEvent, type EventType } from './events.js';

export interface AnalyticsTrack {
  track_id: number;
  class: string;
  /** [x1, y1, x2, y2] in source pixels. */
  box: readonly [number, number, number, number];
}

export interface AnalyticsFrame {
  t_ms: number;
  frame_index: number;
  width: number;
  height: number;
  tracks: readonly AnalyticsTrack[];
}

export interface AnalyticsSummary {
  version: number;
  lines: Record<string, LineSummary>;
  zones: Record<string, ZoneSummary>;
  transitions: Record<string, Record<string, number>>;
}

export interface FrameResult {
  events: AnalyticsEvent[];
  /** Smoothed ground speed per track id (only with a speed calibration). */
  speeds: Map<number, number> | null;
}

type EventInit = Omit<AnalyticsEvent, 'id' | 'version' | 't_ms' | 'frame_index'>;

const round1 = (v: number) => Math.round(v * 10) / 10;

/** Which of `rules` count class `cls` (1) or not (0), cached per class; null when every rule counts every class. */
function classMask(
  cache: Map<string, Uint8Array> | null,
  rules: ReadonlyArray<{ classes: ReadonlySet<string> | null }>,
  cls: string,
): Uint8Array | null {
  if (cache === null) return null;
  let m = cache.get(cls);
  if (!m) cache.set(cls, (m = Uint8Array.from(rules, (r) => (r.classes === null || r.classes.has(cls) ? 1 : 0))));
  return m;
}

export class AnalyticsEngine {
  #params: AnalyticsParameters;
  #pending: AnalyticsParameters | null = null;
  #version = 1;
  #activeVersion = 1;
  #rules: CompiledRules | null = null;
  #size = [0, 0];
  #sample = -1;
  #events: AnalyticsEvent[] = [];
  /** Events numbered so far in the current frame (finish() goes on numbering after the last frame's). */
  #seq = 0;
  #frameIndex = 0;
  #t = 0;
  readonly #tracks = new Map<number, TrackState>();
  readonly #lineTotals = new Map<string, LineTotals>();
  readonly #zoneTotals = new Map<string, ZoneTotals>();
  readonly #transitions = new Transitions();
  #lineRefs: LineTotals[] = [];
  #packed: ReturnType<typeof packLines> = packLines([]);
  #lineOut = new Int8Array(0);
  /** Per class name: which lines count it (null: all lines count every class). */
  #lineMasks: Map<string, Uint8Array> | null = null;
  #zoneRefs: ZoneTotals[] = [];
  /** Per class name: which zones count it (null: all zones count every class). */
  #zoneMasks: Map<string, Uint8Array> | null = null;

  readonly #idPrefix: string;
  readonly #exhaustive: boolean;

  /**
   * `params` must have passed parseAnalytics (rules.ts). Event ids are `<idPrefix><frame_index>_<n>`.
   * `exhaustive` checks every rule for every sighting instead of skipping rules a track is settled far from
   * (the quiet spans of line-counter.ts and zone-tracker.ts): same events, slower; the tests' reference.
   */
  constructor(params: AnalyticsParameters, opts: { idPrefix?: string; exhaustive?: boolean } = {}) {
    this.#params = params;
    this.#idPrefix = opts.idPrefix ?? 'ae_';
    this.#exhaustive = opts.exhaustive ?? false;
  }

  get version(): number {
    return this.#version;
  }
  get parameters(): AnalyticsParameters {
    return this.#pending ?? this.#params;
  }

  /** New rules from the next frame on; returns the new version (`version`: set it, e.g. from the task record). */
  setRules(params: AnalyticsParameters, version = this.#version + 1): number {
    this.#pending = params;
    return (this.#version = version);
  }

  #compile(width: number, height: number): CompiledRules {
    const next = compileRules(this.#params, width, height);
    const before = this.#rules;
    if (before) for (const st of this.#tracks.values()) st.remap(before, next);
    for (const t of this.#lineTotals.values()) t.active = false;
    for (const t of this.#zoneTotals.values()) t.active = false;
    this.#lineRefs = next.lines.map((l) => {
      let t = this.#lineTotals.get(l.id);
      if (!t) this.#lineTotals.set(l.id, (t = new LineTotals()));
      t.active = true;
      return t;
    });
    this.#zoneRefs = next.zones.map((z, i) => {
      let t = this.#zoneTotals.get(z.id);
      if (!t) this.#zoneTotals.set(z.id, (t = new ZoneTotals()));
      t.active = true;
      // Tracks whose state did not survive the change are outside again.
      let occ = 0;
      for (const st of this.#tracks.values()) occ += st.zoneIn[i];
      t.occupancy = occ;
      return t;
    });
    this.#zoneMasks = next.zones.some((z) => z.classes) ? new Map() : null;
    this.#packed = packLines(next.lines);
    this.#lineOut = new Int8Array(next.lines.length);
    this.#lineMasks = next.lines.some((l) => l.classes) ? new Map() : null;
    this.#rules = next;
    this.#size = [width, height];
    return next;
  }

  #maskFor(cls: string, rules: CompiledRules): Uint8Array | null {
    return classMask(this.#lineMasks, rules.lines, cls);
  }

  #zoneMaskFor(cls: string, rules: CompiledRules): Uint8Array | null {
    return classMask(this.#zoneMasks, rules.zones, cls);
  }

  #emit(e: EventInit): void {
    this.#events.push({
      id: `${this.#idPrefix}${this.#frameIndex}_${this.#seq++}`,
      ...e,
      version: this.#activeVersion,
      t_ms: this.#t,
      frame_index: this.#frameIndex,
    } as AnalyticsEvent);
  }

  /** One sampled frame's tracks (call in stream order, also for frames without tracks). */
  process(frame: AnalyticsFrame): FrameResult {
    if (this.#pending) {
      this.#params = this.#pending;
      this.#pending = null;
      this.#activeVersion = this.#version;
      this.#rules = this.#compile(frame.width, frame.height);
    }
    let rules = this.#rules;
    if (
      !rules ||
      (this.#params.units === 'relative' && (this.#size[0] !== frame.width || this.#size[1] !== frame.height))
    ) {
      rules = this.#compile(frame.width, frame.height);
    }
    this.#events = [];
    this.#seq = 0;
    this.#frameIndex = frame.frame_index;
    this.#t = frame.t_ms;
    const sample = ++this.#sample;
    const interval = rules.intervalMs;
    const { lines, zones, anchors, speed } = rules;
    const speeds = speed ? new Map<number, number>() : null;
    let here: Set<number> | null = null;
    for (const trk of frame.tracks) {
      let st = this.#tracks.get(trk.track_id);
      if (!st) {
        this.#tracks.set(trk.track_id, (st = new TrackState(trk.track_id, rules)));
        if (rules.joinSamples > 0 && lines.length > 0)
          this.#join(st, trk, sample, (here ??= new Set(frame.tracks.map((t) => t.track_id))));
      }
      if (st.seenAt === sample) continue; // a duplicate id in one frame: the first box wins
      st.hasPrev = st.seenAt >= 0;
      const swap = st.prev;
      st.prev = st.cur;
      st.cur = swap;
      const [x1, y1, x2, y2] = trk.box;
      st.move(x1, y1, x2, y2);
      if (this.#exhaustive) st.travel = Infinity; // never below a quiet span's end
      for (let k = 0; k < anchors.length; k++) anchorOf(anchors[k], x1, y1, x2, y2, st.cur, anchors[k] * 2);
      st.boxHeight = y2 - y1;
      st.cls = trk.class;
      st.seenAt = sample;
      st.lastT = frame.t_ms;
      if (speed) {
        stepSpeed(speed.h, speed.windowMs, st, frame.t_ms, st.cur[0], st.cur[1]);
        if (!Number.isNaN(st.speedKmh)) speeds!.set(trk.track_id, round1(st.speedKmh));
      }
      if (
        lines.length > 0 &&
        !(st.travel < st.linesQuiet && st.linesCls === st.cls) &&
        stepLines(this.#packed.packed, this.#packed.anchorOffset, this.#maskFor(st.cls, rules), st, this.#lineOut) > 0
      ) {
        for (let i = 0; i < lines.length; i++) {
          const r = this.#lineOut[i];
          if (r === 0) continue;
          this.#lineRefs[i].add(r as 1 | -1, st.cls, frame.t_ms, interval, st.speedKmh);
          const e: EventInit = {
            type: 'line.crossed',
            rule: lines[i].id,
            track_id: st.id,
            class: st.cls,
            direction: r === 1 ? 'in' : 'out',
          };
          if (speed && !Number.isNaN(st.speedKmh)) e.speed_kmh = round1(st.speedKmh);
          this.#emit(e);
        }
      }
      // Every zone settled (the nearest quiet span not reached, no dwell due, same class): nothing can happen.
      if (zones.length > 0 && !(st.travel < st.zonesQuiet && frame.t_ms <= st.zonesDwellDue && st.zonesCls === st.cls))
        this.#stepZones(st, rules);
    }
    // Tracks not seen in this frame: gone from their zones after lost_samples, forgotten later.
    for (const st of this.#tracks.values()) {
      const missing = sample - st.seenAt;
      if (missing === 0) continue;
      if (missing === rules.lostSamples) this.#leaveAll(st, rules);
      else if (missing >= FORGET_SAMPLES) this.#tracks.delete(st.id);
    }
    for (let i = 0; i < zones.length; i++) {
      const zone = zones[i];
      if (zone.maxOccupancy === null) continue;
      const t = this.#zoneRefs[i];
      if (t.occupancy > zone.maxOccupancy) {
        t.crowdSince ??= frame.t_ms;
        if (!t.crowdSent && frame.t_ms - t.crowdSince >= zone.crowdMs) {
          t.crowdSent = true;
          this.#emit({ type: 'zone.crowded', rule: zone.id, track_id: null, class: null, occupancy: t.occupancy });
        }
      } else {
        t.crowdSince = null;
        t.crowdSent = false;
      }
    }
    return { events: this.#events, speeds };
  }

  /**
   * A new track id first seen within half a box height (the larger of the two) of where a track of its class
   * not in this frame was last seen, at most join_samples sampled frames before, continues that track's line
   * state: its sides, where it stepped across each line and its last position, so the step between the two
   * sightings is checked like any other.
   * Trackers switch ids when people cross or hide each other, and a person behind someone on a line came out
   * as a new id that took its first side after crossing (or counted a crossing the old id had already made).
   * The nearest such track is taken, once. Zones keep their own state (a new id enters): joining zone
   * visits measured no better.
   */
  #join(st: TrackState, trk: AnalyticsTrack, sample: number, here: ReadonlySet<number>): void {
    const [x1, y1, x2, y2] = trk.box;
    const cx = (x1 + x2) / 2,
      h = y2 - y1,
      within = this.#rules!.joinSamples;
    let best: TrackState | null = null,
      bestD = Infinity;
    for (const o of this.#tracks.values()) {
      if (o === st || o.joined || o.seenAt < 0 || sample - o.seenAt > within || o.cls !== trk.class || here.has(o.id))
        continue;
      const b = o.box;
      const d = Math.hypot((b[0] + b[2]) / 2 - cx, b[3] - y2);
      if (d <= 0.5 * Math.max(h, b[3] - b[1]) && d < bestD) {
        best = o;
        bestD = d;
      }
    }
    if (best) st.continueLines(best);
  }

  /** One sighting against every zone; notes when the track can next change anything (see process). */
  #stepZones(st: TrackState, rules: CompiledRules): void {
    const zones = rules.zones,
      t = this.#t;
    const zoneMask = this.#zoneMaskFor(st.cls, rules),
      zoneIn = st.zoneIn,
      zoneQuiet = st.zoneQuiet,
      travel = st.travel;
    let quiet = Infinity,
      due = Infinity;
    for (let i = 0; i < zones.length; i++) {
      if (zoneMask !== null && zoneMask[i] === 0) continue;
      // Settled on its side (stepZone's quiet span): outside nothing can happen, inside only dwell.
      const settled = travel < zoneQuiet[i];
      if (settled && zoneIn[i] === 0) {
        if (zoneQuiet[i] < quiet) quiet = zoneQuiet[i];
        continue;
      }
      const zone = zones[i];
      const r = settled ? 0 : stepZone(zone, st, i);
      if (r === 1) this.#enter(st, i, rules);
      else if (r === -1) this.#exit(st, i, rules);
      else if (zone.dwellMs !== null && zoneIn[i] && !st.zoneDwell[i] && t - st.zoneEnterT[i] > zone.dwellMs) {
        st.zoneDwell[i] = 1;
        this.#emit({
          type: 'zone.dwell',
          rule: zone.id,
          track_id: st.id,
          class: st.cls,
          dwell_ms: t - st.zoneEnterT[i],
        });
      }
      if (zoneQuiet[i] < quiet) quiet = zoneQuiet[i];
      if (zone.dwellMs !== null && zoneIn[i] && !st.zoneDwell[i] && st.zoneEnterT[i] + zone.dwellMs < due)
        due = st.zoneEnterT[i] + zone.dwellMs;
    }
    st.zonesQuiet = quiet;
    st.zonesDwellDue = due;
    st.zonesCls = st.cls;
  }

  /** Closes every open zone visit (end of the task); returns their zone.exited events, dated the last frame. */
  finish(): AnalyticsEvent[] {
    this.#events = [];
    const rules = this.#rules;
    if (rules) for (const st of this.#tracks.values()) this.#leaveAll(st, rules);
    return this.#events;
  }

  #enter(st: TrackState, i: number, rules: CompiledRules): void {
    const zone = rules.zones[i];
    st.zoneEnterT[i] = this.#t;
    st.zoneDwell[i] = 0;
    this.#zoneRefs[i].enter(st.cls, this.#t, rules.intervalMs);
    if (st.lastZone !== null && st.lastZone !== zone.id) this.#transitions.add(st.lastZone, zone.id);
    st.lastZone = zone.id;
    this.#emit({ type: 'zone.entered', rule: zone.id, track_id: st.id, class: st.cls });
  }

  #exit(st: TrackState, i: number, rules: CompiledRules, at = this.#t): void {
    const dwell = Math.max(0, at - st.zoneEnterT[i]);
    this.#zoneRefs[i].exit(st.cls, this.#t, rules.intervalMs, dwell);
    this.#emit({ type: 'zone.exited', rule: rules.zones[i].id, track_id: st.id, class: st.cls, dwell_ms: dwell });
  }

  /** A lost track leaves every zone it is in; its time inside ends at its last sighting. */
  #leaveAll(st: TrackState, rules: CompiledRules): void {
    // Outside now whatever its position: a quiet span measured from inside no longer holds.
    st.zoneQuiet.fill(0);
    st.zonesQuiet = 0;
    for (let i = 0; i < st.zoneIn.length; i++) {
      if (!st.zoneIn[i]) continue;
      st.zoneIn[i] = 0;
      st.zonePend[i] = 0;
      this.#exit(st, i, rules, st.lastT);
    }
  }

  /** The counts alone (every chunk carries them): no buckets or statistics to build. */
  counts(): {
    version: number;
    lines: Record<string, { in: number; out: number }>;
    zones: Record<string, { occupancy: number; entered: number; exited: number }>;
  } {
    return {
      version: this.#version,
      lines: Object.fromEntries([...this.#lineTotals].map(([id, t]) => [id, { in: t.in, out: t.out }])),
      zones: Object.fromEntries(
        [...this.#zoneTotals].map(([id, t]) => [id, { occupancy: t.occupancy, entered: t.entered, exited: t.exited }]),
      ),
    };
  }

  /** Totals so far, removed rules included (active: false). */
  summary(): AnalyticsSummary {
    const withSpeed = this.#params.speed !== undefined;
    return {
      version: this.#version,
      lines: Object.fromEntries([...this.#lineTotals].map(([id, t]) => [id, t.summary(withSpeed)])),
      zones: Object.fromEntries([...this.#zoneTotals].map(([id, t]) => [id, t.summary()])),
      transitions: this.#transitions.summary(),
    };
  }
}
