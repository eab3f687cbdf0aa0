// A front process passes every request that is not an image route to `serve` over loopback, streamed both
// ways with backpressure (uploads, downloads, server-sent events). The owner then answers it exactly as it
// would on the public port: routing, auth, limits and its request log are its own.
import http from 'node:http';
import { errors } from '../../base/errors.js';
import type { HttpRequest, HttpResponse } from '../uws.js';

/** Answers up to this size are buffered and written in one call (uWS then sends a Content-Length). */
const BUFFER_UP_TO = 1024 * 1024;
/** Headers of one hop, never forwarded; uWS writes its own Date, Content-Length and chunking. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'content-length',
  'date',
]);
const NO_BODY_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface Proxy {
  handle: (res: HttpResponse, req: HttpRequest) => void;
  /** Requests passed on and not yet answered (a stopping front waits for them). */
  inFlight: () => number;
}

export function proxyTo(ownerPort: number): Proxy {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 256 });
  let inFlight = 0;
  const handle = (res: HttpResponse, req: HttpRequest): void => {
    const method = req.getMethod().toUpperCase();
    const q = req.getQuery();
    const path = req.getUrl() + (q ? `?${q}` : '');
    const headers: Record<string, string> = {};
    req.forEach((k, v) => {
      if (!HOP_BY_HOP.has(k) || k === 'content-length') headers[k] = v;
    });
    const hasBody =
      !NO_BODY_METHODS.has(method) &&
      ((headers['content-length'] !== undefined && headers['content-length'] !== '0') ||
        req.getHeader('transfer-encoding') !== '');
    let aborted = false;
    let started = false;
    inFlight++;
    const up = http.request({ host: '127.0.0.1', port: ownerPort, method, path, headers, agent });
    up.on('close', () => inFlight--);
    res.onAborted(() => {
      aborted = true;
      up.destroy();
    });
    up.on('response', (answer) =>
      relay(
        res,
        method,
        answer,
        () => aborted,
        () => (started = true),
      ),
    );
    up.on('error', () => {
      if (aborted || started) return;
      const e = errors.notReady('The server behind this process');
      res.cork(() => {
        res.writeStatus(`${e.status} Service Unavailable`);
        for (const [k, v] of Object.entries(e.headers)) res.writeHeader(k, v);
        res.writeHeader('content-type', 'application/json');
        res.end(JSON.stringify(e.toBody()));
      });
    });
    if (!hasBody) {
      up.end();
      return;
    }
    res.onData((chunk, isLast) => {
      // uWS reuses the chunk's memory once this returns: copy it.
      const ok = up.write(Buffer.from(chunk.slice(0)));
      if (isLast) up.end();
      else if (!ok) {
        res.pause();
        up.once('drain', () => {
          if (!aborted) res.resume();
        });
      }
    });
  };
  return { handle, inFlight: () => inFlight };
}

function relay(
  res: HttpResponse,
  method: string,
  answer: http.IncomingMessage,
  isAborted: () => boolean,
  onStart: () => void,
): void {
  if (isAborted()) {
    answer.destroy();
    return;
  }
  onStart();
  const status = `${answer.statusCode} ${answer.statusMessage ?? ''}`.trim();
  const head = () => {
    res.writeStatus(status);
    for (let i = 0; i < answer.rawHeaders.length; i += 2) {
      const k = answer.rawHeaders[i]!;
      if (!HOP_BY_HOP.has(k.toLowerCase())) res.writeHeader(k, answer.rawHeaders[i + 1]!);
    }
  };
  const length = Number(answer.headers['content-length'] ?? NaN);
  if (method === 'HEAD' || answer.statusCode === 204 || answer.statusCode === 304) {
    answer.resume();
    answer.on('end', () => {
      if (isAborted()) return;
      res.cork(() => {
        head();
        if (method === 'HEAD' && Number.isFinite(length)) res.endWithoutBody(length);
        else res.endWithoutBody();
      });
    });
    return;
  }
  if (Number.isFinite(length) && length <= BUFFER_UP_TO) {
    const parts: Buffer[] = [];
    answer.on('data', (c: Buffer) => parts.push(c));
    answer.on('end', () => {
      if (isAborted()) return;
      res.cork(() => {
        head();
        res.end(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
      });
    });
    return;
  }
  // Larger answers of known length (downloads) keep their Content-Length: uWS's tryEnd takes each chunk against the
  // total, and a chunk the socket did not take is offered again from where it stopped once it can write.
  if (Number.isFinite(length)) {
    res.cork(head);
    let pending: Buffer | null = null;
    let pendingAt = 0;
    answer.on('data', (c: Buffer) => {
      if (isAborted()) {
        answer.destroy();
        return;
      }
      pendingAt = res.getWriteOffset();
      let ok = false;
      let done = false;
      res.cork(() => {
        [ok, done] = res.tryEnd(c, length);
      });
      if (ok || done) return;
      pending = c;
      answer.pause();
      res.onWritable((offset) => {
        const [ok2, done2] = res.tryEnd(pending!.subarray(offset - pendingAt), length);
        if (ok2 || done2) {
          pending = null;
          if (!done2) answer.resume();
        }
        return ok2 || done2;
      });
    });
    answer.on('error', () => {
      if (!isAborted()) res.close();
    });
    return;
  }
  // Streamed: server-sent events and answers of unknown length go out as they come (chunked).
  res.cork(head);
  answer.on('data', (c: Buffer) => {
    if (isAborted()) {
      answer.destroy();
      return;
    }
    let ok = true;
    res.cork(() => {
      ok = res.write(c);
    });
    if (!ok) {
      answer.pause();
      res.onWritable(() => {
        answer.resume();
        return true;
      });
    }
  });
  answer.on('end', () => {
    if (!isAborted()) res.cork(() => res.end());
  });
  answer.on('error', () => {
    if (!isAborted()) res.close();
  });
}
