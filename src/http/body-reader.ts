// The one body reader: enforces the route's byte limit (413 as soon as Content-Length or the bytes read
// pass it), a deadline for slow bodies (408), and copies uWS chunks (their ArrayBuffers are only valid
// inside the callback). Rejects when the client goes away mid-body.
import { errors } from '../base/errors.js';
import type { HttpResponse } from './uws.js';
import type { ResState } from './send.js';

export class ClientGone extends Error {}

export function readBody(
  res: HttpResponse,
  st: ResState,
  opts: { limit: number; contentLength: number | null; timeoutMs: number },
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (opts.contentLength !== null && opts.contentLength > opts.limit) {
      reject(errors.payloadTooLarge('request body', opts.limit));
      return;
    }
    // With a Content-Length (every client but chunked uploads), bytes go straight into one buffer of that
    // size: one copy instead of a copy per chunk plus the final concat.
    let whole = opts.contentLength !== null && opts.contentLength > 0 ? Buffer.allocUnsafe(opts.contentLength) : null;
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err: Error | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(err);
      else if (whole) resolve(whole.subarray(0, size));
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const timer = setTimeout(() => finish(errors.requestTimeout()), opts.timeoutMs);
    st.onAbort.push(() => finish(new ClientGone('client went away while sending the body')));
    res.onData((ab, isLast) => {
      if (done) return;
      size += ab.byteLength;
      if (size > opts.limit) return finish(errors.payloadTooLarge('request body', opts.limit));
      if (whole && size > whole.length) {
        chunks.push(whole.subarray(0, size - ab.byteLength));
        whole = null;
      } // longer than declared
      if (whole) whole.set(new Uint8Array(ab), size - ab.byteLength);
      else chunks.push(Buffer.from(ab.slice(0)));
      if (isLast) finish(null);
    });
  });
}
