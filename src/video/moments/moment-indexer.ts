// The index step at run time (docs/moments.md; its descriptor is step.ts): from each chunk and its frame, as
// the frame pipeline hands them on, it cuts the sampled frames into segments (segmenter.ts) and follows the
// tracks of the chunks, and writes each closed segment and each
// ended track to the task's collection as an item whose metadata says where it is in the video and in the
// task's result stream. Embedding and writing run behind the pipeline (EMBED_CONCURRENCY items at once,
// then the pipeline waits), so indexing costs little more than the embeddings themselves.
import sharp from 'sharp';
import type { CollectionWriter } from '../../services/collections-port.js';
import type { MomentMetadata } from '../../services/moment-metadata.js';
import type { Logger } from '../../base/log.js';
import type { Db } from '../../store/db.js';
import { resize } from '../../native/image.js';
import { dominantColor } from '../../media/colour.js';
import type { RgbImage } from '../../media/rgb-image.js';
import type { FrameOutput, StreamTarget } from '../task-contract.js';
import type { StepFrame, StepTask } from '../pipeline/frame-step.js';
import type { IndexSettings } from './index-step.js';
import { layoutSignature, Segmenter } from './segmenter.js';
import { sql } from './moments.sql.js';
import { analyticsOf, applyRules, ruleKeys } from './analytics-events.js';

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

interface OpenSegment {
  /** Segments of one shot (split only by segment_ms) share it: search merges them. */
  shot: number;
  firstFrame: number;
  lastFrame: number;
  startMs: number;
  lastMs: number;
  wallMs?: number;
  offset: number | null;
  frames: RgbImage[];
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
  readonly #running = new Set<Promise<void>>();
  #failure: unknown = null;
  #frameGapMs = 1000;
  #lastMs: number | null = null;
  #shot = 0;

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
      s.frames.push(small);
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
          await this.#queue(this.#trackItem(tr));
        }
      }
    }
  }

  /** Runs `job` behind the pipeline; waits first while EMBED_CONCURRENCY jobs run. */
  async #queue(job: () => Promise<void>): Promise<void> {
    while (this.#running.size >= EMBED_CONCURRENCY) await Promise.race(this.#running);
    const p: Promise<void> = job()
      .catch((e) => {
        this.#failure ??= e;
      })
      .finally(() => {
        this.#running.delete(p);
      });
    this.#running.add(p);
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

  #closeSegment(s: OpenSegment, nextMs: number | null): () => Promise<void> {
    const endMs = nextMs ?? s.lastMs + this.#frameGapMs;
    return async () => {
      const n = s.frames.length;
      const picks = [
        ...new Set(
          Array.from({ length: Math.min(FRAMES_PER_SEGMENT, n) }, (_, i) =>
            Math.floor(((i + 0.5) * n) / Math.min(FRAMES_PER_SEGMENT, n)),
          ),
        ),
      ];
      const vectors: Float32Array[] = [];
      for (const i of picks) vectors.push(await this.writer.embedImage(s.frames[i]!));
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
      await this.writer.add([
        {
          id: `${this.task.id}.s${s.firstFrame}`,
          vector,
          metadata,
          jpeg: await jpeg(s.frames[picks[Math.floor(picks.length / 2)]!]!, THUMB_SIDE),
        },
      ]);
      await this.deps.db.query(sql.addCounts, [this.task.id, this.writer.collectionId, 1, 0]);
    };
  }

  #trackItem(tr: OpenTrack): () => Promise<void> {
    return async () => {
      if (!tr.crop) return;
      const vector = normalize(Float32Array.from(await this.writer.embedImage(tr.crop)));
      const metadata: MomentMetadata = {
        ...this.#base('track', tr.startMs, tr.lastMs + this.#frameGapMs, tr.offset, tr.wallMs),
        track_id: tr.trackId,
        class: tr.cls,
        ...(tr.colour ? { colour: tr.colour } : {}),
        first_frame: tr.firstFrame,
        ...ruleKeys(tr.lines, tr.zones),
      };
      await this.writer.add([
        { id: `${this.task.id}.t${tr.trackId}`, vector, metadata, jpeg: await jpeg(tr.crop, THUMB_SIDE) },
      ]);
      await this.deps.db.query(sql.addCounts, [this.task.id, this.writer.collectionId, 0, 1]);
    };
  }

  /** The end of the task: the open segment and every track are written; throws what a write threw. */
  async finish(): Promise<void> {
    if (this.#segment) {
      await this.#queue(this.#closeSegment(this.#segment, null));
      this.#segment = null;
    }
    for (const tr of this.#tracks.values()) await this.#queue(this.#trackItem(tr));
    this.#tracks.clear();
    await Promise.all(this.#running);
    if (this.#failure) throw this.#failure;
  }

  /** After a cancel or failure: what was seen is still written (a live task usually ends by cancel), within
   * CLOSE_GRACE_MS; failures are logged, not thrown. */
  async close(): Promise<void> {
    const done = this.finish().catch((e) =>
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
