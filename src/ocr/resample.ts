// Decoding to RgbImage and the two resamplings OCR needs: a whole-image resize for the detector (sharp) and a
// quad -> rectangle warp that rectifies one text line for the recogniser (plain TypeScript, crops are small).
import sharp from 'sharp';
import type { RgbImage } from '../media/rgb-image.js';
import type { Point } from './geometry.js';

export async function resizeRgb(image: RgbImage, width: number, height: number): Promise<RgbImage> {
  if (width === image.width && height === image.height) return image;
  const data = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer();
  return { data, width, height, channels: 3 };
}

/** Decodes any sharp-readable file or buffer to RGB (alpha flattened on white, no EXIF rotation). */
export async function decodeRgb(input: string | Buffer): Promise<RgbImage> {
  const { data, info } = await sharp(input)
    .flatten({ background: '#ffffff' })
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: 3 };
}

/** 3x3 homography mapping the output rectangle (0,0)-(w,h) onto the quad tl, tr, br, bl. */
function rectToQuad(w: number, h: number, q: Point[]): number[] {
  // Solve the 8 unknowns of the projective map from 4 point pairs (Gaussian elimination).
  const src: Point[] = [
    [0, 0],
    [w, 0],
    [w, h],
    [0, h],
  ];
  const a: number[][] = [];
  for (let i = 0; i < 4; i++) {
    const [x, y] = src[i];
    const [u, v] = q[i];
    a.push([x, y, 1, 0, 0, 0, -u * x, -u * y, u]);
    a.push([0, 0, 0, x, y, 1, -v * x, -v * y, v]);
  }
  for (let c = 0; c < 8; c++) {
    let p = c;
    for (let r = c + 1; r < 8; r++) if (Math.abs(a[r][c]) > Math.abs(a[p][c])) p = r;
    [a[c], a[p]] = [a[p], a[c]];
    const d = a[c][c];
    if (Math.abs(d) < 1e-12) return affineFallback(w, h, q);
    for (let k = c; k < 9; k++) a[c][k] /= d;
    for (let r = 0; r < 8; r++) {
      if (r === c) continue;
      const f = a[r][c];
      if (f !== 0) for (let k = c; k < 9; k++) a[r][k] -= f * a[c][k];
    }
  }
  return [a[0][8], a[1][8], a[2][8], a[3][8], a[4][8], a[5][8], a[6][8], a[7][8], 1];
}

// Degenerate quads (collinear corners) still get a usable map from three of their corners.
function affineFallback(w: number, h: number, q: Point[]): number[] {
  const [tl, tr, , bl] = q;
  return [(tr[0] - tl[0]) / w, (bl[0] - tl[0]) / h, tl[0], (tr[1] - tl[1]) / w, (bl[1] - tl[1]) / h, tl[1], 0, 0, 1];
}

/**
 * Samples the quad (tl, tr, br, bl in source pixels) into an outW x outH rectangle. Bilinear, averaged over
 * up to 4x4 sub-samples when the quad is larger than the output so small text is not aliased away.
 */
export function warpQuad(image: RgbImage, quad: Point[], outW: number, outH: number): RgbImage {
  const m = rectToQuad(outW, outH, quad);
  const out = Buffer.alloc(outW * outH * 3);
  const srcW = Math.hypot(quad[1][0] - quad[0][0], quad[1][1] - quad[0][1]);
  const srcH = Math.hypot(quad[3][0] - quad[0][0], quad[3][1] - quad[0][1]);
  const kx = Math.min(4, Math.max(1, Math.round(srcW / outW)));
  const ky = Math.min(4, Math.max(1, Math.round(srcH / outH)));
  const { data, width, height } = image;
  const maxX = width - 1;
  const maxY = height - 1;
  const acc = [0, 0, 0];
  for (let oy = 0; oy < outH; oy++) {
    for (let ox = 0; ox < outW; ox++) {
      acc[0] = acc[1] = acc[2] = 0;
      for (let sy = 0; sy < ky; sy++) {
        const y = oy + (sy + 0.5) / ky;
        for (let sx = 0; sx < kx; sx++) {
          const x = ox + (sx + 0.5) / kx;
          const z = m[6] * x + m[7] * y + m[8];
          // Pixel centres sit at +0.5; clamp to the border like a replicate pad.
          let u = (m[0] * x + m[1] * y + m[2]) / z - 0.5;
          let v = (m[3] * x + m[4] * y + m[5]) / z - 0.5;
          u = u < 0 ? 0 : u > maxX ? maxX : u;
          v = v < 0 ? 0 : v > maxY ? maxY : v;
          const x0 = Math.floor(u);
          const y0 = Math.floor(v);
          const x1 = x0 < maxX ? x0 + 1 : x0;
          const y1 = y0 < maxY ? y0 + 1 : y0;
          const fx = u - x0;
          const fy = v - y0;
          const i00 = (y0 * width + x0) * 3;
          const i01 = (y0 * width + x1) * 3;
          const i10 = (y1 * width + x0) * 3;
          const i11 = (y1 * width + x1) * 3;
          for (let c = 0; c < 3; c++) {
            const top = data[i00 + c] + (data[i01 + c] - data[i00 + c]) * fx;
            const bot = data[i10 + c] + (data[i11 + c] - data[i10 + c]) * fx;
            acc[c] += top + (bot - top) * fy;
          }
        }
      }
      const o = (oy * outW + ox) * 3;
      const n = kx * ky;
      out[o] = Math.round(acc[0] / n);
      out[o + 1] = Math.round(acc[1] / n);
      out[o + 2] = Math.round(acc[2] / n);
    }
  }
  return { data: out, width: outW, height: outH, channels: 3 };
}

/** The same pixels turned half a turn (for upside-down lines). */
export function rotate180(image: RgbImage): RgbImage {
  const n = image.width * image.height;
  const out = Buffer.alloc(n * 3);
  for (let i = 0; i < n; i++) {
    const j = (n - 1 - i) * 3;
    out[i * 3] = image.data[j];
    out[i * 3 + 1] = image.data[j + 1];
    out[i * 3 + 2] = image.data[j + 2];
  }
  return { data: out, width: image.width, height: image.height, channels: 3 };
}
