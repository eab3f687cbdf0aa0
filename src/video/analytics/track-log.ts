// The compact track log of a task with an analytics step: what the engine counted, frame by frame, in binary,
// so a recount (and a heatmap) of a finished task reads a few bytes per box instead of parsing every archived
// chunk's JSON. The worker writes it in blocks as chunks are archived (task-analytics.ts) and says at the end
// how many frames it holds; readers use it only when that matches, else the archive (stored-tracks.ts).
// A block is little-endian: per frame t_ms f64, frame_index f64, box count u32, then per box track_id f64,
// class u32 (an index into the block's class names), x1 y1 x2 y2 f64. Numbers are the engine's own doubles,
// so a recount from the log sees exactly what the task saw.
import type { AnalyticsFrame, AnalyticsTrack } from './engine.js';

const FRAME_BYTES = 20;
const BOX_BYTES = 44;
/** A block is written after this many frames or bytes (a live task at 5 fps: about one a minute). */
export const BLOCK_FRAMES = 256;
const BLOCK_BYTES = 2 << 20;

export interface TrackBlock {
  frames: number;
  classes: string[];
  bytes: Buffer;
}

export class TrackLogWriter {
  #parts: Buffer[] = [];
  #bytes = 0;
  #frames = 0;
  #classes = new Map<string, number>();
  /** Frames taken as blocks so far. */
  written = 0;

  add(f: Pick<AnalyticsFrame, 't_ms' | 'frame_index' | 'tracks'>): void {
    const b = Buffer.allocUnsafe(FRAME_BYTES + BOX_BYTES * f.tracks.length);
    b.writeDoubleLE(f.t_ms, 0);
    b.writeDoubleLE(f.frame_index, 8);
    b.writeUInt32LE(f.tracks.length, 16);
    let o = FRAME_BYTES;
    for (const t of f.tracks) {
      let c = this.#classes.get(t.class);
      if (c === undefined) this.#classes.set(t.class, (c = this.#classes.size));
      b.writeDoubleLE(t.track_id, o);
      b.writeUInt32LE(c, o + 8);
      b.writeDoubleLE(t.box[0], o + 12);
      b.writeDoubleLE(t.box[1], o + 20);
      b.writeDoubleLE(t.box[2], o + 28);
      b.writeDoubleLE(t.box[3], o + 36);
      o += BOX_BYTES;
    }
    this.#parts.push(b);
    this.#bytes += b.length;
    this.#frames++;
  }

  get full(): boolean {
    return this.#frames >= BLOCK_FRAMES || this.#bytes >= BLOCK_BYTES;
  }

  /** The frames added since the last take, as one block (null when none). */
  take(): TrackBlock | null {
    if (this.#frames === 0) return null;
    const block = {
      frames: this.#frames,
      classes: [...this.#classes.keys()],
      bytes: Buffer.concat(this.#parts, this.#bytes),
    };
    this.#parts = [];
    this.#bytes = 0;
    this.#frames = 0;
    this.#classes = new Map();
    this.written += block.frames;
    return block;
  }
}

/** Calls `fn` with each frame of a block (`width`, `height` stamped on it); returns its frame count. */
export function readTrackBlock(
  classes: readonly string[],
  bytes: Uint8Array,
  width: number,
  height: number,
  fn: (f: AnalyticsFrame) => void,
): number {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let o = 0,
    frames = 0;
  while (o + FRAME_BYTES <= v.byteLength) {
    const t_ms = v.getFloat64(o, true),
      frame_index = v.getFloat64(o + 8, true),
      n = v.getUint32(o + 16, true);
    o += FRAME_BYTES;
    const tracks: AnalyticsTrack[] = new Array(n);
    for (let i = 0; i < n; i++, o += BOX_BYTES) {
      tracks[i] = {
        track_id: v.getFloat64(o, true),
        class: classes[v.getUint32(o + 8, true)] ?? '',
        box: [
          v.getFloat64(o + 12, true),
          v.getFloat64(o + 20, true),
          v.getFloat64(o + 28, true),
          v.getFloat64(o + 36, true),
        ],
      };
    }
    fn({ t_ms, frame_index, width, height, tracks });
    frames++;
  }
  return frames;
}
