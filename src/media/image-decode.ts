// Bytes -> RGB24 pixels with sharp. The header is read first so a decompression bomb is refused before any
// pixel is decoded, and so the error names the real pixel count rather than sharp's generic "exceeds limit".
import sharp from 'sharp';
import { errors } from '../errors.js';
import type { AcceptedImageFormat } from './image-sniff.js';
import type { RgbImage } from './rgb-image.js';

/** Packed RGB24, width * height * 3 bytes, EXIF orientation applied, alpha flattened on white. */
export interface DecodedImage extends RgbImage {
  data: Buffer;
}

/** Decodes an already-sniffed JPEG, PNG or WEBP. Throws imageTooManyPixels or undecodableImage. */
export async function decodeToRgb(bytes: Buffer, format: AcceptedImageFormat, param: string, maxPixels: number): Promise<DecodedImage> {
  let width: number;
  let height: number;
  try {
    // limitInputPixels:false here only so that metadata reports the size of a bomb instead of refusing it.
    const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
    width = meta.width ?? 0;
    height = meta.height ?? 0;
  } catch (e) {
    throw errors.undecodableImage(param, sharpDetail(e, format));
  }
  if (width <= 0 || height <= 0) throw errors.undecodableImage(param, `the ${format} header has no dimensions`);
  if (width * height > maxPixels) throw errors.imageTooManyPixels(param, width * height, maxPixels);
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

/** sharp/libvips messages are informative ("VipsJpeg: premature end of JPEG image"); keep them short and single-line. */
function sharpDetail(e: unknown, format: string): string {
  const text = (e instanceof Error ? e.message : String(e)).split('\n')[0].trim().slice(0, 200);
  return text ? `${format}: ${text}` : `the ${format} data is corrupt`;
}
