// Base64 media input (image_base64, base64 audio items, video_base64): a data URI or bare base64, decoded
// strictly so a malformed string is a 400 naming the field, and size-checked before any byte is decoded.
import { errors, type FetchedMedia } from '../base/errors.js';

// A data URI with optional media type and parameters, base64-encoded. A data URI without ";base64" is refused.
const DATA_URI_PREFIX = /^data:(?:[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+)?(?:;[a-z0-9!#$&^_.+-]+=[^;,]*)*;base64,/i;
// Any character outside an alphabet (padding included). A negated class finds one several times faster
// than matching the whole string against an anchored pattern (docs/capacity.md, "A small request's CPU").
const NOT_STANDARD = /[^A-Za-z0-9+/=]/;
const NOT_URL_SAFE = /[^A-Za-z0-9_=-]/;

/**
 * Strict base64 (standard or URL-safe alphabet, line breaks tolerated, optional data URI prefix) to bytes.
 * Throws invalidBase64(param), or payloadTooLarge(media) when it would decode to more than `maxBytes`.
 * A Buffer is bytes that arrived as binary (a multipart or raw upload): only its size is checked.
 */
export function decodeBase64(value: unknown, param: string, maxBytes: number, media: FetchedMedia): Buffer {
  if (Buffer.isBuffer(value)) {
    if (value.length > maxBytes) throw errors.payloadTooLarge(media, maxBytes);
    return value;
  }
  if (typeof value !== 'string') throw errors.invalidBase64(param);
  let payload = value;
  if (/^data:/i.test(value)) {
    const prefix = DATA_URI_PREFIX.exec(value);
    if (!prefix) throw errors.invalidBase64(param);
    payload = value.slice(prefix[0].length);
  }
  // Clients that wrap at 76 columns (MIME) are common; any other stray character is an error. Only a string
  // that fails both alphabets is searched for whitespace and scanned again: the common unwrapped one is
  // scanned once (a second scan would cost the main thread that time again for every image).
  const foreign = (v: string) => NOT_STANDARD.test(v) && NOT_URL_SAFE.test(v);
  if (foreign(payload)) {
    if (/\s/.test(payload)) payload = payload.replace(/[\r\n\t ]+/g, '');
    if (foreign(payload)) throw errors.invalidBase64(param);
  }
  if (payload.length === 0) throw errors.invalidBase64(param);
  // Padding: at most two '=', and only at the end.
  const eq = payload.indexOf('=');
  if (eq >= 0 && (eq < payload.length - 2 || payload.charCodeAt(payload.length - 1) !== 61))
    throw errors.invalidBase64(param);
  const padding = payload.endsWith('==') ? 2 : payload.endsWith('=') ? 1 : 0;
  if (padding > 0 ? payload.length % 4 !== 0 : payload.length % 4 === 1) throw errors.invalidBase64(param);
  const decodedLength = Math.floor((payload.length * 3) / 4) - padding;
  if (decodedLength > maxBytes) throw errors.payloadTooLarge(media, maxBytes);
  return Buffer.from(payload, 'base64');
}
