// GET /v1/files/<key>?expires=&sig=: everything but the byte streaming. Signature first (403), then the blob
// (404), then the Range header (206/416), so the HTTP layer only streams `path` from `start` to `end`.
import { errors } from '../base/errors.js';
import { isValidBlobKey, type BlobStore } from '../store/blobs.js';
import { verify } from '../store/presign.js';

export interface FileRequest {
  /** The key as it appears after /v1/files/, percent-decoded. */
  key: string;
  query: URLSearchParams;
  rangeHeader?: string;
  secret: string | Buffer;
  /** Milliseconds since the epoch; tests pin it. */
  now?: number;
}

export interface FileResponse {
  status: 200 | 206 | 416;
  headers: Record<string, string>;
  /** First byte to send. */
  start: number;
  /** Last byte to send, inclusive; start - 1 when there is nothing to send (empty file, 416). */
  end: number;
  path: string;
  size: number;
}

type ByteRange = { start: number; end: number } | 'unsatisfiable' | null;

/** Resolves a file request or throws 403 invalid_signature / 404 not_found. */
export async function resolveFileRequest(store: BlobStore, req: FileRequest): Promise<FileResponse> {
  const now = req.now ?? Date.now();
  const checked = verify(req.key, req.query.get('expires'), req.query.get('sig'), req.secret, now);
  if (!checked.ok) {
    if (checked.reason === 'missing')
      throw errors.invalidSignature('The file link is missing its expires or sig parameter');
    if (checked.reason === 'expired')
      throw errors.invalidSignature(
        `The file link expired at ${new Date(Number(req.query.get('expires')) * 1000).toISOString()}`,
      );
    throw errors.invalidSignature('The file link signature does not match');
  }
  const info = isValidBlobKey(req.key) ? await store.stat(req.key) : null;
  if (!info) throw errors.notFound('file');

  const size = info.size;
  const base: Record<string, string> = {
    'Accept-Ranges': 'bytes',
    // Caches may keep the bytes only while the link itself is valid.
    'Cache-Control': `private, max-age=${Math.max(0, checked.expires - Math.floor(now / 1000))}`,
    'Last-Modified': info.modifiedAt.toUTCString(),
    'X-Content-Type-Options': 'nosniff',
  };
  const range = req.rangeHeader === undefined ? null : parseRange(req.rangeHeader, size);
  if (range === 'unsatisfiable') {
    return {
      status: 416,
      headers: { ...base, 'Content-Range': `bytes */${size}`, 'Content-Length': '0' },
      start: 0,
      end: -1,
      path: info.path,
      size,
    };
  }
  const headers = { ...base, 'Content-Type': info.contentType };
  if (range === null)
    return {
      status: 200,
      headers: { ...headers, 'Content-Length': String(size) },
      start: 0,
      end: size - 1,
      path: info.path,
      size,
    };
  return {
    status: 206,
    headers: {
      ...headers,
      'Content-Length': String(range.end - range.start + 1),
      'Content-Range': `bytes ${range.start}-${range.end}/${size}`,
    },
    start: range.start,
    end: range.end,
    path: info.path,
    size,
  };
}

/**
 * One byte range (RFC 9110 14.1.2) clamped to the file. Null means "ignore the header and send everything":
 * other units, syntax errors and multi-range requests (allowed by the RFC, and players ask for one range).
 */
export function parseRange(header: string, size: number): ByteRange {
  const m = /^\s*bytes\s*=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header);
  if (!m) return null;
  const [, first, last] = m;
  if (first === '' && last === '') return null;
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (last !== '' && Number(last) < start) return null;
  if (start >= size) return 'unsatisfiable';
  return { start, end: last === '' ? size - 1 : Math.min(Number(last), size - 1) };
}
