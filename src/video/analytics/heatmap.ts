// The heatmap of where a task's tracks were (GET /v1/video/tasks/:id/heatmap.png; docs/analytics.md, "Heatmap"):
// one point per track and sampled frame at its anchor, counted on a grid the size of the image, spread by
// three box blurs (close to a Gaussian of about the blur radius), shown as the square root of the density
// relative to the hottest cell (so paths walked once still show beside a crowded spot), coloured blue ->
// cyan -> yellow -> red over a transparent background, to lay over a frame of the video.
import sharp from 'sharp';

/** The image's width when the caller names none (a wider source frame is scaled down to it). */
export const HEATMAP_DEFAULT_WIDTH = 1280;
/** The largest image either way (memory: three float grids of this size at most, 44 MB). */
export const HEATMAP_MAX_WIDTH = 1920;

/** Density below this share of the hottest cell is no heat (blur leaves rounding dust far from any point). */
const ZERO = 1e-9;

const STOPS: ReadonlyArray<readonly [number, number, number, number]> = [
  [0, 0, 0, 255],
  [0.33, 0, 255, 255],
  [0.66, 255, 255, 0],
  [1, 255, 0, 0],
];

export class HeatmapGrid {
  readonly counts: Float32Array;
  points = 0;
  readonly #scale: number;

  /** An image `width` x `height` over a source frame `sourceWidth` pixels wide. */
  constructor(
    readonly width: number,
    readonly height: number,
    sourceWidth: number,
  ) {
    this.counts = new Float32Array(width * height);
    this.#scale = width / sourceWidth;
  }

  /** One anchor in source pixels; a point off the frame (a box partly outside) counts at the nearest edge. */
  add(x: number, y: number): void {
    const cx = Math.min(this.width - 1, Math.max(0, Math.floor(x * this.#scale)));
    const cy = Math.min(this.height - 1, Math.max(0, Math.floor(y * this.#scale)));
    this.counts[cy * this.width + cx]++;
    this.points++;
  }

  /** The blur radius of each of the three passes: about 1/128 of the width, at least 1 pixel. */
  get radius(): number {
    return Math.max(1, Math.round(this.width / 128));
  }

  /** RGBA pixels: transparent where no track was. */
  rgba(): Buffer {
    const { width: w, height: h } = this;
    const a = this.counts.slice();
    const b = new Float32Array(a.length);
    for (let pass = 0; pass < 3; pass++) {
      blur(a, b, h, w, w, 1, this.radius); // rows
      blur(b, a, w, h, 1, w, this.radius); // columns
    }
    let max = 0;
    for (let i = 0; i < a.length; i++) if (a[i]! > max) max = a[i]!;
    const out = Buffer.alloc(w * h * 4);
    if (max <= 0) return out;
    for (let i = 0; i < a.length; i++) {
      const v = a[i]! / max;
      if (v <= ZERO) continue;
      const t = Math.sqrt(v);
      let k = 1;
      while (k < STOPS.length - 1 && STOPS[k]![0] < t) k++;
      const [t0, r0, g0, b0] = STOPS[k - 1]!,
        [t1, r1, g1, b1] = STOPS[k]!;
      const f = (t - t0) / (t1 - t0);
      const o = i * 4;
      out[o] = Math.round(r0 + (r1 - r0) * f);
      out[o + 1] = Math.round(g0 + (g1 - g0) * f);
      out[o + 2] = Math.round(b0 + (b1 - b0) * f);
      out[o + 3] = Math.round(255 * Math.min(1, 0.25 + 0.75 * t));
    }
    return out;
  }

  async png(): Promise<Buffer> {
    return sharp(this.rgba(), { raw: { width: this.width, height: this.height, channels: 4 } })
      .png({ compressionLevel: 6 })
      .toBuffer();
  }
}

/**
 * One box-blur pass along lines of `len` cells: `lines` of them, a line starting every `lineStep` cells,
 * its cells `step` apart (rows: step 1, lineStep width; columns: step width, lineStep 1). Cells beyond the
 * edge count as 0.
 */
function blur(
  src: Float32Array,
  dst: Float32Array,
  lines: number,
  len: number,
  lineStep: number,
  step: number,
  r: number,
): void {
  const inv = 1 / (2 * r + 1);
  for (let l = 0; l < lines; l++) {
    const o = l * lineStep;
    let acc = 0;
    for (let x = 0; x < r && x < len; x++) acc += src[o + x * step]!;
    for (let x = 0; x < len; x++) {
      if (x + r < len) acc += src[o + (x + r) * step]!;
      dst[o + x * step] = acc * inv;
      if (x - r >= 0) acc -= src[o + (x - r) * step]!;
    }
  }
}

/**
 * The image size for a source frame: its own, scaled down (keeping the aspect) to at most `maxWidth` wide and
 * HEATMAP_MAX_WIDTH high (a frame inferred from odd boxes may be very tall).
 */
export function heatmapSize(
  sourceWidth: number,
  sourceHeight: number,
  maxWidth = HEATMAP_DEFAULT_WIDTH,
): { width: number; height: number } {
  const scale = Math.min(1, maxWidth / sourceWidth, HEATMAP_MAX_WIDTH / sourceHeight);
  return { width: Math.max(1, Math.round(sourceWidth * scale)), height: Math.max(1, Math.round(sourceHeight * scale)) };
}
