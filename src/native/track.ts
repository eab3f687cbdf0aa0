// TypeScript face of native/core/track (native/addon/track_binding.cc): the multi-object tracker, SORT with
// ByteTrack's low-score pass, appearance (colour signatures) and a buffered pass as options. Options and detections are checked here (catalogue errors, as
// the video API's tracker settings reach it); the addon's own errors follow src/native/load.ts.
//
// Contract (as SORT's): call update() exactly once per frame, in frame order, ALSO for frames with no
// detections (pass []). That call is what ages tracks: skipping empty frames would keep lost tracks alive
// and let them grab new objects. Frames that were never seen (a live source dropping frames while the
// reader was behind) are passed as `steps`: the frame intervals since the previous call, over which motion
// is predicted and tracks age. State belongs to the instance: ids start at 1, are never reused, and die
// with it.
//
// snapshot()/restore() carry a tracker's whole state to another instance (a video task continued by another
// worker): the native state (native/core/track/tracker_snapshot.cc has its format) behind a small header of
// this wrapper's own, the class numbers it gave the class names (a fresh wrapper must give the same names the
// same numbers). A restored tracker's update() answers exactly as the original's would have.
import { errors } from '../base/errors.js';
import { loadAddon } from './load.js';

/** The slice of the addon this file calls. */
interface NativeTracker {
  update(
    boxes: Float32Array,
    scores: Float32Array,
    classes: Int32Array,
    steps?: number,
    signatures?: Float32Array,
  ): Int32Array;
  liveTracks(): number;
  liveIds(): Int32Array;
  frameCount(): number;
  snapshot(): Uint8Array;
  restore(bytes: Uint8Array): boolean;
}
interface TrackAddon {
  Tracker: new (opts: Record<string, number | boolean | undefined>) => NativeTracker;
}

export interface ByteTrackOptions {
  /** First pass and new tracks use detections with score >= highThresh. Default 0.5. */
  highThresh?: number;
  /** Detections with lowThresh <= score < highThresh may only continue recent tracks. Default 0.1. */
  lowThresh?: number;
  /** IoU needed in that second pass. Default 0.5 (ByteTrack's). */
  secondIouThreshold?: number;
}

export interface TrackerOptions {
  /** Frames a track survives without a matching detection. Default 30. */
  maxAge?: number;
  /** Consecutive matched frames before a track is confirmed. Default 3. */
  minHits?: number;
  /** Minimum IoU between a track's predicted box and a detection. Default 0.3. */
  iouThreshold?: number;
  /** ByteTrack's second association of low-score boxes; `true` for its defaults. Default off (plain SORT). */
  byteTrack?: boolean | ByteTrackOptions;
  /**
   * 'confirmed' (default, SORT): only detections of confirmed tracks are reported; ids are given at
   * confirmation, so confirmed ids have no gaps. 'all': every detection gets a track id in the frame it
   * appears (what the video API needs: every target carries a track_id); tentative tracks get their id at
   * creation and keep it once confirmed, so ids stay stable; a tentative track that never gets confirmed
   * leaves its id unused afterwards.
   */
  report?: 'confirmed' | 'all';
  /**
   * The buffered pass (C-BIoU): tracks left unmatched and seen within `maxLost` frame intervals (default 10)
   * are matched once more against detections left unmatched, on boxes grown by `buffer` of their width and
   * height on each side. Default off.
   */
  buffered?: { buffer: number; maxLost?: number };
  /**
   * Appearance: detections carry a `signature` of `dim` non-negative values summing to 1 (a colour
   * histogram, src/media/colour-signature.ts); a pair's weight in the assignment becomes
   * (1 - weight) x IoU + weight x the histograms' intersection with the track's running mean (gating stays
   * on IoU). `reacquire` in [0, 1] (default 0: off): a track that missed its previous frame only takes a
   * detection whose intersection with it is at least that, so a lost track does not take whoever turns up
   * where it coasts. Default off.
   */
  appearance?: { dim: number; weight?: number; reacquire?: number };
}

export interface TrackerDetection {
  /** [x1, y1, x2, y2] in pixels, x2 > x1, y2 > y1. */
  box: readonly [number, number, number, number] | readonly number[];
  /** Confidence in [0, 1]; only used by ByteTrack mode. Default 1. */
  score?: number;
  /** Detections of different classes never match. Default: one class for all. */
  class?: string | number;
  /** With `appearance`: the detection's signature (`appearance.dim` values); without one it matches on IoU alone. */
  signature?: ArrayLike<number>;
}

export interface TrackedDetection {
  /** Index of the input detection, so callers keep their own attributes. */
  index: number;
  trackId: number;
  /** False for tentative tracks (only reported with report: 'all'). */
  confirmed: boolean;
}

/** The wrapper's header format: [u8 version][u32 LE length of the JSON][JSON {classes}][the native bytes]. */
const SNAPSHOT_VERSION = 1;
const SNAPSHOT_REFUSED = 'ERR_SIGHTFLOW_TRACK_SNAPSHOT_REFUSED';

/** A snapshot that restore() refuses: `code` is ERR_SIGHTFLOW_TRACK_SNAPSHOT_REFUSED (src/native/load.ts). */
function refused(why: string): Error & { code: string } {
  return Object.assign(new Error(`Tracker snapshot refused: ${why}`), { code: SNAPSHOT_REFUSED });
}

const DEFAULTS = {
  maxAge: 30,
  minHits: 3,
  iouThreshold: 0.3,
  highThresh: 0.5,
  lowThresh: 0.1,
  secondIouThreshold: 0.5,
};

function integerIn(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
    throw errors.invalidParam(name, `Expected integer between ${min} and ${max} for ${name} but received ${String(v)}`);
  }
  return v;
}

function numberIn(name: string, v: unknown, min: number, max: number): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
    throw errors.invalidParam(name, `Expected number between ${min} and ${max} for ${name} but received ${String(v)}`);
  }
  return v;
}

export class Tracker {
  readonly options: Readonly<
    Required<Omit<TrackerOptions, 'byteTrack' | 'appearance' | 'buffered'>> & {
      byteTrack: Required<ByteTrackOptions> | null;
      buffered: Required<NonNullable<TrackerOptions['buffered']>> | null;
      appearance: Required<NonNullable<TrackerOptions['appearance']>> | null;
    }
  >;
  readonly #native: NativeTracker;
  readonly #classIds = new Map<string | number, number>();
  #boxes = new Float32Array(0);
  #scores = new Float32Array(0);
  #classes = new Int32Array(0);
  #signatures = new Float32Array(0);

  constructor(opts: TrackerOptions = {}) {
    const maxAge = integerIn('maxAge', opts.maxAge ?? DEFAULTS.maxAge, 0, 100_000);
    const minHits = integerIn('minHits', opts.minHits ?? DEFAULTS.minHits, 1, 1000);
    const iouThreshold = numberIn('iouThreshold', opts.iouThreshold ?? DEFAULTS.iouThreshold, 0.01, 1);
    const report = opts.report ?? 'confirmed';
    if (report !== 'confirmed' && report !== 'all') {
      throw errors.invalidParam('report', `Expected one of confirmed, all for report but received ${String(report)}`);
    }
    let byteTrack: Required<ByteTrackOptions> | null = null;
    if (opts.byteTrack) {
      const b = opts.byteTrack === true ? {} : opts.byteTrack;
      const highThresh = numberIn('byteTrack.highThresh', b.highThresh ?? DEFAULTS.highThresh, 0, 1);
      const lowThresh = numberIn('byteTrack.lowThresh', b.lowThresh ?? DEFAULTS.lowThresh, 0, highThresh);
      const secondIouThreshold = numberIn(
        'byteTrack.secondIouThreshold',
        b.secondIouThreshold ?? DEFAULTS.secondIouThreshold,
        0.01,
        1,
      );
      byteTrack = { highThresh, lowThresh, secondIouThreshold };
    }
    let buffered: Required<NonNullable<TrackerOptions['buffered']>> | null = null;
    if (opts.buffered) {
      buffered = {
        buffer: numberIn('buffered.buffer', opts.buffered.buffer, 0, 10),
        maxLost: integerIn('buffered.maxLost', opts.buffered.maxLost ?? 10, 1, 100_000),
      };
    }
    let appearance: Required<NonNullable<TrackerOptions['appearance']>> | null = null;
    if (opts.appearance) {
      appearance = {
        dim: integerIn('appearance.dim', opts.appearance.dim, 1, 4096),
        weight: numberIn('appearance.weight', opts.appearance.weight ?? 0.5, 0, 1),
        reacquire: numberIn('appearance.reacquire', opts.appearance.reacquire ?? 0, 0, 1),
      };
    }
    this.options = Object.freeze({ maxAge, minHits, iouThreshold, report, byteTrack, buffered, appearance });
    const { Tracker: NativeClass } = loadAddon<TrackAddon>();
    this.#native = new NativeClass({
      maxAge,
      minHits,
      iouThreshold,
      reportAll: report === 'all',
      byte: byteTrack !== null,
      ...(buffered ? { buffer: buffered.buffer, bufferMaxLost: buffered.maxLost } : {}),
      ...(appearance
        ? {
            appearanceDim: appearance.dim,
            appearanceWeight: appearance.weight,
            appearanceReacquire: appearance.reacquire,
          }
        : {}),
      ...(byteTrack ?? {}),
    });
  }

  /** Live tracks (tentative, confirmed and coasting ones). */
  get liveTracks(): number {
    return this.#native.liveTracks();
  }

  /**
   * The ids of the live tracks that have one, ascending (with report 'confirmed' a tentative track has none
   * yet). Ids are never reused: one missing here is never reported again.
   */
  liveIds(): Int32Array {
    return this.#native.liveIds();
  }

  /** Number of update() calls so far. */
  get frames(): number {
    return this.#native.frameCount();
  }

  /**
   * Associates one frame's detections (possibly none: still call it). `steps`: frame intervals since the
   * previous call (default 1). Returns the reported detections in input order, each with its input index and
   * track id.
   */
  update(detections: readonly TrackerDetection[], steps = 1): TrackedDetection[] {
    integerIn('steps', steps, 1, 1_000_000);
    const n = detections.length;
    if (this.#scores.length < n) {
      const cap = Math.max(n, 2 * this.#scores.length, 16);
      this.#boxes = new Float32Array(4 * cap);
      this.#scores = new Float32Array(cap);
      this.#classes = new Int32Array(cap);
    }
    for (let i = 0; i < n; i++) {
      const d = detections[i];
      const b = d.box;
      const x1 = b[0],
        y1 = b[1],
        x2 = b[2],
        y2 = b[3];
      // Negated comparisons also reject NaN.
      if (
        b.length !== 4 ||
        !(x2 > x1) ||
        !(y2 > y1) ||
        !Number.isFinite(x1) ||
        !Number.isFinite(y1) ||
        !Number.isFinite(x2) ||
        !Number.isFinite(y2)
      ) {
        throw errors.invalidParam(
          `detections[${i}].box`,
          `Expected [x1, y1, x2, y2] with x2 > x1 and y2 > y1 for detections[${i}].box but received ${JSON.stringify(b)}`,
        );
      }
      const score = d.score ?? 1;
      if (typeof score !== 'number' || !Number.isFinite(score)) {
        throw errors.invalidParam(
          `detections[${i}].score`,
          `Expected a finite number for detections[${i}].score but received ${String(score)}`,
        );
      }
      this.#boxes[4 * i] = x1;
      this.#boxes[4 * i + 1] = y1;
      this.#boxes[4 * i + 2] = x2;
      this.#boxes[4 * i + 3] = y2;
      this.#scores[i] = score;
      this.#classes[i] = this.#classId(d.class);
    }
    const dim = this.options.appearance?.dim ?? 0;
    let signatures: Float32Array | undefined;
    if (dim > 0 && detections.some((d) => d.signature !== undefined)) {
      if (this.#signatures.length < dim * n)
        this.#signatures = new Float32Array(dim * Math.max(n, 2 * (this.#signatures.length / dim), 16));
      signatures = this.#signatures.subarray(0, dim * n);
      for (let i = 0; i < n; i++) {
        const sig = detections[i].signature;
        if (sig === undefined) {
          signatures.fill(1 / dim, i * dim, (i + 1) * dim);
          continue;
        }
        if (sig.length !== dim)
          throw errors.invalidParam(
            `detections[${i}].signature`,
            `Expected ${dim} values for detections[${i}].signature but received ${sig.length}`,
          );
        for (let k = 0; k < dim; k++) signatures[i * dim + k] = sig[k];
      }
    }
    const res = this.updateArrays(
      this.#boxes.subarray(0, 4 * n),
      this.#scores.subarray(0, n),
      this.#classes.subarray(0, n),
      steps,
      signatures,
    );
    const out: TrackedDetection[] = [];
    for (let i = 0; i < n; i++) {
      if (res[i] !== 0) out.push({ index: i, trackId: res[i], confirmed: res[n + i] === 1 });
    }
    return out;
  }

  /**
   * The allocation-light form for hot loops: boxes as [x1,y1,x2,y2]*n, one score and one class number per
   * box; only their types and lengths are checked (by the addon: ERR_SIGHTFLOW_TRACK_INVALID_ARG). Returns 2n
   * numbers: track ids (0 = not reported), then confirmed flags.
   */
  updateArrays(
    boxes: Float32Array,
    scores: Float32Array,
    classes: Int32Array,
    steps = 1,
    signatures?: Float32Array,
  ): Int32Array {
    return this.#native.update(boxes, scores, classes, steps, signatures);
  }

  /**
   * The tracker's whole state (every track with its filter's exact bits, ids, frame count, the options, the
   * class numbers), to restore() into a tracker made with the same options, here or in another process.
   */
  snapshot(): Uint8Array {
    const native = this.#native.snapshot();
    const header = Buffer.from(JSON.stringify({ classes: [...this.#classIds.keys()] }), 'utf8');
    const out = new Uint8Array(5 + header.length + native.length);
    out[0] = SNAPSHOT_VERSION;
    new DataView(out.buffer).setUint32(1, header.length, true);
    out.set(header, 5);
    out.set(native, 5 + header.length);
    return out;
  }

  /**
   * Replaces this tracker's state with a snapshot()'s. Throws (code ERR_SIGHTFLOW_TRACK_SNAPSHOT_REFUSED, the
   * tracker unchanged) for bytes that are not a snapshot of this format version taken under these options.
   */
  restore(bytes: Uint8Array): void {
    if (!(bytes instanceof Uint8Array))
      throw new TypeError(`Expected Uint8Array for snapshot but received ${typeof bytes}`);
    if (bytes.length < 5 || bytes[0] !== SNAPSHOT_VERSION)
      throw refused(bytes.length < 5 ? 'too short' : `format version ${bytes[0]}, expected ${SNAPSHOT_VERSION}`);
    const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1, true);
    if (length > bytes.length - 5) throw refused('truncated');
    let classes: unknown;
    try {
      classes = (
        JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 5, length).toString('utf8')) as { classes?: unknown }
      ).classes;
    } catch {
      throw refused('its header is not JSON');
    }
    const valid =
      Array.isArray(classes) &&
      classes.every((c) => typeof c === 'string' || (typeof c === 'number' && Number.isFinite(c))) &&
      new Set(classes).size === classes.length;
    if (!valid) throw refused('its class list is malformed');
    if (!this.#native.restore(bytes.subarray(5 + length)))
      throw refused('malformed or truncated, of another format version, or taken under other options');
    // Class numbers are given in first-seen order from 1 (#classId), so the list in that order rebuilds them.
    this.#classIds.clear();
    for (const c of classes as Array<string | number>) this.#classIds.set(c, this.#classIds.size + 1);
  }

  #classId(c: string | number | undefined): number {
    if (c === undefined) return 0;
    let id = this.#classIds.get(c);
    if (id === undefined) {
      id = this.#classIds.size + 1;
      this.#classIds.set(c, id);
    }
    return id;
  }
}
