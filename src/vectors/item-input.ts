// One item or search query: exactly one of image, image_base64, text, audio. parseContent checks the fields
// (and decodes base64) before any work, so a bad item 400s the request without fetching or embedding;
// loadContent fetches/decodes what embedding needs and the bytes the blob store keeps.
import type { PixelPool } from '../media/pixel-pool.js';
import { errors } from '../base/errors.js';
import { decodeBase64 } from '../media/base64.js';
import { fetchMediaBytes } from '../media/fetch.js';
import type { Resolver, UrlPolicy } from '../media/url-policy.js';
import {
  loadImage,
  parseImageInput,
  parseImageUrl,
  type ImageInput,
  IMAGE_FETCH_TIMEOUT_MS,
  IMAGE_MAX_REDIRECTS,
} from '../media/image-input.js';
import type { EmbedInput } from './embedders/embedder.js';
import { AUDIO_MAX_BYTES, sniffAudio } from './embedders/speech.js';
import { MAX_TEXT_CHARS } from './schemas.js';

const FIELDS = ['image', 'image_base64', 'text', 'audio'] as const;

export type ParsedContent =
  | { kind: 'text'; text: string }
  | { kind: 'image'; input: ImageInput }
  | { kind: 'audio'; url?: URL; bytes?: Buffer; param: string };

export interface LoadedContent {
  embed: EmbedInput;
  content_type: 'image' | 'text' | 'audio';
  text: string | null;
  /** Bytes for the blob store (media only) and their MIME type and file extension. */
  blob?: { bytes: Buffer; mime: string; ext: string };
}

const present = (v: unknown) => v !== undefined && v !== null;

/** The kind of content a body carries when it carries exactly one, without decoding or checking it (null
 * otherwise: parseContent then says what is wrong). */
export function contentKind(
  body: Partial<Record<(typeof FIELDS)[number], string | null>>,
): ParsedContent['kind'] | null {
  const given = FIELDS.filter((f) => present(body[f]));
  if (given.length !== 1) return null;
  return given[0] === 'text' ? 'text' : given[0] === 'audio' ? 'audio' : 'image';
}

/** `prefix` is '' for a search body and 'items[3].' for an item. */
export function parseContent(
  body: Partial<Record<(typeof FIELDS)[number], string | null>>,
  prefix: string,
): ParsedContent {
  const given = FIELDS.filter((f) => present(body[f]));
  const where = prefix ? prefix.slice(0, -1) : 'the query';
  if (given.length !== 1) {
    const got = given.length === 0 ? 'none' : given.join(', ');
    throw errors.invalidParam(
      given.length === 0 ? (prefix ? prefix.slice(0, -1) : 'text') : `${prefix}${given[1]}`,
      `Expected exactly one of image, image_base64, text, audio for ${where} but received ${got}`,
    );
  }
  const field = given[0]!;
  if (field === 'text') {
    const text = body.text!;
    if (text.trim().length === 0 || text.length > MAX_TEXT_CHARS) {
      throw errors.invalidParam(
        `${prefix}text`,
        `Expected a non-empty string of at most ${MAX_TEXT_CHARS} characters for ${prefix}text but received ${text.length === 0 ? 'an empty string' : text.trim().length === 0 ? 'only whitespace' : `${text.length} characters`}`,
      );
    }
    return { kind: 'text', text };
  }
  if (field === 'audio') {
    const param = `${prefix}audio`;
    const v = body.audio!;
    if (/^https?:\/\//i.test(v)) return { kind: 'audio', url: parseImageUrl(v, param), param };
    const bytes = decodeBase64(v, param, AUDIO_MAX_BYTES, 'audio');
    if (!sniffAudio(bytes)) throw errors.undecodableAudio(param, 'the data is not in a supported audio format');
    return { kind: 'audio', bytes, param };
  }
  return {
    kind: 'image',
    input: parseImageInput(body, { params: { url: `${prefix}image`, base64: `${prefix}image_base64` } }),
  };
}

const AUDIO_MIME = { wav: 'audio/wav', mp3: 'audio/mpeg', flac: 'audio/flac', ogg: 'audio/ogg' } as const;

/**
 * `opts`: the URL policy of image and audio URLs (the server's configuration) and the client's abort signal;
 * `pixels`, a pool an image's pixels may be decoded into (the caller gives them back: see releaseAfter).
 */
export async function loadContent(
  c: ParsedContent,
  opts: UrlPolicy & { signal?: AbortSignal; resolve?: Resolver; pixels?: PixelPool },
): Promise<LoadedContent> {
  if (c.kind === 'text') return { embed: { kind: 'text', text: c.text }, content_type: 'text', text: c.text };
  if (c.kind === 'image') {
    const image = await loadImage(c.input, opts);
    const ext = image.format === 'jpeg' ? 'jpg' : image.format;
    return {
      embed: { kind: 'image', image },
      content_type: 'image',
      text: null,
      blob: { bytes: image.bytes, mime: `image/${image.format}`, ext },
    };
  }
  const bytes =
    c.bytes ??
    (await fetchMediaBytes(c.url!, {
      param: c.param,
      media: 'audio',
      maxBytes: AUDIO_MAX_BYTES,
      timeoutMs: IMAGE_FETCH_TIMEOUT_MS,
      maxRedirects: IMAGE_MAX_REDIRECTS,
      ...opts,
    }));
  const format = sniffAudio(bytes);
  if (!format) throw errors.undecodableAudio(c.param, 'the data is not in a supported audio format');
  return {
    embed: { kind: 'audio', bytes, param: c.param },
    content_type: 'audio',
    text: null,
    blob: { bytes, mime: AUDIO_MIME[format], ext: format },
  };
}
