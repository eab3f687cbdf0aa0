// The one body reader: enforces the route's byte limit (413 as soon as Content-Length or the bytes read
// pass it), a deadline for slow bodies (408), and copies uWS chunks (their ArrayBuffers are only valid
// inside the callback). Rejects when the client goes away mid-body.
import { errors } from '../errors.js';
import type { HttpResponse } from './uws.js';
import type { ResState } from './send.js';

export class ClientGone extends Error {}

export function readBody(res: HttpResponse, st: ResState, opts: { limit: number; contentLength: number | null; timeoutMs: number }): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    if (opts.contentLength !== null && opts.contentLength > opts.limit) {
      reject(errors.payloadTooLarge('request body', opts.limit));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (err: Error | null) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const timer = setTimeout(() => finish(errors.requestTimeout()), opts.timeoutMs);
    st.onAbort.push(() => finish(new ClientGone('client went away while sending the body')));
    res.onData((ab, isLast) => {
      if (done) return;
      size += ab.byteLength;
      if (size > opts.limit) return finish(errors.payloadTooLarge('request body', opts.limit));
      chunks.push(Buffer.from(ab.slice(0)));
      if (isLast) finish(null);
    });
  });
}
