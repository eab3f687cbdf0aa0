// Bytes -> RGB24 pixels. The header is read first (a JPEG's by jpeg-header.ts where it can, else sharp) so a
// decompression bomb is refused before any pixel is decoded, and so the error names the real pixel count
// rather than sharp's generic "exceeds limit". Plain sRGB or grey JPEGs (no profile but the standard sRGB one:
// most photos; turned upright by their EXIF orientation) then decode with libjpeg-turbo in the addon, at about
// a quarter of the CPU of sharp's pipeline, with identical pixels (docs/capacity.md, "JPEG decoding");
// everything else goes through sharp, which colour-manages. A caller that resizes the image down anyway
// (detect) says to what (DecodeFor), and a plain JPEG twice that size or more is decoded smaller while it is
// decoded.
import sharp, { type Metadata } from 'sharp';
import { errors } from '../base/errors.js';
import { isNativeError } from '../native/load.js';
import { decodeJpeg, JPEG_SHRINKS, jpegShrunkSize, type JpegShrink } from '../native/image.js';
import { iccKind, isPlainJpeg, readJpegHeader } from './jpeg-header.js';
import type { AcceptedImageFormat } from './image-sniff.js';
import type { PixelPool } from './pixel-pool.js';
import type { RgbImage } from './rgb-image.js';

/** Packed RGB24, width * height * 3 bytes, EXIF orientation applied, alpha flattened on white. */
export interface DecodedImage extends RgbImage {
  data: Buffer;
  /**
   * Set when the pixels are a pool's memory: call it once nothing reads them any more (the pool reuses them).
   * Not calling it is safe (the memory is collected).
   */
  release?: () => void;
  /**
   * Set when a JPEG was decoded smaller (DecodeFor): pixel (x, y) here is the average of the file's upright
   * pixels [shrink * x + offsetX, + shrink) x [shrink * y + offsetY, + shrink) that lie in it, and width and
   * height are the file's own, upright. The offsets are 0 but on an axis the photo is stored mirrored on (EXIF
   * orientations), where its partial block of pixels comes first: then -(the part of a block it lacks).
   */
  shrunk?: { shrink: Exclude<JpegShrink, 1>; width: number; height: number; offsetX: number; offsetY: number };
}

/**
 * What a caller makes of the pixels: a resize to `width` x `height`, the whole image inside it with its aspect
 * kept ('contain', a letterbox) or stretched to it ('fill').
 */
export interface DecodeFor {
  width: number;
  height: number;
  fit: 'contain' | 'fill';
}

/**
 * The largest shrink the JPEG decoder can make that leaves the image at least as large as the caller's resize
 * makes it on each axis, so the resize after it still only shrinks (by less than 2x on the axis that decides
 * the shrink) and no detail it would keep is lost.
 * Why: the entropy decoding aside, a decode's CPU and memory go with the pixels it makes; a 12-megapixel photo
 * for a 640-pixel detector needs a sixteenth of them (docs/capacity.md, "JPEG decoding").
 */
export function decodeShrink(width: number, height: number, target: DecodeFor): JpegShrink {
  const room =
    target.fit === 'contain'
      ? Math.max(width / target.width, height / target.height)
      : Math.min(width / target.width, height / target.height);
  let best: JpegShrink = 1;
  for (const d of JPEG_SHRINKS) if (d <= room) best = d;
  return best;
}

/** The image's own size, whatever size it was decoded at. */
export function sourceSize(img: DecodedImage): { width: number; height: number } {
  return img.shrunk ?? img;
}

/**
 * Decodes an already-sniffed JPEG, PNG or WEBP. Throws imageTooManyPixels or undecodableImage. With `pool`,
 * a JPEG the native decoder reads goes into the pool's memory (see DecodedImage.release). With `decodeFor`, a
 * JPEG the native decoder reads may come back smaller (see DecodedImage.shrunk).
 */
export async function decodeToRgb(
  bytes: Buffer,
  format: AcceptedImageFormat,
  param: string,
  maxPixels: number,
  pool?: PixelPool,
  decodeFor?: DecodeFor,
): Promise<DecodedImage> {
  // A JPEG's own header where it is plain to read (most photos); else sharp's reading of it.
  const header = format === 'jpeg' ? readJpegHeader(bytes) : null;
  let width: number, height: number, plain: boolean, orientation: number;
  if (header) {
    ({ width, height, orientation } = header);
    plain = isPlainJpeg(header);
  } else {
    let meta: Metadata;
    try {
      // limitInputPixels:false here only so that metadata reports the size of a bomb instead of refusing it.
      meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    } catch (e) {
      throw errors.undecodableImage(param, sharpDetail(e, format));
    }
    width = meta.width ?? 0;
    height = meta.height ?? 0;
    orientation = meta.orientation ?? 1;
    plain = format === 'jpeg' && plainJpeg(meta);
  }
  if (width <= 0 || height <= 0) throw errors.undecodableImage(param, `the ${format} header has no dimensions`);
  if (width * height > maxPixels) throw errors.imageTooManyPixels(param, width * height, maxPixels);
  // Upright: EXIF orientations 5-8 store the photo turned a quarter.
  const upright = orientation >= 5 && orientation <= 8 ? { width: height, height: width } : { width, height };
  if (plain) {
    const shrink = decodeFor ? decodeShrink(upright.width, upright.height, decodeFor) : 1;
    const size = jpegShrunkSize(width, height, shrink);
    const shrunk = shrink === 1 ? undefined : { shrink, ...upright, ...shrunkOffsets(orientation, upright, shrink) };
    const into = pool?.take(size.width * size.height * 3);
    let img: Awaited<ReturnType<typeof decodeJpeg>>;
    try {
      img = await decodeJpeg(bytes, maxPixels, into, shrink, orientation);
    } catch (e) {
      if (into) pool!.give(into);
      if (isNativeError(e, 'IMAGE'))
        throw errors.undecodableImage(param, `jpeg: ${e.message.split('\n')[0].slice(0, 200)}`);
      throw e;
    }
    if (img && into && img.data.buffer === into.buffer) {
      let given = false;
      return {
        ...img,
        shrunk,
        release: () => {
          if (!given) {
            given = true;
            pool!.give(into);
          }
        },
      };
    }
    if (into) pool!.give(into);
    if (img) return shrunk ? { ...img, shrunk } : img;
  }
  try {
    // failOn 'truncated': a cut-off JPEG otherwise decodes "successfully" with grey rows where data was missing.
    const { data, info } = await sharp(bytes, { limitInputPixels: maxPixels, failOn: 'truncated' })
      .rotate()
      .flatten({ background: '#ffffff' })
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (info.channels !== 3) throw new Error(`expected 3 channels after conversion, got ${info.channels}`);
    return { data, width: info.width, height: info.height, channels: 3 };
  } catch (e) {
    throw errors.undecodableImage(param, sharpDetail(e, format));
  }
}

/**
 * Where a shrunk decode's first pixel starts in the upright file (DecodedImage.shrunk): the decoder averages
 * whole blocks from the stored image's top-left, so on an axis the upright image runs backwards along (EXIF
 * orientations 2, 3, 6 and 7 horizontally, 3, 4, 7 and 8 vertically) the partial block comes first.
 */
function shrunkOffsets(
  orientation: number,
  upright: { width: number; height: number },
  shrink: number,
): { offsetX: number; offsetY: number } {
  const lack = (side: number) => side - shrink * Math.ceil(side / shrink);
  return {
    offsetX: [2, 3, 6, 7].includes(orientation) ? lack(upright.width) : 0,
    offsetY: [3, 4, 7, 8].includes(orientation) ? lack(upright.height) : 0,
  };
}

/** The plain-JPEG rule (jpeg-header.ts) on sharp's reading of a header; a colour space other than sRGB or grey is not plain. */
function plainJpeg(meta: Metadata): boolean {
  return (
    (meta.space === 'srgb' || meta.space === 'b-w') &&
    isPlainJpeg({ orientation: meta.orientation ?? 1, icc: iccKind(meta.icc), components: meta.channels as 1 | 3 | 4 })
  );
}

/**
 * sharp/libvips messages are informative ("VipsJpeg: premature end of JPEG image"); keep them short and
 * single-line, without the library's name, so both decoders word the same fault alike.
 */
function sharpDetail(e: unknown, format: string): string {
  const text = (e instanceof Error ? e.message : String(e))
    .split('\n')[0]
    .trim()
    .replace(/^vips[a-z]*: /i, '')
    .slice(0, 200);
  return text ? `${format}: ${text}` : `the ${format} data is corrupt`;
}
