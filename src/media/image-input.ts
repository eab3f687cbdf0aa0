// The one image input path of every vision and vector endpoint: `image` (http(s) URL) or `image_base64`
// (data URI or bare base64), exactly one, turned into RGB24 pixels or a documented 400/413.
import { errors } from '../base/errors.js';
import { decodeBase64 } from './base64.js';
import { decodeToRgb, type DecodedImage, type DecodeFor } from './image-decode.js';
import { fetchMediaBytes } from './fetch.js';
import type { PixelPool } from './pixel-pool.js';
import type { Resolver, UrlPolicy } from './url-policy.js';
import { sniffImageFormat, type AcceptedImageFormat } from './image-sniff.js';

export const IMAGE_MAX_BYTES = 20 * 1024 * 1024;
export const IMAGE_MAX_PIXELS = 50_000_000;
export const IMAGE_FETCH_TIMEOUT_MS = 10_000;
export const IMAGE_MAX_REDIRECTS = 3;
const MAX_URL_LENGTH = 8192;

/**
 * decodeFor for a caller that forwards the bytes and needs only to know they decode, and their size (a VLM):
 * a plain JPEG is decoded as small as the decoder makes it (1/8). Every byte is still read, so a corrupt file is
 * still refused; the pixels are 1/64 of the memory while the caller waits.
 */
export const CHECK_ONLY: DecodeFor = { width: 1, height: 1, fit: 'fill' };

export type ImageInput = { kind: 'url'; url: URL; param: string } | { kind: 'base64'; bytes: Buffer; param: string };

export interface ParseImageInputOptions {
  /** Parameter names used in errors; nested inputs pass e.g. {url: 'items[2].image', base64: 'items[2].image_base64'}. */
  params?: { url: string; base64: string };
  maxBytes?: number;
}

export interface LoadImageOptions {
  /** Client disconnect: the fetch stops and loadImage rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Fetch private/loopback/link-local addresses; default false (the server passes its configuration's policy). */
  allowPrivate?: boolean;
  /** Exact IP addresses allowed even when private (an internal image host). */
  allowAddresses?: readonly string[];
  /** SIGHTFLOW_URL_ALLOW and SIGHTFLOW_URL_DENY blocks (the server passes its configuration's policy). */
  allow?: UrlPolicy['allow'];
  deny?: UrlPolicy['deny'];
  /** DNS seam for tests. */
  resolve?: Resolver;
  maxBytes?: number;
  maxPixels?: number;
  /** Decode into this pool's memory where possible; the caller then calls the image's release() when done. */
  pixels?: PixelPool;
  /** The resize the caller makes: a large JPEG may then be decoded smaller (DecodedImage.shrunk). */
  decodeFor?: DecodeFor;
  timeoutMs?: number;
  maxRedirects?: number;
}

/** The decoded pixels (EXIF orientation applied, alpha flattened on white) and what they were decoded from. */
export interface LoadedImage extends DecodedImage {
  format: AcceptedImageFormat;
  /** The original encoded bytes, for callers that store or forward the image. */
  bytes: Buffer;
}

/** Validates the request fields synchronously; base64 is decoded here so a bad string fails before any work. */
export function parseImageInput(
  body: { image?: unknown; image_base64?: unknown },
  opts: ParseImageInputOptions = {},
): ImageInput {
  const params = opts.params ?? { url: 'image', base64: 'image_base64' };
  const hasUrl = body.image !== undefined && body.image !== null;
  const hasBase64 = body.image_base64 !== undefined && body.image_base64 !== null;
  if (hasUrl && hasBase64) throw errors.imageInputCount('both');
  if (!hasUrl && !hasBase64) throw errors.imageInputCount('neither');
  if (hasUrl) return { kind: 'url', url: parseImageUrl(body.image, params.url), param: params.url };
  return {
    kind: 'base64',
    bytes: decodeBase64(body.image_base64, params.base64, opts.maxBytes ?? IMAGE_MAX_BYTES, 'image'),
    param: params.base64,
  };
}

export function parseImageUrl(value: unknown, param: string): URL {
  if (typeof value !== 'string')
    throw errors.invalidImageUrl(param, `received ${value === null ? 'null' : typeof value}`);
  if (value.length > MAX_URL_LENGTH)
    throw errors.invalidImageUrl(param, `the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw errors.invalidImageUrl(param, 'it is not a valid absolute URL');
  }
  if (url.protocol === 'data:')
    throw errors.invalidImageUrl(param, `a data URI belongs in ${param.replace(/image$/, 'image_base64')}`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw errors.invalidImageUrl(param, `the scheme ${url.protocol.replace(/:$/, '')} is not supported`);
  if (!url.hostname) throw errors.invalidImageUrl(param, 'the URL has no host');
  return url;
}

/** Fetches (for a URL), sniffs and decodes the image. Every failure is an ApiError of the catalogue. */
export async function loadImage(input: ImageInput, opts: LoadImageOptions = {}): Promise<LoadedImage> {
  const maxBytes = opts.maxBytes ?? IMAGE_MAX_BYTES;
  const { bytes } = await fetchImageInput(input, opts);
  if (bytes.length > maxBytes) throw errors.payloadTooLarge('image', maxBytes);
  const sniffed = sniffImageFormat(bytes);
  if (!sniffed.accepted) throw errors.unsupportedImageFormat(input.param, sniffed.name);
  opts.signal?.throwIfAborted();
  const decoded = await decodeToRgb(
    bytes,
    sniffed.format,
    input.param,
    opts.maxPixels ?? IMAGE_MAX_PIXELS,
    opts.pixels,
    opts.decodeFor,
  );
  return { ...decoded, format: sniffed.format, bytes };
}

/** The image at its full size: itself, or its bytes decoded again where it was decoded smaller. */
export async function wholeImage(img: LoadedImage, param: string, maxPixels = IMAGE_MAX_PIXELS): Promise<LoadedImage> {
  if (!img.shrunk) return img;
  return { ...(await decodeToRgb(img.bytes, img.format, param, maxPixels)), format: img.format, bytes: img.bytes };
}

/** The input with its bytes: a URL's fetched now (a caller that waits its turn to decode fetches before it
 * waits, so a slow server does not hold a turn), given bytes as they are. */
export async function fetchImageInput(
  input: ImageInput,
  opts: LoadImageOptions = {},
): Promise<Extract<ImageInput, { kind: 'base64' }>> {
  if (input.kind !== 'url') return input;
  const maxBytes = opts.maxBytes ?? IMAGE_MAX_BYTES;
  const bytes = await fetchMediaBytes(input.url, {
    param: input.param,
    maxBytes,
    timeoutMs: opts.timeoutMs ?? IMAGE_FETCH_TIMEOUT_MS,
    maxRedirects: opts.maxRedirects ?? IMAGE_MAX_REDIRECTS,
    allowPrivate: opts.allowPrivate ?? false,
    allowAddresses: opts.allowAddresses,
    allow: opts.allow,
    deny: opts.deny,
    resolve: opts.resolve,
    signal: opts.signal,
  });
  return { kind: 'base64', bytes, param: input.param };
}
