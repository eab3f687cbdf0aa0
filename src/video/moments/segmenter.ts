// Where a segment ends. "fixed": every segment_ms of stream time. "scene": at a scene change too, when a
// frame's coarse colour layout (8 x 8 cells, mean RGB) differs from the previous sampled frame's by more
// than SCENE_CUT mean absolute difference, so a segment holds one shot and its bounds fall on the cuts.
// Measured on `npm run eval -- moments` (docs/moments.md): scene cuts lift Recall@1 at temporal IoU >= 0.5.
import type { RgbImage } from '../../media/rgb-image.js';

const GRID = 8;
/** Sample points per cell side (16 pixels a cell): enough to average out noise and compression. */
const PER_CELL = 4;
export const SIGNATURE_DIMS = GRID * GRID * 3;
/** Mean absolute difference (0-1) between two layouts that counts as a cut. Re-encoding noise of a still
 * image stays under 0.01; a cut between two unrelated shots is 0.1-0.3; a pan or a walk-by moves it 0.01-0.05. */
export const SCENE_CUT = 0.06;

/** The frame's coarse layout: mean RGB (0-1) of GRID x GRID cells. */
export function layoutSignature(img: RgbImage): Float32Array {
  const out = new Float32Array(SIGNATURE_DIMS);
  const { width, height, data } = img;
  const n = PER_CELL * PER_CELL * 255;
  for (let cy = 0; cy < GRID; cy++) {
    for (let cx = 0; cx < GRID; cx++) {
      let r = 0,
        g = 0,
        b = 0;
      for (let sy = 0; sy < PER_CELL; sy++) {
        const y = Math.min(height - 1, Math.floor(((cy * PER_CELL + sy + 0.5) * height) / (GRID * PER_CELL)));
        for (let sx = 0; sx < PER_CELL; sx++) {
          const x = Math.min(width - 1, Math.floor(((cx * PER_CELL + sx + 0.5) * width) / (GRID * PER_CELL)));
          const o = (y * width + x) * 3;
          r += data[o]!;
          g += data[o + 1]!;
          b += data[o + 2]!;
        }
      }
      const c = (cy * GRID + cx) * 3;
      out[c] = r / n;
      out[c + 1] = g / n;
      out[c + 2] = b / n;
    }
  }
  return out;
}

export function layoutDistance(a: Float32Array, b: Float32Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += Math.abs(a[i]! - b[i]!);
  return d / a.length;
}

export class Segmenter {
  #startMs: number | null = null;
  #last: Float32Array | null = null;

  constructor(
    private readonly mode: 'scene' | 'fixed',
    private readonly segmentMs: number,
  ) {}

  /** Whether the frame at `timeMs` starts a new segment: 'shot' where a new shot starts (the first frame, a
   * scene change; in fixed mode every segment), 'length' where a long shot is split at segment_ms, else false. */
  startsSegment(signature: Float32Array | null, timeMs: number): false | 'shot' | 'length' {
    const prev = this.#last;
    this.#last = signature;
    let cut: false | 'shot' | 'length' = false;
    if (this.#startMs === null || timeMs < this.#startMs) cut = 'shot';
    else if (this.mode === 'scene' && prev && signature && layoutDistance(prev, signature) > SCENE_CUT) cut = 'shot';
    else if (timeMs - this.#startMs >= this.segmentMs) cut = this.mode === 'scene' ? 'length' : 'shot';
    if (cut) this.#startMs = timeMs;
    return cut;
  }

  /** Where the current segment started (null before the first frame): with the last frame's signature, all a
   * segmenter holds, so a task continued on another worker cuts where an undisturbed one does. */
  get startMs(): number | null {
    return this.#startMs;
  }

  restore(startMs: number | null, last: Float32Array | null): void {
    this.#startMs = startMs;
    this.#last = last;
  }
}
