// The one image input path of every vision and vector endpoint: `image` (http(s) URL) or `image_base64`
// (data URI or bare base64), exactly one, turned into RGB24 pixels or a documented 400/413.
import { errors, type FetchedMedia } from '../errors.js';
import { decodeToRgb } from './image-decode.js';
import { fetchImageBytes } from './image-fetch.js';
import { sniffImageFormat, type AcceptedImageFormat } from './image-sniff.js';

export const IMAGE_MAX_BYTES = 20 * 1024 * 1024;
export const IMAGE_MAX_PIXELS = 50_000_000;
export const IMAGE_FETCH_TIMEOUT_MS = 10_000;
export const IMAGE_MAX_REDIRECTS = 3;
const MAX_URL_LENGTH = 8192;

export type ImageInput =
  | { kind: 'url'; url: URL; param: string }
  | { kind: 'base64'; bytes: Buffer; param: string };

export interface ParseImageInputOptions {
  /** Parameter names used in errors; nested inputs pass e.g. {url: 'items[2].image', base64: 'items[2].image_base64'}. */
  params?: { url: string; base64: string };
  maxBytes?: number;
}

export interface LoadImageOptions {
  /** Client disconnect: the fetch stops and loadImage rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Fetch private/loopback/link-local addresses; defaults to SIGHTFLOW_ALLOW_PRIVATE_URLS=true. */
  allowPrivate?: boolean;
  /** Exact IP addresses allowed even when private (an internal image host). */
  allowAddresses?: readonly string[];
  maxBytes?: number;
  maxPixels?: number;
  timeoutMs?: number;
  maxRedirects?: number;
}

export interface LoadedImage {
  /** Packed RGB24, EXIF orientation applied, alpha flattened on white. */
  data: Buffer;
  width: number;
  height: number;
  channels: 3;
  format: AcceptedImageFormat;
  /** The original encoded bytes, for callers that store or forward the image. */
  bytes: Buffer;
}

/** SIGHTFLOW_ALLOW_PRIVATE_URLS (tests set it); read per call so a process can change it. */
export function allowPrivateUrlsFromEnv(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.SIGHTFLOW_ALLOW_PRIVATE_URLS === 'true';
}

/** Validates the request fields synchronously; base64 is decoded here so a bad string fails before any work. */
export function parseImageInput(body: { image?: unknown; image_base64?: unknown }, opts: ParseImageInputOptions = {}): ImageInput {
  const params = opts.params ?? { url: 'image', base64: 'image_base64' };
  const hasUrl = body.image !== undefined && body.image !== null;
  const hasBase64 = body.image_base64 !== undefined && body.image_base64 !== null;
  if (hasUrl && hasBase64) throw errors.imageInputCount('both');
  if (!hasUrl && !hasBase64) throw errors.imageInputCount('neither');
  if (hasUrl) return { kind: 'url', url: parseImageUrl(body.image, params.url), param: params.url };
  return { kind: 'base64', bytes: decodeBase64Image(body.image_base64, params.base64, opts.maxBytes ?? IMAGE_MAX_BYTES), param: params.base64 };
}

export function parseImageUrl(value: unknown, param: string): URL {
  if (typeof value !== 'string') throw errors.invalidImageUrl(param, `received ${value === null ? 'null' : typeof value}`);
  if (value.length > MAX_URL_LENGTH) throw errors.invalidImageUrl(param, `the URL is longer than ${MAX_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw errors.invalidImageUrl(param, 'it is not a valid absolute URL');
  }
  if (url.protocol === 'data:') throw errors.invalidImageUrl(param, `a data URI belongs in ${param.replace(/image$/, 'image_base64')}`);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw errors.invalidImageUrl(param, `the scheme ${url.protocol.replace(/:$/, '')} is not supported`);
  if (!url.hostname) throw errors.invalidImageUrl(param, 'the URL has no host');
  return url;
}

// A data URI with optional media type and parameters, base64-encoded. A data URI without ";base64" is refused.
const DATA_URI_PREFIX = /^data:(?:[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)?(?:;[a-z0-9!#$&^_.+-]+=[^;,]*)*;base64,/i;
const STANDARD = /^[A-Za-z0-9+/]*={0,2}$/;
const URL_SAFE = /^[A-Za-z0-9_-]*={0,2}$/;

/** Strict base64 (standard or URL-safe alphabet, line breaks tolerated) to bytes, with the size limit checked before decoding. */
export function decodeBase64Image(value: unknown, param: string, maxBytes = IMAGE_MAX_BYTES, media: FetchedMedia = 'image'): Buffer {
  if (typeof value !== 'string') throw errors.invalidBase64(param);
  let payload = value;
  if (/^data:/i.test(value)) {
    const prefix = DATA_URI_PREFIX.exec(value);
    if (!prefix) throw errors.invalidBase64(param);
    payload = value.slice(prefix[0].length);
  }
  // Clients that wrap at 76 columns (MIME) are common; any other stray character is an error.
  if (/\s/.test(payload)) payload = payload.replace(/[\r\n\t ]+/g, '');
  if (payload.length === 0 || !(STANDARD.test(payload) || URL_SAFE.test(payload))) throw errors.invalidBase64(param);
  const padding = payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0;
  if (padding > 0 ? payload.length % 4 !== 0 : payload.length % 4 === 1) throw errors.invalidBase64(param);
  const decodedLength = Math.floor((payload.length * 3) / 4) - padding;
  if (decodedLength > maxBytes) throw errors.payloadTooLarge(media, maxBytes);
  return Buffer.from(payload, 'base64');
}

/** Fetches (for a URL), sniffs and decodes the image. Every failure is an ApiError of the catalogue. */
export async function loadImage(input: ImageInput, opts: LoadImageOptions = {}): Promise<LoadedImage> {
  const maxBytes = opts.maxBytes ?? IMAGE_MAX_BYTES;
  const bytes =
    input.kind === 'url'
      ? await fetchImageBytes(input.url, {
          param: input.param,
          maxBytes,
          timeoutMs: opts.timeoutMs ?? IMAGE_FETCH_TIMEOUT_MS,
          maxRedirects: opts.maxRedirects ?? IMAGE_MAX_REDIRECTS,
          allowPrivate: opts.allowPrivate ?? allowPrivateUrlsFromEnv(),
          allowAddresses: opts.allowAddresses,
          signal: opts.signal,
        })
      : input.bytes;
  if (bytes.length > maxBytes) throw errors.payloadTooLarge('image', maxBytes);
  const sniffed = sniffImageFormat(bytes);
  if (!sniffed.accepted) throw errors.unsupportedImageFormat(input.param, sniffed.name);
  opts.signal?.throwIfAborted();
  const decoded = await decodeToRgb(bytes, sniffed.format, input.param, opts.maxPixels ?? IMAGE_MAX_PIXELS);
  return { ...decoded, format: sniffed.format, bytes };
}
