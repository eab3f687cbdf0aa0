// The visual part of an image's vector: a tiny colour layout (6x6 cells, opponent colours) and a 16x16
// grey structure map, both folded left-right (cell j + its mirror) so a flipped copy gives the same
// descriptor. Coarse on purpose: resizing, JPEG artefacts and a mild crop barely move it, which is what
// lets near-duplicates find each other. Resampling runs in sharp (libvips, off the event loop).
import sharp from 'sharp';
import { normalize } from './embedder.js';

const COLOUR_GRID = 6;
const GREY = 16;
export const VISUAL_DIMS = COLOUR_GRID * (COLOUR_GRID / 2) * 3 + GREY * (GREY / 2);
const COLOUR_SHARE = 0.45;

export async function visualDescriptor(img: {
  data: Uint8Array;
  width: number;
  height: number;
}): Promise<Float32Array> {
  const raw = { raw: { width: img.width, height: img.height, channels: 3 as const } };
  const [colour, grey] = await Promise.all([
    sharp(img.data, raw).resize(COLOUR_GRID, COLOUR_GRID, { fit: 'fill', kernel: 'cubic' }).raw().toBuffer(),
    sharp(img.data, raw).resize(GREY, GREY, { fit: 'fill', kernel: 'cubic' }).greyscale().raw().toBuffer(),
  ]);
  const half = COLOUR_GRID / 2;
  const c = new Float32Array(COLOUR_GRID * half * 3);
  for (let y = 0; y < COLOUR_GRID; y++) {
    for (let x = 0; x < COLOUR_GRID; x++) {
      const o = (y * COLOUR_GRID + x) * 3;
      const [r, g, b] = [colour[o]!, colour[o + 1]!, colour[o + 2]!];
      const fx = x < half ? x : COLOUR_GRID - 1 - x;
      const base = (y * half + fx) * 3;
      c[base]! += ((r + g + b) / 3 - 128) / 128;
      c[base + 1]! += (r - g) / 128;
      c[base + 2]! += ((r + g) / 2 - b) / 128;
    }
  }
  const gh = GREY / 2;
  const s = new Float32Array(GREY * gh);
  let mean = 0;
  for (let i = 0; i < grey.length; i++) mean += grey[i]!;
  mean /= grey.length;
  for (let y = 0; y < GREY; y++) {
    for (let x = 0; x < GREY; x++) {
      const fx = x < gh ? x : GREY - 1 - x;
      s[y * gh + fx]! += grey[y * GREY + x]! - mean;
    }
  }
  normalize(c);
  normalize(s);
  const out = new Float32Array(VISUAL_DIMS);
  const wc = Math.sqrt(COLOUR_SHARE);
  const ws = Math.sqrt(1 - COLOUR_SHARE);
  for (let i = 0; i < c.length; i++) out[i] = c[i]! * wc;
  for (let i = 0; i < s.length; i++) out[c.length + i] = s[i]! * ws;
  return out;
}
