// TypeScript face of native/core/image (native/addon/image_binding.cc), pixel work for model inputs:
// letterbox + normalise into a float tensor in one pass (on the libuv pool for full frames), or the same
// geometry as RGB bytes for a model that normalises its input itself, batched ROI crops into one tensor, and
// plain RGB resize. Every parameter is checked here (catalogue errors); the addon
// checks them again, and its own errors follow src/native/load.ts.
import { errors } from '../base/errors.js';
import type { RgbImage } from '../media/rgb-image.js';
import { loadAddon, withCallerStack } from './load.js';

/** The pixels these operations read: an RgbImage whose rows may be padded to `stride` bytes (default width * 3). */
type Pixels = RgbImage & { stride?: number };

export type Triple = readonly [number, number, number];

/** How pixels become tensor values: out = (pixel * scale - mean[c]) / std[c], c in output channel order. */
export interface TensorFormat {
  /** 'nchw' (default) or 'nhwc'. */
  layout?: 'nchw' | 'nhwc';
  /** Multiplier applied first. Default 1/255. */
  scale?: number;
  /** Per output channel, after scaling. Default [0, 0, 0]. */
  mean?: Triple;
  /** Per output channel, non-zero. Default [1, 1, 1]. */
  std?: Triple;
  /** Output channel order. Default 'rgb'. */
  channelOrder?: 'rgb' | 'bgr';
}

export interface LetterboxOptions extends TensorFormat {
  width: number;
  height: number;
  /** Padding colour in 0..255 RGB, normalised like pixels. Default [114, 114, 114] (YOLO's grey). */
  pad?: Triple;
  /** Centre the content (default) or put it at the top-left. */
  center?: boolean;
  /** Enlarge frames smaller than the target (default true). */
  scaleUp?: boolean;
  /** Reuse this tensor (3 * width * height floats) instead of allocating one. */
  out?: Float32Array;
}

export interface LetterboxResult {
  tensor: Float32Array;
  dims: [number, number, number, number];
  /** Source -> tensor: x_tensor = x_src * scale + padX (same for y with padY). */
  scale: number;
  padX: number;
  padY: number;
  contentWidth: number;
  contentHeight: number;
}

export interface CropResizeOptions extends TensorFormat {
  width: number;
  height: number;
  out?: Float32Array;
  /**
   * Sample the 2x1 box shrink of the image (shrink(img, 2, 1)'s values, read on the fly): ROIs are in the
   * shrunk image's pixels. The same tensor as shrinking first, without the extra pass and copy.
   */
  halveWidth?: boolean;
}

/** [x1, y1, x2, y2] in source pixels. */
export type Box = readonly [number, number, number, number] | readonly number[];

type NativeFormat = { scale: number; mean: Triple; std: Triple; bgr: boolean; nhwc: boolean };
type NativeLetterbox = { scale: number; padX: number; padY: number; contentWidth: number; contentHeight: number };
/** The slice of the addon this file calls; each function throws (or rejects with) a coded error. */
interface ImageAddon {
  imageLetterbox(
    src: Uint8Array,
    w: number,
    h: number,
    stride: number,
    opts: object,
    out: Float32Array,
  ): NativeLetterbox;
  imageLetterboxAsync(
    src: Uint8Array,
    w: number,
    h: number,
    stride: number,
    opts: object,
    out: Float32Array | Uint8Array,
  ): Promise<NativeLetterbox>;
  imageCropResize(
    src: Uint8Array,
    w: number,
    h: number,
    stride: number,
    rois: Float32Array,
    opts: object,
    out: Float32Array,
  ): undefined;
  imageStretchAsync(
    src: Uint8Array,
    w: number,
    h: number,
    stride: number,
    opts: object,
    out: Float32Array | Uint8Array,
  ): Promise<undefined>;
  imageResize(
    src: Uint8Array,
    w: number,
    h: number,
    stride: number,
    dw: number,
    dh: number,
    out: Uint8Array,
  ): undefined;
  imageShrink(
    src: Uint8Array,
    w: number,
    h: number,
    stride: number,
    fx: number,
    fy: number,
    out: Uint8Array,
  ): undefined;
  imageJpegDecodeAsync(
    bytes: Uint8Array,
    maxPixels: number,
    into?: Uint8Array,
    shrink?: number,
    orientation?: number,
  ): Promise<{ width: number; height: number; data?: Buffer; into?: true } | { unsupported: string }>;
  imageDominantColoursAsync(
    src: Uint8Array,
    w: number,
    h: number,
    stride: number,
    grids: Int32Array,
  ): Promise<Uint8Array>;
  imageColourNames(rgb: Uint8Array): Uint8Array;
}

const MAX_SIDE = 32768;

function side(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > MAX_SIDE) {
    throw errors.invalidParam(name, `Expected integer between 1 and ${MAX_SIDE} for ${name} but received ${String(v)}`);
  }
  return v;
}

function finite(name: string, v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v))
    throw errors.invalidParam(name, `Expected a finite number for ${name} but received ${String(v)}`);
  return v;
}

function triple(name: string, v: unknown, fallback: Triple, nonZero = false): Triple {
  if (v === undefined) return fallback;
  if (
    !Array.isArray(v) ||
    v.length !== 3 ||
    v.some((x) => typeof x !== 'number' || !Number.isFinite(x) || (nonZero && x === 0))
  ) {
    throw errors.invalidParam(
      name,
      `Expected 3 finite${nonZero ? ' non-zero' : ''} numbers for ${name} but received ${JSON.stringify(v)}`,
    );
  }
  return [v[0], v[1], v[2]];
}

function checkImage(img: Pixels): number {
  if (!(img?.data instanceof Uint8Array))
    throw errors.invalidParam('image', 'Expected a Uint8Array of RGB24 pixels for image.data');
  side('image.width', img.width);
  side('image.height', img.height);
  const stride = img.stride ?? img.width * 3;
  if (!Number.isInteger(stride) || stride < img.width * 3) {
    throw errors.invalidParam(
      'image.stride',
      `Expected integer >= ${img.width * 3} for image.stride but received ${String(stride)}`,
    );
  }
  const need = stride * (img.height - 1) + img.width * 3;
  if (img.data.length < need) {
    throw errors.invalidParam(
      'image.data',
      `Expected at least ${need} bytes for a ${img.width}x${img.height} RGB24 image but received ${img.data.length}`,
    );
  }
  return stride;
}

function format(f: TensorFormat): NativeFormat {
  if (f.layout !== undefined && f.layout !== 'nchw' && f.layout !== 'nhwc') {
    throw errors.invalidParam('layout', `Expected one of nchw, nhwc for layout but received ${String(f.layout)}`);
  }
  if (f.channelOrder !== undefined && f.channelOrder !== 'rgb' && f.channelOrder !== 'bgr') {
    throw errors.invalidParam(
      'channelOrder',
      `Expected one of rgb, bgr for channelOrder but received ${String(f.channelOrder)}`,
    );
  }
  return {
    scale: f.scale === undefined ? 1 / 255 : finite('scale', f.scale),
    mean: triple('mean', f.mean, [0, 0, 0]),
    std: triple('std', f.std, [1, 1, 1], true),
    bgr: f.channelOrder === 'bgr',
    nhwc: f.layout === 'nhwc',
  };
}

/** RGB24 output: new memory, or the first `size` bytes of the caller's buffer (a 400 when it is short). */
function outPixels(out: Uint8Array | undefined, size: number): Uint8Array {
  if (out === undefined) return new Uint8Array(size);
  if (!(out instanceof Uint8Array) || out.length < size) {
    throw errors.invalidParam('out', `Expected a Uint8Array of at least ${size} bytes for out`);
  }
  return out.subarray(0, size);
}

function outTensor(out: Float32Array | undefined, size: number): Float32Array {
  if (out === undefined) return new Float32Array(size);
  if (!(out instanceof Float32Array) || out.length < size) {
    throw errors.invalidParam('out', `Expected a Float32Array of at least ${size} elements for out`);
  }
  return out.length === size ? out : out.subarray(0, size);
}

/** The letterbox's checked geometry, as the addon takes it, whatever the output (floats or bytes). */
function letterboxGeometry(img: Pixels, opts: Omit<LetterboxBytesOptions, 'out'>) {
  const stride = checkImage(img);
  const width = side('width', opts.width);
  const height = side('height', opts.height);
  const native = {
    dstWidth: width,
    dstHeight: height,
    pad: triple('pad', opts.pad, [114, 114, 114]),
    center: opts.center ?? true,
    scaleUp: opts.scaleUp ?? true,
  };
  return { stride, width, height, native };
}

function letterboxArgs(img: Pixels, opts: LetterboxOptions) {
  const { stride, width, height, native: geometry } = letterboxGeometry(img, opts);
  const native = { ...geometry, ...format(opts) };
  const tensor = outTensor(opts.out, 3 * width * height);
  const dims: [number, number, number, number] = native.nhwc ? [1, height, width, 3] : [1, 3, height, width];
  return { stride, native, tensor, dims };
}

/** Letterbox + normalise synchronously: fine for small frames; use letterboxAsync for full frames. */
export function letterbox(img: Pixels, opts: LetterboxOptions): LetterboxResult {
  const { stride, native, tensor, dims } = letterboxArgs(img, opts);
  const res = loadAddon<ImageAddon>().imageLetterbox(img.data, img.width, img.height, stride, native, tensor);
  return { tensor, dims, ...res };
}

/**
 * Letterbox + normalise on the libuv pool, so a 1080p frame never blocks the event loop. Do not write to
 * img.data or opts.out until the promise settles.
 */
export async function letterboxAsync(img: Pixels, opts: LetterboxOptions): Promise<LetterboxResult> {
  const { stride, native, tensor, dims } = letterboxArgs(img, opts);
  const res = await withCallerStack(
    loadAddon<ImageAddon>().imageLetterboxAsync(img.data, img.width, img.height, stride, native, tensor),
  );
  return { tensor, dims, ...res };
}

/** The letterbox's geometry without a tensor format: the bytes are RGB, NHWC, not normalised. */
export interface LetterboxBytesOptions {
  width: number;
  height: number;
  /** Padding colour in 0..255 RGB (rounded to whole bytes). Default [114, 114, 114]. */
  pad?: Triple;
  center?: boolean;
  scaleUp?: boolean;
  /** Reuse this memory (3 * width * height bytes) instead of allocating it. */
  out?: Uint8Array;
}

export interface LetterboxBytesResult extends Omit<LetterboxResult, 'tensor'> {
  /** RGB bytes, [1, height, width, 3]. */
  bytes: Uint8Array;
}

/**
 * letterboxAsync's geometry written as bytes, for a model that takes uint8 NHWC RGB and normalises it in its
 * graph (src/inference/uint8-input.ts): each byte is the value letterboxAsync gives with scale 1, no mean or
 * std, RGB, NHWC, rounded to the nearest whole number (halves up), so the model sees what the float path
 * would have fed it up to that rounding. Do not write to img.data or opts.out until the promise settles.
 */
export async function letterboxBytesAsync(img: Pixels, opts: LetterboxBytesOptions): Promise<LetterboxBytesResult> {
  const { stride, width, height, native: geometry } = letterboxGeometry(img, opts);
  const native = { ...geometry, bytes: true };
  const bytes = outPixels(opts.out, 3 * width * height);
  const res = await withCallerStack(
    loadAddon<ImageAddon>().imageLetterboxAsync(img.data, img.width, img.height, stride, native, bytes),
  );
  return { bytes, dims: [1, height, width, 3], ...res };
}

/** Maps a box from letterboxed tensor coordinates back to the source frame (clamped to it). */
export function unletterboxBox(
  box: Box,
  lb: Pick<LetterboxResult, 'scale' | 'padX' | 'padY'>,
  sourceWidth: number,
  sourceHeight: number,
): [number, number, number, number] {
  const fx = (x: number) => Math.min(sourceWidth, Math.max(0, (x - lb.padX) / lb.scale));
  const fy = (y: number) => Math.min(sourceHeight, Math.max(0, (y - lb.padY) / lb.scale));
  return [fx(box[0]), fy(box[1]), fx(box[2]), fy(box[3])];
}

function checkBox(name: string, b: Box): void {
  if (
    !Array.isArray(b) ||
    b.length !== 4 ||
    b.some((v) => typeof v !== 'number' || !Number.isFinite(v)) ||
    !(b[2] > b[0]) ||
    !(b[3] > b[1])
  ) {
    throw errors.invalidParam(
      name,
      `Expected [x1, y1, x2, y2] with x2 > x1 and y2 > y1 for ${name} but received ${JSON.stringify(b)}`,
    );
  }
}

/**
 * Crops every ROI and stretches it to width x height into ONE batch tensor [n, 3, h, w] (or [n, h, w, 3]).
 * ROIs may extend past the frame: samples there repeat the nearest edge pixel.
 */
export function cropResize(
  img: Pixels,
  rois: readonly Box[],
  opts: CropResizeOptions,
): { tensor: Float32Array; dims: [number, number, number, number] } {
  const stride = checkImage(img);
  const width = side('width', opts.width);
  const height = side('height', opts.height);
  const fmt = format(opts);
  const flat = new Float32Array(4 * rois.length);
  rois.forEach((b, i) => {
    checkBox(`rois[${i}]`, b);
    flat.set([b[0], b[1], b[2], b[3]], 4 * i);
  });
  const tensor = outTensor(opts.out, rois.length * 3 * width * height);
  const dims: [number, number, number, number] = fmt.nhwc
    ? [rois.length, height, width, 3]
    : [rois.length, 3, height, width];
  if (rois.length === 0) return { tensor, dims };
  const halveWidth = opts.halveWidth === true;
  if (halveWidth && img.width < 2)
    throw errors.invalidParam('halveWidth', 'Expected an image at least 2 pixels wide for halveWidth');
  loadAddon<ImageAddon>().imageCropResize(
    img.data,
    img.width,
    img.height,
    stride,
    flat,
    { width, height, halveWidth, ...fmt },
    tensor,
  );
  return { tensor, dims };
}

export interface StretchOptions extends TensorFormat {
  width: number;
  height: number;
  out?: Float32Array;
  /**
   * Box-shrink the image by these whole factors first (default 1): each output pixel of the shrink is the
   * rounded mean of shrinkX x shrinkY pixels (shrink()'s values); 2 x 1 is read on the fly (halveWidth's way).
   */
  shrinkX?: number;
  shrinkY?: number;
}

function shrinkFactors(
  img: Pixels,
  opts: { shrinkX?: number; shrinkY?: number },
): { shrinkX: number; shrinkY: number } {
  const shrinkX = opts.shrinkX ?? 1;
  const shrinkY = opts.shrinkY ?? 1;
  for (const [name, f, s] of [
    ['shrinkX', shrinkX, img.width],
    ['shrinkY', shrinkY, img.height],
  ] as const) {
    if (!Number.isInteger(f) || f < 1 || f > s)
      throw errors.invalidParam(name, `Expected a whole shrink factor from 1 to ${s} for ${name}`);
  }
  return { shrinkX, shrinkY };
}

/**
 * The whole image (after the optional box shrink) stretched to width x height and normalised into one tensor
 * [1, 3, h, w] (or [1, h, w, 3]): cropResize's values for the image's full box, computed on the libuv pool so
 * a full frame never blocks the event loop. Do not write to img.data or opts.out until the promise settles.
 */
export async function stretchAsync(
  img: Pixels,
  opts: StretchOptions,
): Promise<{ tensor: Float32Array; dims: [number, number, number, number] }> {
  const stride = checkImage(img);
  const width = side('width', opts.width);
  const height = side('height', opts.height);
  const fmt = format(opts);
  const { shrinkX, shrinkY } = shrinkFactors(img, opts);
  const tensor = outTensor(opts.out, 3 * width * height);
  const dims: [number, number, number, number] = fmt.nhwc ? [1, height, width, 3] : [1, 3, height, width];
  await withCallerStack(
    loadAddon<ImageAddon>().imageStretchAsync(
      img.data,
      img.width,
      img.height,
      stride,
      { width, height, shrinkX, shrinkY, ...fmt },
      tensor,
    ),
  );
  return { tensor, dims };
}

export interface StretchBytesOptions {
  width: number;
  height: number;
  /** Reuse this memory (3 * width * height bytes) instead of allocating it. */
  out?: Uint8Array;
  /** As StretchOptions': a box shrink by whole factors first. */
  shrinkX?: number;
  shrinkY?: number;
}

/**
 * stretchAsync's pass written as bytes (RGB, NHWC, [1, h, w, 3]) for a model that normalises its input in its
 * graph: stretchAsync's values with scale 1, no mean or std, rounded to the nearest whole number (halves up).
 * Do not write to img.data or opts.out until the promise settles.
 */
export async function stretchBytesAsync(
  img: Pixels,
  opts: StretchBytesOptions,
): Promise<{ bytes: Uint8Array; dims: [number, number, number, number] }> {
  const stride = checkImage(img);
  const width = side('width', opts.width);
  const height = side('height', opts.height);
  const { shrinkX, shrinkY } = shrinkFactors(img, opts);
  const bytes = outPixels(opts.out, 3 * width * height);
  await withCallerStack(
    loadAddon<ImageAddon>().imageStretchAsync(
      img.data,
      img.width,
      img.height,
      stride,
      { width, height, shrinkX, shrinkY, bytes: true },
      bytes,
    ),
  );
  return { bytes, dims: [1, height, width, 3] };
}

/** Bilinear resize of RGB24 to width x height (packed, stride = width * 3). */
export function resize(img: Pixels, width: number, height: number, out?: Uint8Array): RgbImage {
  const stride = checkImage(img);
  side('width', width);
  side('height', height);
  const data = outPixels(out, width * height * 3);
  loadAddon<ImageAddon>().imageResize(img.data, img.width, img.height, stride, width, height, data);
  return { data, width, height, channels: 3 };
}

/**
 * Box shrink of RGB24 by whole factors: each output pixel is the mean of an fx x fy block (the last partial
 * column or row of blocks is dropped), so a large frame comes within bilinear sampling's range without
 * skipping pixels. Output packed, (width / fx) x (height / fy), into `out` when given (a scratch buffer).
 */
export function shrink(img: Pixels, fx: number, fy: number, out?: Uint8Array): RgbImage {
  const stride = checkImage(img);
  for (const [name, f, side] of [
    ['fx', fx, img.width],
    ['fy', fy, img.height],
  ] as const) {
    if (!Number.isInteger(f) || f < 1 || f > side)
      throw errors.invalidParam(name, `Expected a whole shrink factor from 1 to ${side} for ${name}`);
  }
  const width = Math.floor(img.width / fx),
    height = Math.floor(img.height / fy);
  const data = outPixels(out, width * height * 3);
  loadAddon<ImageAddon>().imageShrink(img.data, img.width, img.height, stride, fx, fy, data);
  return { data, width, height, channels: 3 };
}

/** A JPEG the native decoder read: packed RGB24. */
export interface DecodedJpeg extends RgbImage {
  data: Buffer;
}

/** The shrinks the JPEG decoder makes while it decodes (a scaled inverse DCT). */
export const JPEG_SHRINKS = [1, 2, 4, 8] as const;
export type JpegShrink = (typeof JPEG_SHRINKS)[number];

/** A JPEG's decoded size at a shrink: ceil of each side over it. */
export function jpegShrunkSize(width: number, height: number, shrink: JpegShrink): { width: number; height: number } {
  return { width: Math.ceil(width / shrink), height: Math.ceil(height / shrink) };
}

/**
 * JPEG bytes to packed RGB24 with libjpeg-turbo on the libuv pool: baseline and progressive, greyscale, YCbCr
 * or RGB. Resolves null for a well-formed file in a form it leaves to a colour-managed decoder (CMYK, YCCK);
 * rejects with ERR_SIGHTFLOW_IMAGE_FAILED and libjpeg's reason for a corrupt or cut-off file, one over
 * maxPixels, or one with more than 500 progressive scans. ICC profiles are not applied; the EXIF orientation is
 * applied when the caller passes it (`orientation`, 1-8, read from the file's header): width and height are then
 * the upright ones.
 * With `into` that holds the whole image the pixels are written there and `data` is its first width * height * 3
 * bytes (else new memory). Do not write to bytes, nor touch `into`, until the promise settles. With `shrink` the
 * image is decoded at 1/shrink of its size (jpegShrunkSize), each pixel the average of those it covers; maxPixels
 * still bounds the file's own size.
 */
export async function decodeJpeg(
  bytes: Uint8Array,
  maxPixels: number,
  into?: Buffer,
  shrink: JpegShrink = 1,
  orientation = 1,
): Promise<DecodedJpeg | null> {
  if (!(bytes instanceof Uint8Array) || bytes.length === 0)
    throw errors.invalidParam('bytes', 'Expected a non-empty Uint8Array of JPEG bytes');
  if (!Number.isInteger(maxPixels) || maxPixels < 1)
    throw errors.invalidParam(
      'maxPixels',
      `Expected a positive integer for maxPixels but received ${String(maxPixels)}`,
    );
  if (into !== undefined && (!Buffer.isBuffer(into) || into.length === 0))
    throw errors.invalidParam('into', 'Expected a non-empty Buffer to decode into');
  if (!JPEG_SHRINKS.includes(shrink))
    throw errors.invalidParam('shrink', `Expected 1, 2, 4 or 8 for shrink but received ${String(shrink)}`);
  if (!Number.isInteger(orientation) || orientation < 1 || orientation > 8)
    throw errors.invalidParam(
      'orientation',
      `Expected an EXIF orientation from 1 to 8 but received ${String(orientation)}`,
    );
  const r = await withCallerStack(
    loadAddon<ImageAddon>().imageJpegDecodeAsync(bytes, maxPixels, into, shrink, orientation),
  );
  if ('unsupported' in r) return null;
  const data = r.into ? into!.subarray(0, r.width * r.height * 3) : r.data!;
  return { data, width: r.width, height: r.height, channels: 3 };
}

/** Where a box's colour is sampled: x0 <= x < x1, y0 <= y < y1, every step-th column and row. */
export interface ColourGrid {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  step: number;
}

/**
 * The colour index (src/media/colour.ts's names) most pixels of each grid have, a tie to the one sampled
 * first, 255 for an empty grid; on the libuv pool. Each grid must lie inside the image. Do not write to
 * img.data until the promise settles.
 */
export async function dominantColourIndicesAsync(img: Pixels, grids: readonly ColourGrid[]): Promise<Uint8Array> {
  const stride = checkImage(img);
  const packed = new Int32Array(grids.length * 5);
  grids.forEach((g, i) => packed.set([g.x0, g.x1, g.y0, g.y1, g.step], i * 5));
  return await withCallerStack(
    loadAddon<ImageAddon>().imageDominantColoursAsync(img.data, img.width, img.height, stride, packed),
  );
}

/** Each RGB triple's colour index (src/media/colour.ts's names), by the addon's copy of the rules. */
export function colourIndices(rgb: Uint8Array): Uint8Array {
  return loadAddon<ImageAddon>().imageColourNames(rgb);
}
