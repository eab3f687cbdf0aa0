// The index step at run time (docs/moments.md; its descriptor is step.ts): from each chunk and its frame, as
// the frame pipeline hands them on, it cuts the sampled frames into segments (segmenter.ts) and follows the
// tracks of the chunks, and writes each closed segment and each
// ended track to the task's collection as an item whose metadata says where it is in the video and in the
// task's result stream. Embedding and writing run behind the pipeline (EMBED_CONCURRENCY items at once,
// then the pipeline waits), so indexing costs little more than the embeddings themselves.
//
// A file task may continue on another worker after its own died (docs/moments.md, "When a worker dies"):
// snapshot() gives what the next worker needs without pixels (moment-snapshot.ts: the frames kept images came
// from, by their `before` reference) and restore() decodes those frames again and recomputes the images from
// them. Items closed but not known written are in the snapshot and written again; writes are upserts by item id
// and the task's counts count an id once, so an item the dead worker wrote after its checkpoint is neither
// duplicated nor counted twice.
import sharp from 'sharp';
import type { CollectionWriter } from '../../services/collections-port.js';
import type { MomentMetadata } from '../../services/moment-metadata.js';
import type { Logger } from '../../base/log.js';
import type { Db } from '../../store/db.js';
import { resize } from '../../native/image.js';
import { dominantColor } from '../../media/colour.js';
import type { RgbImage } from '../../media/rgb-image.js';
import type { FrameOutput, StreamTarget } from '../task-contract.js';
import type { FrameRefetch, StepFrame, StepTask } from '../pipeline/frame-step.js';
import type { IndexSettings } from './index-step.js';
import { layoutSignature, Segmenter } from './segmenter.js';
import { sql } from './moments.sql.js';
import { analyticsOf, applyRules, ruleKeys } from './analytics-events.js';
import {
  packIndexSnapshot,
  readIndexSnapshot,
  type FrameRef,
  type PackedIndexSnapshot,
  type PendingState,
  type SegmentState,
  type TrackState,
} from './moment-snapshot.js';

export interface MomentIndexDeps {
  db: Db;
  log: Logger;
}

/** Longest side of the frames kept for embedding (the detector and descriptors work at lower sizes). */
const EMBED_SIDE = 512;
const THUMB_SIDE = 320;
const CROP_SIDE = 224;
/** Frames embedded per segment (evenly spread); their mean is the segment's vector. */
const FRAMES_PER_SEGMENT = 1;
/** Segments and tracks embedded and written at once, behind the pipeline; one more closing waits for a slot
 * (so the pipeline, and a live source's delay, never run more than this far ahead). Two or three at once let
 * the detector's queue batch them: 400 -> 230 ms an embedding on a loaded 2-core machine. */
const EMBED_CONCURRENCY = 3;
/** A track unseen this long (stream time, in segments) has ended and is written. */
const TRACK_END_SEGMENTS = 2;
/** Weight of OCR text in a segment's vector, where the collection's model embeds text. */
const TEXT_WEIGHT = 0.5;
/** On cancel, the open segment and tracks are still written within this time. */
const CLOSE_GRACE_MS = 5000;

/** Where a kept image came from: the frame's index and its `before` reference (what a snapshot names it by). */
interface FrameAt {
  at: number;
  before: unknown;
}

interface Kept extends FrameAt {
  image: RgbImage;
}

interface OpenSegment {
  /** Segments of one shot (split only by segment_ms) share it: search merges them. */
  shot: number;
  firstFrame: number;
  lastFrame: number;
  startMs: number;
  lastMs: number;
  wallMs?: number;
  offset: number | null;
  frames: Kept[];
  classes: Set<string>;
  texts: string[];
  lines: Set<string>;
  zones: Set<string>;
}

interface OpenTrack {
  trackId: number;
  cls: string;
  firstFrame: number;
  startMs: number;
  lastMs: number;
  wallMs?: number;
  offset: number;
  best: number;
  crop: RgbImage | null;
  /** The best crop's frame and roi [left, top, width, height] (crop and colour are recomputed from them). */
  cropFrom?: FrameAt & { roi: [number, number, number, number] };
  colour?: string;
  lines: Set<string>;
  zones: Set<string>;
}

function shrink(img: RgbImage, side: number): RgbImage {
  const s = Math.min(1, side / Math.max(img.width, img.height));
  if (s >= 1)
    return {
      data: Uint8Array.from(img.data.subarray(0, img.width * img.height * 3)),
      width: img.width,
      height: img.height,
      channels: 3,
    };
  return resize(img, Math.max(1, Math.round(img.width * s)), Math.max(1, Math.round(img.height * s)));
}

/** A closed item waiting to be (or being) embedded and written. */
type Pending =
  | { kind: 'segment'; segment: OpenSegment; endMs: number }
  | { kind: 'track'; track: OpenTrack; endMs: number };

/** A kept image's place until restore() has decoded its frame again. */
const NO_IMAGE: RgbImage = { data: new Uint8Array(0), width: 0, height: 0, channels: 3 };

const roiOf = (r: StreamTarget['roi']): [number, number, number, number] => [r.left, r.top, r.width, r.height];

function crop(img: RgbImage, roi: StreamTarget['roi']): RgbImage | null {
  const x = Math.max(0, Math.floor(roi.left));
  const y = Math.max(0, Math.floor(roi.top));
  const w = Math.min(img.width - x, Math.ceil(roi.width));
  const h = Math.min(img.height - y, Math.ceil(roi.height));
  if (w < 8 || h < 8) return null;
  const out = new Uint8Array(w * h * 3);
  for (let r = 0; r < h; r++)
    out.set(img.data.subarray(((y + r) * img.width + x) * 3, ((y + r) * img.width + x + w) * 3), r * w * 3);
  return shrink({ data: out, width: w, height: h, channels: 3 }, CROP_SIDE);
}

function meanOf(vs: Float32Array[]): Float32Array {
  const out = new Float32Array(vs[0]!.length);
  for (const v of vs) for (let i = 0; i < out.length; i++) out[i]! += v[i]!;
  return normalize(out);
}

function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  if (n > 0) {
    const s = 1 / Math.sqrt(n);
    for (let i = 0; i < v.length; i++) v[i]! *= s;
  }
  return v;
}

const jpeg = (img: RgbImage, side: number) => {
  const small = shrink(img, side);
  return sharp(Buffer.from(small.data.buffer, small.data.byteOffset, small.data.byteLength), {
    raw: { width: small.width, height: small.height, channels: 3 },
  })
    .jpeg({ quality: 75 })
    .toBuffer();
};

export class MomentIndexer {
  readonly #segmenter: Segmenter;
  /** The item's `video`: parameters.video_id, else the input URL, else the task id (an uploaded video). */
  readonly #video: string;
  #segment: OpenSegment | null = null;
  readonly #tracks = new Map<number, OpenTrack>();
  /** The items being embedded and written, each with what it writes (a snapshot names those not done). */
  readonly #running = new Map<Promise<void>, Pending>();
  /** Items whose write failed: the task fails, but a snapshot taken meanwhile still names them. */
  readonly #failed: Pending[] = [];
  #failure: unknown = null;
  #frameGapMs = 1000;
  #lastMs: number | null = null;
  #shot = 0;
  /** The frame the segmenter last saw (its layout is what the next frame is compared with). */
  #lastFrame: FrameAt | null = null;

  constructor(
    private readonly settings: IndexSettings,
    private readonly writer: CollectionWriter,
    private readonly task: StepTask,
    private readonly deps: MomentIndexDeps,
  ) {
    this.#segmenter = new Segmenter(settings.segmenting, settings.segmentMs);
    const input = task.request.input?.[0];
    this.#video = settings.videoId ?? (input?.type === 'video_url' && input.url ? input.url : task.id);
  }

  async #streamEnd(): Promise<number> {
    const rows = await this.deps.db.query(sql.streamEnd, [this.task.id]);
    return Number(rows[0]?.stream_bytes ?? 0);
  }

  /** A frame's chunk, before it is archived (so the stream's end is where this chunk will start). */
  async chunk(out: FrameOutput, frame: StepFrame): Promise<void> {
    if (this.#failure) throw this.#failure;
    const info = out.stream_info;
    const timeMs = info.stream_time_ms ?? Math.round((frame.index * 1000) / (info.fps || 1));
    if (this.#lastMs !== null && timeMs > this.#lastMs) this.#frameGapMs = timeMs - this.#lastMs;
    this.#lastMs = timeMs;
    const { image } = frame;
    const targets = out.delta.results.flatMap((r) => r.targets);
    const events = analyticsOf(out);
    let offset: number | null = null;
    const offsetNow = async () => (offset ??= await this.#streamEnd());

    if (this.settings.segments) {
      const small = shrink(image, EMBED_SIDE);
      const cut = this.#segmenter.startsSegment(layoutSignature(small), timeMs);
      this.#lastFrame = { at: frame.index, before: frame.before };
      if (cut) {
        if (this.#segment) await this.#queue(this.#closeSegment(this.#segment, timeMs));
        if (cut === 'shot') this.#shot++;
        this.#segment = {
          shot: this.#shot,
          firstFrame: frame.index,
          lastFrame: frame.index,
          startMs: timeMs,
          lastMs: timeMs,
          wallMs: info.live ? info.received_at_ms : undefined,
          offset: await offsetNow(),
          frames: [],
          classes: new Set(),
          texts: [],
          lines: new Set(),
          zones: new Set(),
        };
      }
      const s = this.#segment!;
      s.lastFrame = frame.index;
      s.lastMs = timeMs;
      s.frames.push({ at: frame.index, before: frame.before, image: small });
      // Keep memory bounded on long segments: every other frame once there are twice as many as embedded.
      if (s.frames.length > 4 * FRAMES_PER_SEGMENT) s.frames = s.frames.filter((_, i) => i % 2 === 0);
      for (const t of targets) {
        s.classes.add(t.class);
        if (typeof t.text === 'string' && t.text.trim() && !s.texts.includes(t.text.trim()))
          s.texts.push(t.text.trim());
      }
      applyRules(events, s.lines, s.zones);
    }

    if (this.settings.tracks) {
      for (const t of targets) {
        let tr = this.#tracks.get(t.track_id);
        if (!tr) {
          tr = {
            trackId: t.track_id,
            cls: t.class,
            firstFrame: frame.index,
            startMs: timeMs,
            lastMs: timeMs,
            wallMs: info.live ? info.received_at_ms : undefined,
            offset: await offsetNow(),
            best: -1,
            crop: null,
            lines: new Set(),
            zones: new Set(),
          };
          this.#tracks.set(t.track_id, tr);
        }
        tr.lastMs = timeMs;
        if (t.confidence > tr.best) {
          const c = crop(image, t.roi);
          if (c) {
            tr.best = t.confidence;
            tr.crop = c;
            tr.cropFrom = { at: frame.index, before: frame.before, roi: roiOf(t.roi) };
            tr.colour = dominantColor(image, [
              t.roi.left,
              t.roi.top,
              t.roi.left + t.roi.width,
              t.roi.top + t.roi.height,
            ]);
          }
        }
      }
      for (const e of events) {
        const tr = typeof e.track_id === 'number' ? this.#tracks.get(e.track_id) : undefined;
        if (tr) applyRules([e], tr.lines, tr.zones);
      }
      for (const tr of [...this.#tracks.values()]) {
        if (timeMs - tr.lastMs > TRACK_END_SEGMENTS * this.settings.segmentMs) {
          this.#tracks.delete(tr.trackId);
          await this.#queue(this.#closeTrack(tr));
        }
      }
    }
  }

  /** Writes `item` behind the pipeline; waits first while EMBED_CONCURRENCY items are being written. */
  async #queue(item: Pending): Promise<void> {
    while (this.#running.size >= EMBED_CONCURRENCY) await Promise.race(this.#running.keys());
    const job =
      item.kind === 'segment' ? this.#writeSegment(item.segment, item.endMs) : this.#writeTrack(item.track, item.endMs);
    const p: Promise<void> = job
      .catch((e) => {
        this.#failed.push(item);
        this.#failure ??= e;
      })
      .finally(() => {
        this.#running.delete(p);
      });
    this.#running.set(p, item);
  }

  #base(
    kind: 'segment' | 'track',
    startMs: number,
    endMs: number,
    offset: number,
    wallMs: number | undefined,
  ): MomentMetadata {
    return {
      task_id: this.task.id,
      video: this.#video,
      kind,
      start_ms: Math.round(startMs),
      end_ms: Math.round(endMs),
      stream_offset: offset,
      ...(wallMs !== undefined ? { wall_start_ms: wallMs } : {}),
    };
  }

  /** The segment closed (ending at the next one's start, else a frame gap after its last frame), keeping only
   * the frames embedded, so a snapshot taken while it is written names no more frames than needed. */
  #closeSegment(s: OpenSegment, nextMs: number | null): Pending {
    const endMs = nextMs ?? s.lastMs + this.#frameGapMs;
    const n = s.frames.length;
    const picks = [
      ...new Set(
        Array.from({ length: Math.min(FRAMES_PER_SEGMENT, n) }, (_, i) =>
          Math.floor(((i + 0.5) * n) / Math.min(FRAMES_PER_SEGMENT, n)),
        ),
      ),
    ];
    return { kind: 'segment', segment: { ...s, frames: picks.map((i) => s.frames[i]!) }, endMs };
  }

  /** The track ended: its end is fixed now (the frame gap may change before its item is written). */
  #closeTrack(tr: OpenTrack): Pending {
    return { kind: 'track', track: tr, endMs: tr.lastMs + this.#frameGapMs };
  }

  async #writeSegment(s: OpenSegment, endMs: number): Promise<void> {
    const vectors: Float32Array[] = [];
    for (const f of s.frames) vectors.push(await this.writer.embedImage(f.image));
    let vector = meanOf(vectors);
    const text = s.texts.join(' ').slice(0, 2000);
    if (text && this.writer.embedsText) {
      const tv = await this.writer.embedText(text);
      for (let i = 0; i < vector.length; i++) vector[i]! += TEXT_WEIGHT * tv[i]!;
      vector = normalize(vector);
    }
    const metadata: MomentMetadata = {
      ...this.#base('segment', s.startMs, endMs, s.offset!, s.wallMs),
      shot: s.shot,
      first_frame: s.firstFrame,
      last_frame: s.lastFrame,
      classes: [...s.classes].sort(),
      ...(text ? { text } : {}),
      ...ruleKeys(s.lines, s.zones),
    };
    const id = `${this.task.id}.s${s.firstFrame}`;
    await this.writer.add([
      { id, vector, metadata, jpeg: await jpeg(s.frames[Math.floor(s.frames.length / 2)]!.image, THUMB_SIDE) },
    ]);
    await this.deps.db.query(sql.addItem, [this.task.id, this.writer.collectionId, id, 1, 0]);
  }

  async #writeTrack(tr: OpenTrack, endMs: number): Promise<void> {
    if (!tr.crop) return;
    const vector = normalize(Float32Array.from(await this.writer.embedImage(tr.crop)));
    const metadata: MomentMetadata = {
      ...this.#base('track', tr.startMs, endMs, tr.offset, tr.wallMs),
      track_id: tr.trackId,
      class: tr.cls,
      ...(tr.colour ? { colour: tr.colour } : {}),
      first_frame: tr.firstFrame,
      ...ruleKeys(tr.lines, tr.zones),
    };
    const id = `${this.task.id}.t${tr.trackId}`;
    await this.writer.add([{ id, vector, metadata, jpeg: await jpeg(tr.crop, THUMB_SIDE) }]);
    await this.deps.db.query(sql.addItem, [this.task.id, this.writer.collectionId, id, 0, 1]);
  }

  /**
   * The state after the last chunk (moment-snapshot.ts), for another worker to continue the task from: the
   * frames kept images came from by reference, never pixels. Throws where such a frame has no `before`
   * reference (it cannot be decoded again: the provider asks only for a file task's).
   */
  snapshot(): PackedIndexSnapshot {
    const frames: FrameRef[] = [];
    const position = new Map<number, number>();
    const ref = (f: FrameAt): number => {
      let i = position.get(f.at);
      if (i === undefined) {
        if (f.before === undefined) throw new Error(`The index step kept frame ${f.at}, which cannot be decoded again`);
        i = frames.length;
        position.set(f.at, i);
        frames.push([f.at, f.before]);
      }
      return i;
    };
    const segment = (s: OpenSegment): SegmentState => ({
      shot: s.shot,
      first: s.firstFrame,
      last: s.lastFrame,
      startMs: s.startMs,
      lastMs: s.lastMs,
      ...(s.wallMs !== undefined ? { wallMs: s.wallMs } : {}),
      offset: s.offset,
      frames: s.frames.map(ref),
      classes: [...s.classes],
      texts: [...s.texts],
      lines: [...s.lines],
      zones: [...s.zones],
    });
    const track = (t: OpenTrack): TrackState => ({
      id: t.trackId,
      cls: t.cls,
      first: t.firstFrame,
      startMs: t.startMs,
      lastMs: t.lastMs,
      ...(t.wallMs !== undefined ? { wallMs: t.wallMs } : {}),
      offset: t.offset,
      best: t.best,
      crop: t.crop && t.cropFrom ? { frame: ref(t.cropFrom), roi: t.cropFrom.roi } : null,
      lines: [...t.lines],
      zones: [...t.zones],
    });
    const pending: PendingState[] = [];
    for (const p of [...this.#running.values(), ...this.#failed]) {
      if (p.kind === 'segment') pending.push({ kind: 'segment', segment: segment(p.segment), endMs: p.endMs });
      // A track without a crop writes nothing.
      else if (p.track.crop) pending.push({ kind: 'track', track: track(p.track), endMs: p.endMs });
    }
    return packIndexSnapshot({
      v: 1,
      frames,
      segmenter: {
        startMs: this.#segmenter.startMs,
        last: this.settings.segments && this.#lastFrame ? ref(this.#lastFrame) : null,
      },
      frameGapMs: this.#frameGapMs,
      lastMs: this.#lastMs,
      shot: this.#shot,
      segment: this.#segment && segment(this.#segment),
      tracks: [...this.#tracks.values()].map(track),
      pending,
    });
  }

  /**
   * Puts a snapshot() back into this fresh indexer (before its first chunk): decodes each frame it names once
   * through `refetch`, in stream order and one at a time (a provider can serve that from one forward decoder,
   * and only one whole frame is held at once), recomputes the kept images from them, and starts writing the
   * items that were not known written. Throws an Error on a malformed snapshot or a frame that does not fit.
   */
  async restore(state: unknown, refetch: FrameRefetch): Promise<void> {
    const snap = readIndexSnapshot(state);
    // What each frame gives, by its position in snap.frames: its shrunk copy, crops of it.
    const uses = new Map<number, Array<(image: RgbImage, small: () => RgbImage) => void>>();
    const use = (i: number, f: (image: RgbImage, small: () => RgbImage) => void) => {
      const list = uses.get(i);
      if (list) list.push(f);
      else uses.set(i, [f]);
    };
    const frameAt = (i: number): FrameAt => ({ at: snap.frames[i]![0], before: snap.frames[i]![1] });
    const segment = (g: SegmentState): OpenSegment => {
      const s: OpenSegment = {
        shot: g.shot,
        firstFrame: g.first,
        lastFrame: g.last,
        startMs: g.startMs,
        lastMs: g.lastMs,
        ...(g.wallMs !== undefined ? { wallMs: g.wallMs } : {}),
        offset: g.offset,
        frames: g.frames.map((i) => ({ ...frameAt(i), image: NO_IMAGE })),
        classes: new Set(g.classes),
        texts: [...g.texts],
        lines: new Set(g.lines),
        zones: new Set(g.zones),
      };
      g.frames.forEach((i, k) =>
        use(i, (_, small) => {
          s.frames[k]!.image = small();
        }),
      );
      return s;
    };
    const track = (t: TrackState): OpenTrack => {
      const tr: OpenTrack = {
        trackId: t.id,
        cls: t.cls,
        firstFrame: t.first,
        startMs: t.startMs,
        lastMs: t.lastMs,
        ...(t.wallMs !== undefined ? { wallMs: t.wallMs } : {}),
        offset: t.offset,
        best: t.best,
        crop: null,
        lines: new Set(t.lines),
        zones: new Set(t.zones),
      };
      const c = t.crop;
      if (c) {
        tr.cropFrom = { ...frameAt(c.frame), roi: c.roi };
        use(c.frame, (image) => {
          const [left, top, width, height] = c.roi;
          tr.crop = crop(image, { left, top, width, height });
          if (!tr.crop) throw new Error(`Frame ${tr.cropFrom!.at} decoded again does not hold track ${t.id}'s crop`);
          const colour = dominantColor(image, [left, top, left + width, top + height]);
          if (colour) tr.colour = colour;
        });
      }
      return tr;
    };
    let last: Float32Array | null = null;
    if (snap.segmenter.last !== null)
      use(snap.segmenter.last, (_, small) => {
        last = layoutSignature(small());
      });
    const open = snap.segment && segment(snap.segment);
    const tracks = snap.tracks.map(track);
    const pending: Pending[] = snap.pending.map((p) =>
      p.kind === 'segment'
        ? { kind: 'segment', segment: segment(p.segment), endMs: p.endMs }
        : { kind: 'track', track: track(p.track), endMs: p.endMs },
    );
    for (const i of [...uses.keys()].sort((a, b) => snap.frames[a]![0] - snap.frames[b]![0])) {
      const image = await refetch(snap.frames[i]![1]);
      let small: RgbImage | null = null;
      for (const f of uses.get(i)!) f(image, () => (small ??= shrink(image, EMBED_SIDE)));
    }
    this.#segmenter.restore(snap.segmenter.startMs, last);
    this.#lastFrame = snap.segmenter.last === null ? null : frameAt(snap.segmenter.last);
    this.#frameGapMs = snap.frameGapMs;
    this.#lastMs = snap.lastMs;
    this.#shot = snap.shot;
    this.#segment = open;
    this.#tracks.clear();
    for (const tr of tracks) this.#tracks.set(tr.trackId, tr);
    for (const p of pending) await this.#queue(p);
  }

  /** The end of the task: the open segment and every track are written; throws what a write threw. */
  async finish(): Promise<void> {
    if (this.#segment) {
      await this.#queue(this.#closeSegment(this.#segment, null));
      this.#segment = null;
    }
    for (const tr of this.#tracks.values()) await this.#queue(this.#closeTrack(tr));
    this.#tracks.clear();
    await Promise.all(this.#running.keys());
    if (this.#failure) throw this.#failure;
  }

  /** After a cancel or failure: what was seen is still written (a live task usually ends by cancel), within
   * CLOSE_GRACE_MS; failures are logged, not thrown. `handedOn`: the task goes on from its checkpoint on another
   * worker (this one lost its lease or is shutting down), which writes the open segment and tracks as they end;
   * written here they would be cut short, and could land after the next worker's whole ones. Items already
   * closed are the same whoever writes them, so they are still waited for. */
  async close(handedOn = false): Promise<void> {
    const done = (handedOn ? Promise.all(this.#running.keys()) : this.finish()).catch((e) =>
      this.deps.log.warn({ err: e, taskId: this.task.id }, 'index step: writing the last moments failed'),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      done,
      new Promise((r) => {
        timer = setTimeout(r, CLOSE_GRACE_MS);
        timer.unref();
      }),
    ]);
    clearTimeout(timer);
  }
}
