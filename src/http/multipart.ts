// A small, strict multipart/form-data parser (RFC 7578 over RFC 2046 framing) for bodies already in memory
// (the body reader has enforced the byte limit). Strict on purpose: CRLF line endings only, every part needs
// a Content-Disposition of form-data with a name, headers and parts are bounded, and a body that does not end
// with the closing delimiter is refused. Any problem is a 400 (or a 413 for an over-size part) from the
// catalogue, never a partial result.
import { errors } from '../base/errors.js';

export interface Part {
  name: string;
  /** The filename parameter (file parts); null for plain fields. */
  filename: string | null;
  /** The part's Content-Type, lower-cased without parameters; null when absent. */
  contentType: string | null;
  data: Buffer;
}

export interface MultipartLimits {
  /** Most parts accepted (default 100). */
  maxParts?: number;
  /** Most bytes of one part's header block (default 8 KiB). */
  maxHeaderBytes?: number;
  /** Most bytes of a part without a filename (default 1 MiB). */
  maxFieldBytes?: number;
  /** Most bytes of a file part (default: no limit beyond the body's). */
  maxFileBytes?: number;
  /** What a too-large file part is called in the 413 message (default "file"). */
  fileWhat?: string;
}

const CRLF = Buffer.from('\r\n');
const HEADER_END = Buffer.from('\r\n\r\n');
// RFC 2046 bchars, 1 to 70 of them, not ending in a space.
const BOUNDARY_RE = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

function bad(detail: string): Error {
  return errors.invalidBody(`Invalid multipart/form-data body: ${detail}`, null);
}

/** Splits `a; b=c; d="e f"` into a lower-cased first token and lower-cased-name parameters (quotes removed). */
export function parseHeaderParams(value: string): { value: string; params: Map<string, string> } {
  const params = new Map<string, string>();
  const semi = value.indexOf(';');
  const head = (semi < 0 ? value : value.slice(0, semi)).trim().toLowerCase();
  let i = semi < 0 ? value.length : semi + 1;
  while (i < value.length) {
    while (i < value.length && (value[i] === ' ' || value[i] === '\t' || value[i] === ';')) i++;
    if (i >= value.length) break;
    const eq = value.indexOf('=', i);
    if (eq < 0) throw bad(`malformed header parameter "${value.slice(i, i + 40)}"`);
    const name = value.slice(i, eq).trim().toLowerCase();
    if (!/^[A-Za-z0-9!#$&+.^_`|~*-]+$/.test(name)) throw bad(`malformed header parameter name "${name.slice(0, 40)}"`);
    i = eq + 1;
    let v = '';
    if (value[i] === '"') {
      i++;
      let closed = false;
      while (i < value.length) {
        const c = value[i]!;
        if (c === '\\' && i + 1 < value.length) {
          v += value[i + 1];
          i += 2;
          continue;
        }
        if (c === '"') {
          closed = true;
          i++;
          break;
        }
        v += c;
        i++;
      }
      if (!closed) throw bad(`unterminated quoted parameter ${name}`);
    } else {
      const end = value.indexOf(';', i);
      v = value.slice(i, end < 0 ? value.length : end).trim();
      i = end < 0 ? value.length : end;
    }
    if (params.has(name)) throw bad(`header parameter ${name} given twice`);
    params.set(name, v);
  }
  return { value: head, params };
}

/** The boundary of a `multipart/form-data; boundary=...` Content-Type, or a 400. */
export function multipartBoundary(contentType: string): string {
  const { value, params } = parseHeaderParams(contentType);
  if (value !== 'multipart/form-data')
    throw bad(`expected Content-Type multipart/form-data but received ${value || 'none'}`);
  const b = params.get('boundary');
  if (b === undefined) throw bad('the Content-Type has no boundary parameter');
  if (!BOUNDARY_RE.test(b)) throw bad('the boundary must be 1 to 70 characters of the RFC 2046 boundary alphabet');
  return b;
}

/** Index just past optional transport padding (spaces, tabs) and the CRLF that ends a delimiter line. */
function afterDelimiterLine(body: Buffer, i: number): number {
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x09)) i++;
  if (body[i] !== 0x0d || body[i + 1] !== 0x0a) throw bad('a boundary line is not followed by CRLF');
  return i + 2;
}

/** Parses a whole multipart/form-data body; throws the catalogue's 400 (or 413) on anything malformed. */
export function parseMultipart(body: Buffer, boundary: string, limits: MultipartLimits = {}): Part[] {
  const maxParts = limits.maxParts ?? 100;
  const maxHeaderBytes = limits.maxHeaderBytes ?? 8 * 1024;
  const maxFieldBytes = limits.maxFieldBytes ?? 1024 * 1024;
  const maxFileBytes = limits.maxFileBytes ?? Number.POSITIVE_INFINITY;
  const dash = Buffer.from(`--${boundary}`);
  const delimiter = Buffer.from(`\r\n--${boundary}`);

  // The first delimiter opens the body, or follows a preamble (which is ignored) and a CRLF.
  let pos: number;
  if (body.subarray(0, dash.length).equals(dash)) pos = dash.length;
  else {
    const at = body.indexOf(delimiter);
    if (at < 0) throw bad('the opening boundary is missing');
    pos = at + delimiter.length;
  }
  const parts: Part[] = [];
  for (;;) {
    if (body[pos] === 0x2d && body[pos + 1] === 0x2d) {
      // The closing delimiter; what follows is epilogue.
      if (parts.length === 0) throw bad('there are no parts');
      return parts;
    }
    pos = afterDelimiterLine(body, pos);
    if (parts.length === maxParts) throw bad(`more than ${maxParts} parts`);

    // Header block: up to the empty line, bounded before searching the whole body for it.
    const window = body.subarray(pos, pos + maxHeaderBytes + HEADER_END.length);
    if (window[0] === 0x0d && window[1] === 0x0a) throw bad('a part has no Content-Disposition header');
    const headerEnd = window.indexOf(HEADER_END);
    if (headerEnd < 0) {
      throw bad(
        window.length > maxHeaderBytes
          ? `a part's headers are longer than ${maxHeaderBytes} bytes`
          : 'a part ends inside its headers',
      );
    }
    const headerText = window.subarray(0, headerEnd).toString('latin1');
    const dataStart = pos + headerEnd + HEADER_END.length;

    let disposition: string | null = null;
    let contentType: string | null = null;
    for (const line of headerText.split('\r\n')) {
      if (line.startsWith(' ') || line.startsWith('\t')) throw bad('folded header lines are not accepted');
      const colon = line.indexOf(':');
      if (colon <= 0) throw bad(`malformed part header "${line.slice(0, 40)}"`);
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === 'content-disposition') {
        if (disposition !== null) throw bad('a part has two Content-Disposition headers');
        disposition = value;
      } else if (name === 'content-type') {
        if (contentType !== null) throw bad('a part has two Content-Type headers');
        contentType = value;
      }
    }
    if (disposition === null) throw bad('a part has no Content-Disposition header');
    // Header values are bytes; names and filenames are UTF-8 in practice (RFC 7578 section 5.1).
    const cd = parseHeaderParams(Buffer.from(disposition, 'latin1').toString('utf8'));
    if (cd.value !== 'form-data')
      throw bad(`expected Content-Disposition form-data but received ${cd.value.slice(0, 40)}`);
    const name = cd.params.get('name');
    if (name === undefined || name === '') throw bad('a part has no name');
    const filename = cd.params.get('filename') ?? null;

    // The CRLF before a delimiter belongs to it, so an empty part's data may end where its headers do.
    const end = body.indexOf(delimiter, dataStart - CRLF.length);
    if (end < 0) throw bad(`part "${name.slice(0, 60)}" is not terminated by a boundary`);
    const data = body.subarray(dataStart, Math.max(dataStart, end));
    if (filename !== null && data.length > maxFileBytes)
      throw errors.payloadTooLarge(limits.fileWhat ?? 'file', maxFileBytes);
    if (filename === null && data.length > maxFieldBytes)
      throw bad(`field "${name.slice(0, 60)}" is longer than ${maxFieldBytes} bytes`);
    parts.push({
      name,
      filename,
      contentType: contentType === null ? null : parseHeaderParams(contentType).value,
      data,
    });
    pos = end + delimiter.length;
  }
}
