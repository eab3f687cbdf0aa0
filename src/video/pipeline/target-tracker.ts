// Track ids for the targets a producing step (detect, frame-level ocr) finds: one native tracker per such
// step per task, updated exactly once per processed frame (also with no candidates: that ages tracks).
//
// Thresholds, chosen with `npm run eval -- video-track` (the figures: docs/video.md, "Tracker thresholds"):
//  - The tracker is fed candidates down to an internal threshold below the requested one
//    (min(t, max(0.3, t - 0.2))): a person whose score dips under t for a few frames keeps matching its
//    track instead of ending it and starting a new id when the score climbs back. Only candidates at or above
//    the requested threshold are reported (it raised IDF1 at equal MOTA).
//  - type "bytetrack" adds ByteTrack's second association: candidates in [0.1, internal) may continue a
//    track matched in the previous frame. The native tracker (report 'all') would start a track for every
//    one of them left unmatched, so only those that look like the continuation of a track no high-score
//    candidate takes are passed in (#continues). It measured no clear win over "sort", which stays the default.
//  - min_hits: a track's targets are reported once it has matched that many frames in a row (SORT's rule;
//    during the first min_hits frames of a task every track counts). Ids are fixed when a track starts
//    (report 'all'), so a target keeps the id it got in its first frame; 0 and 1 report at once.
//  - crowds (CROWD below): candidates that carry a colour signature are matched on appearance too, and what
//    is left unmatched gets a buffered pass, so where people cross or hide each other their ids stay with
//    them (docs/video.md, "Tracking in crowds").
//
// snapshot()/restore() (TargetTracker and TrackIds) carry the state to another worker that continues a file
// task from its checkpoint (docs/video.md, "When a worker dies"): JSON, with the binary state (the native
// tracker's snapshot and the boxes of the last frame) deflated and in base64.
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { errors } from '../../base/errors.js';
import type { VideoTaskRequest } from '../task-contract.js';
import { Tracker } from '../../native/track.js';
import { SIGNATURE_DIM } from '../../media/colour-signature.js';

export interface TrackerSettings {
  type: 'sort' | 'bytetrack';
  maxAge: number;
  minHits: number;
  iouThreshold: number;
}

/**
 * Crowds (both tracker types): appearance from each candidate's colour signature (src/media/colour-signature.ts)
 * weighs 0.8 against IoU among the pairs IoU admits, and a buffered pass matches what is left on boxes grown by
 * their own size on each side, for tracks seen within 10 frame intervals. A track that missed its previous frame
 * only takes a candidate at least 0.35 alike (reacquire): where one person walks out of view as another walks in
 * at the same spot, the lost track would otherwise carry the first person's id over to the second. A minimum
 * for every pair cost more than it saved; 0.35 is the middle of the range where no sequence lost IDF1.
 * Measured with CenterNet and a YOLOv8n export over the tracking sequences and close-range crops
 * (docs/video.md, "Tracking in crowds").
 */
export const CROWD = {
  appearance: { dim: SIGNATURE_DIM, weight: 0.8, reacquire: 0.35 },
  buffered: { buffer: 1, maxLost: 10 },
} as const;
export const TRACKER_DEFAULTS: TrackerSettings = { type: 'sort', maxAge: 30, minHits: 3, iouThreshold: 0.3 };

/** ByteTrack's floor for second-pass candidates, and the overlap that admits one (see above). */
export const BYTE_LOW = 0.1;
const BYTE_GATE_IOU = 0.3;

export function trackerSettings(t: VideoTaskRequest['tracker']): TrackerSettings {
  const s = { ...TRACKER_DEFAULTS };
  if (t === undefined || t === null) return s;
  if (t.type !== undefined) {
    if (t.type !== 'sort' && t.type !== 'bytetrack')
      throw errors.invalidParam(
        'tracker.type',
        `Expected "sort" or "bytetrack" for tracker.type but received ${JSON.stringify(t.type)}`,
      );
    s.type = t.type;
  }
  const int = (name: string, v: unknown, min: number, max: number) => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max)
      throw errors.invalidParam(
        name,
        `Expected an integer between ${min} and ${max} for ${name} but received ${String(v)}`,
      );
    return v;
  };
  if (t.max_age !== undefined) s.maxAge = int('tracker.max_age', t.max_age, 1, 10_000);
  if (t.min_hits !== undefined) s.minHits = Math.max(1, int('tracker.min_hits', t.min_hits, 0, 1000));
  if (t.iou_threshold !== undefined) {
    const v = t.iou_threshold;
    if (typeof v !== 'number' || !(v > 0 && v <= 1))
      throw errors.invalidParam(
        'tracker.iou_threshold',
        `Expected a number in (0, 1] for tracker.iou_threshold but received ${String(v)}`,
      );
    s.iouThreshold = v;
  }
  return s;
}

/** The internal association threshold for a requested reporting threshold (see the header). */
export function feedThreshold(requested: number): number {
  return Math.min(requested, Math.max(0.3, requested - 0.2));
}

/** The lowest score a producing step must hand in for its tracker. */
export function candidateFloor(settings: TrackerSettings, requested: number): number {
  return settings.type === 'bytetrack' ? Math.min(BYTE_LOW, feedThreshold(requested)) : feedThreshold(requested);
}

export interface Candidate {
  box: readonly [number, number, number, number];
  score: number;
  cls: string;
  /** colourSignature() of the box, when the tracker uses appearance. */
  signature?: Float32Array;
}

/**
 * TrackIds' state: `keys`, the `step:local` keys that can still be looked up, in id order, and `ids`, their
 * task-wide ids (ascending); `next` is the id the next new key gets. Arrays, not an object keyed by the keys:
 * the checkpoint is stored as jsonb, which does not keep an object's key order. Version 1 (no `v`) held every
 * key the task ever reported, in id order (ids 1, 2, 3... in that order): it is still read.
 */
export interface TrackIdsSnapshot {
  v: 2;
  next: number;
  keys: string[];
  ids: number[];
}

/** What a step's tracker says is still alive: its live tracks' local ids (Tracker.liveIds()). */
export type LiveLocals = () => Iterable<number>;

const KEY = /^\d+:\d+$/;
/** The fewest keys a sweep waits for: below it a sweep would cost more than the keys it frees. */
const SWEEP_MIN = 1024;

/**
 * Task-wide ids: every producing step has its own tracker, ids stay unique across them. A key is only looked
 * up while its native track lives (the tracker reports live tracks only, and never reuses a local id), so
 * a step's tracker registers what is alive (watch()) and the keys of dead tracks are forgotten (at each
 * snapshot(), and whenever the map has doubled): the state stays as large as the live tracks instead of every
 * track a long task ever had.
 */
export class TrackIds {
  #next = 1;
  readonly #ids = new Map<string, number>();
  readonly #live = new Map<number, LiveLocals>();
  /** The map is swept of dead keys when it outgrows this: a live task, never snapshotted, stays small too. */
  #sweepAt = SWEEP_MIN;

  global(step: number, local: number): number {
    const k = `${step}:${local}`;
    let id = this.#ids.get(k);
    if (id === undefined) {
      this.#ids.set(k, (id = this.#next++));
      if (this.#ids.size > this.#sweepAt) this.#sweep();
    }
    return id;
  }

  /**
   * `live` answers for `step`'s tracker from now on (a later call for the same step replaces it). Keys of a
   * step nobody answers for are all kept.
   */
  watch(step: number, live: LiveLocals): void {
    this.#live.set(step, live);
  }

  /** Keys held: those of live tracks, and of tracks gone since the last sweep. */
  get size(): number {
    return this.#ids.size;
  }

  /** JSON-serialisable state (typed unknown so a subclass can add its own around it), taken after a sweep. */
  snapshot(): unknown {
    this.#sweep();
    return {
      v: 2,
      next: this.#next,
      keys: [...this.#ids.keys()],
      ids: [...this.#ids.values()],
    } satisfies TrackIdsSnapshot;
  }

  /**
   * Forgets the keys of tracks that are gone; doubling the threshold after each sweep keeps the cost a
   * constant a key.
   */
  #sweep(): void {
    if (this.#live.size > 0) {
      const alive = new Map<number, Set<number>>();
      for (const [step, live] of this.#live) alive.set(step, new Set(live()));
      for (const k of this.#ids.keys()) {
        const colon = k.indexOf(':');
        const live = alive.get(Number(k.slice(0, colon)));
        if (live && !live.has(Number(k.slice(colon + 1)))) this.#ids.delete(k);
      }
    }
    this.#sweepAt = Math.max(SWEEP_MIN, 2 * this.#ids.size);
  }

  /** Puts a snapshot() (either version) back into fresh ids; throws, leaving the ids as they were, when `s` is not one. */
  restore(s: unknown): void {
    const entries = TrackIds.#entries(s);
    if (!entries) throw new Error('The checkpoint holds track ids that are not a TrackIds snapshot');
    this.#ids.clear();
    for (const [k, id] of entries.ids) this.#ids.set(k, id);
    this.#next = entries.next;
    this.#sweepAt = Math.max(SWEEP_MIN, 2 * this.#ids.size);
  }

  /** A snapshot's keys and ids in id order, or null when it is not a valid one of either version. */
  static #entries(s: unknown): { next: number; ids: Array<[string, number]> } | null {
    const v = s as { v?: unknown; next?: unknown; keys?: unknown; ids?: unknown } | null;
    if (!v || typeof v !== 'object' || typeof v.next !== 'number' || !Number.isInteger(v.next) || v.next < 1)
      return null;
    let ids: Array<[string, number]>;
    if (v.v === undefined) {
      // Version 1: every key, the n-th with id n.
      if (!Array.isArray(v.keys) || v.next !== v.keys.length + 1) return null;
      ids = v.keys.map((k, i): [string, number] => [k as string, i + 1]);
    } else if (v.v === 2 && Array.isArray(v.keys) && Array.isArray(v.ids) && v.keys.length === v.ids.length) {
      const values = v.ids as unknown[];
      ids = v.keys.map((k, i): [string, number] => [k as string, values[i] as number]);
    } else return null;
    let last = 0;
    for (const [k, id] of ids) {
      // Ids strictly ascending and below next: no id is given twice, and none again after a restore.
      if (typeof k !== 'string' || !KEY.test(k) || !Number.isInteger(id) || id <= last || id >= v.next) return null;
      last = id;
    }
    return new Set(ids.map(([k]) => k)).size === ids.length ? { next: v.next, ids } : null;
  }
}

/**
 * TargetTracker's state, JSON as it is. `state`: in base64, deflated, the boxes tracked in the last frame
 * (u32 LE count, then x1 y1 x2 y2 as f64 LE each: exact, and shorter than the same numbers in JSON; none for
 * type "sort", which never reads them)
 * followed by the Tracker's snapshot. `interval` is null where no gap has been seen yet (Infinity is no JSON);
 * `step` and `threshold` keep a snapshot out of another step's tracker (the native bytes refuse other
 * tracker options themselves).
 */
export interface TrackerSnapshot {
  v: 1;
  step: number;
  threshold: number;
  lastIndex: number | null;
  interval: number | null;
  state: string;
}

/** Above any real tracker's snapshot: inflating a corrupt one stops here instead of filling memory. */
const MAX_SNAPSHOT_BYTES = 64 << 20;

function iou(a: readonly number[], b: readonly number[]): number {
  const iw = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const ih = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (iw <= 0 || ih <= 0) return 0;
  const inter = iw * ih;
  return inter / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter);
}

export class TargetTracker {
  readonly #tracker: Tracker;
  readonly #feed: number;
  #previous: Array<readonly number[]> = [];
  #lastIndex: number | null = null;
  /** The smallest gap between two frames seen so far: the sampling interval, in source frames. */
  #interval = Infinity;

  constructor(
    private readonly settings: TrackerSettings,
    private readonly step: number,
    private readonly ids: TrackIds,
    private readonly threshold: number,
  ) {
    this.#feed = feedThreshold(threshold);
    this.#tracker = new Tracker({
      maxAge: settings.maxAge,
      minHits: settings.minHits,
      iouThreshold: settings.iouThreshold,
      report: 'all',
      byteTrack:
        settings.type === 'bytetrack' ? { highThresh: this.#feed, lowThresh: Math.min(BYTE_LOW, this.#feed) } : false,
      buffered: CROWD.buffered,
      appearance: CROWD.appearance,
    });
    ids.watch(step, () => this.#tracker.liveIds());
  }

  /** The state after the last assign(), to restore() into a TargetTracker made with the same arguments. */
  snapshot(): TrackerSnapshot {
    const native = this.#tracker.snapshot();
    // Only the ByteTrack gate reads the previous boxes (#continues): a "sort" tracker leaves them out.
    const n = this.settings.type === 'bytetrack' ? this.#previous.length : 0;
    const bytes = Buffer.alloc(4 + 32 * n + native.length);
    bytes.writeUInt32LE(n, 0);
    for (let i = 0; i < n; i++)
      for (let k = 0; k < 4; k++) bytes.writeDoubleLE(this.#previous[i][k], 4 + 32 * i + 8 * k);
    bytes.set(native, 4 + 32 * n);
    return {
      v: 1,
      step: this.step,
      threshold: this.threshold,
      lastIndex: this.#lastIndex,
      interval: Number.isFinite(this.#interval) ? this.#interval : null,
      state: deflateRawSync(bytes).toString('base64'),
    };
  }

  /**
   * Puts a snapshot() (as it came back from JSON) into this tracker, which must be made with the same
   * settings, step and threshold; throws with the reason, leaving the tracker as it was, when it does not fit.
   */
  restore(s: unknown): void {
    const v = s as Partial<TrackerSnapshot> | null;
    const index = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n >= 0;
    if (
      !v ||
      v.v !== 1 ||
      typeof v.state !== 'string' ||
      !(v.lastIndex === null || index(v.lastIndex)) ||
      !(v.interval === null || (index(v.interval) && v.interval > 0))
    )
      throw new Error('The checkpoint holds tracker state that is not a TargetTracker snapshot');
    if (v.step !== this.step || v.threshold !== this.threshold)
      throw new Error(
        `The checkpoint's tracker state is of step ${String(v.step)} at threshold ${String(v.threshold)}, not step ${this.step} at ${this.threshold}`,
      );
    let bytes: Buffer;
    try {
      bytes = inflateRawSync(Buffer.from(v.state, 'base64'), { maxOutputLength: MAX_SNAPSHOT_BYTES });
    } catch (e) {
      throw new Error(`The checkpoint's tracker state does not inflate: ${(e as Error).message}`);
    }
    const n = bytes.length >= 4 ? bytes.readUInt32LE(0) : -1;
    if (n < 0 || n > (bytes.length - 4) / 32)
      throw new Error("The checkpoint's tracker state is truncated (its previous boxes)");
    const previous: number[][] = [];
    for (let i = 0; i < n; i++) previous.push([0, 1, 2, 3].map((k) => bytes.readDoubleLE(4 + 32 * i + 8 * k)));
    this.#tracker.restore(bytes.subarray(4 + 32 * n));
    this.#previous = previous;
    this.#lastIndex = v.lastIndex ?? null;
    this.#interval = v.interval ?? Infinity;
  }

  /**
   * Whether a low-score candidate may go to the second pass: it overlaps a box tracked in the previous frame
   * (IoU >= 0.5, the second pass's own threshold) that no high-score candidate of this frame is likely to
   * take, and it is no duplicate of a high-score candidate. Anything else would start a spurious track.
   */
  #continues(c: Candidate, high: readonly Candidate[]): boolean {
    if (high.some((h) => iou(h.box, c.box) >= BYTE_GATE_IOU)) return false;
    return this.#previous.some((p) => iou(p, c.box) >= 0.5 && !high.some((h) => iou(h.box, p) >= BYTE_GATE_IOU));
  }

  /**
   * Sampling intervals since the previous frame: 1 normally; more where frames were skipped (a live source
   * keeps only its newest frame while processing is behind), so the tracker predicts motion over the whole
   * gap instead of one interval. The interval is learned as the smallest gap seen, which needs no knowledge
   * of the sampling settings (fps sampling of 30 fps at 7 fps gives gaps of 4 and 5: both round to 1).
   */
  #steps(index: number): number {
    const last = this.#lastIndex;
    this.#lastIndex = index;
    if (last === null || index <= last) return 1;
    this.#interval = Math.min(this.#interval, index - last);
    return Math.max(1, Math.round((index - last) / this.#interval));
  }

  /**
   * Associates one frame's candidates (call once per frame, also with []); `frameIndex`, the frame's index
   * in the source, lets skipped frames count (see #steps). Returns the reported ones, in candidate order,
   * with their task-wide track id.
   */
  assign<C extends Candidate>(candidates: readonly C[], frameIndex: number): Array<{ candidate: C; trackId: number }> {
    const valid = candidates.filter((c) => c.box[2] > c.box[0] && c.box[3] > c.box[1]);
    const high = valid.filter((c) => c.score >= this.#feed);
    const fed =
      this.settings.type === 'bytetrack'
        ? valid.filter((c) => c.score >= this.#feed || (c.score >= BYTE_LOW && this.#continues(c, high)))
        : high;
    const out = this.#tracker.update(
      fed.map((c) => ({ box: c.box, score: c.score, class: c.cls, signature: c.signature })),
      this.#steps(frameIndex),
    );
    this.#previous = out.map((t) => fed[t.index].box);
    const reported: Array<{ candidate: C; trackId: number }> = [];
    for (const t of out) {
      const c = fed[t.index];
      if (c.score < this.threshold || !t.confirmed) continue;
      reported.push({ candidate: c, trackId: this.ids.global(this.step, t.trackId) });
    }
    return reported;
  }
}
