// Writing responses: always corked, never after the client aborted, files streamed with backpressure.
// Fixed strings go to uWS as bytes: a JS string argument is converted to UTF-8 in a fresh allocation on every
// call, which on a small reply cost more than writing the reply.
import { createReadStream } from 'node:fs';
import type { HttpResponse } from './uws.js';

/** Per-response state. The server sets the one uWS onAborted handler; others subscribe via onAbort. */
export interface ResState {
  aborted: boolean;
  done: boolean;
  status: number;
  onAbort: Array<() => void>;
  /** Body bytes handed to the socket so far (headers not counted), for the HTTP byte metrics. */
  bytesOut: number;
  /** The request's AbortController, made when a handler first asks for its signal. */
  controller?: AbortController | null;
  /**
   * performance.now() as a whole reply was handed to the socket: taken before the write, so the request's end
   * (its log line, its span) can never fall after the client has read the answer, however late this process
   * runs again after the write. Unset for replies that stream (files, server-sent events).
   */
  answeredAt?: number;
}

const STATUS_TEXT: Record<number, string> = {
  200: 'OK',
  201: 'Created',
  202: 'Accepted',
  204: 'No Content',
  206: 'Partial Content',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Payload Too Large',
  416: 'Range Not Satisfiable',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** uWS writes Content-Length itself (end/tryEnd); a second one breaks strict clients. */
function writeHeaders(res: HttpResponse, headers: Record<string, string>): void {
  for (const k in headers) if (k !== 'Content-Length' && k !== 'content-length') res.writeHeader(k, headers[k]!);
}

const STATUS_LINES = new Map(
  Object.entries(STATUS_TEXT).map(([code, text]) => [Number(code), Buffer.from(`${code} ${text}`)]),
);

export function statusLine(status: number): Buffer | string {
  return STATUS_LINES.get(status) ?? `${status} Status`;
}

/**
 * The two headers every JSON reply has, in one call: uWS writes a header as `name: value\r\n` with the name as
 * given, so a name that already holds `Content-Type: application/json\r\n` before `x-request-id` writes both.
 * Each call into uWS has a fixed cost of the order of the rest of this function.
 */
const JSON_AND_REQUEST_ID = Buffer.from('Content-Type: application/json\r\nx-request-id');

export function sendBody(
  res: HttpResponse,
  st: ResState,
  status: number,
  headers: Record<string, string>,
  body: string | Buffer,
  closeConnection = false,
): void {
  if (st.aborted || st.done) return;
  st.done = true;
  st.status = status;
  st.bytesOut += typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  st.answeredAt = performance.now();
  res.cork(() => {
    res.writeStatus(statusLine(status));
    writeHeaders(res, headers);
    res.end(body, closeConnection);
  });
}

export function sendJson(
  res: HttpResponse,
  st: ResState,
  status: number,
  headers: Record<string, string>,
  value: unknown,
  closeConnection = false,
): void {
  headers['Content-Type'] = 'application/json';
  sendBody(res, st, status, headers, JSON.stringify(value), closeConnection);
}

/**
 * A handler's JSON reply: the hot path of every API call, so no headers object is built for the two headers
 * every reply has (request id, content type); `extra` are the handler's own (its Content-Type is ignored).
 */
export function sendJsonReply(
  res: HttpResponse,
  st: ResState,
  status: number,
  requestId: string,
  extra: Record<string, string> | undefined,
  value: unknown,
  inRequestCallback = false,
): void {
  if (st.aborted || st.done) return;
  st.done = true;
  st.status = status;
  const body = serialized(value);
  st.bytesOut += typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  st.answeredAt = performance.now();
  // uWS corks the socket for the length of its own request callback: an answer written there needs no cork
  // (and no closure for one).
  if (inRequestCallback) writeJsonReply(res, status, requestId, extra, body);
  else res.cork(() => writeJsonReply(res, status, requestId, extra, body));
}

function writeJsonReply(
  res: HttpResponse,
  status: number,
  requestId: string,
  extra: Record<string, string> | undefined,
  body: string | Buffer,
): void {
  // uWS writes `200 OK` itself when no status was written.
  if (status !== 200) res.writeStatus(statusLine(status));
  res.writeHeader(JSON_AND_REQUEST_ID, requestId);
  if (extra) for (const k in extra) if (!SET_BY_US.has(k.toLowerCase())) res.writeHeader(k, extra[k]!);
  res.end(body);
}

/**
 * JSON text of a reply. A frozen object cannot change, so its UTF-8 bytes are kept (weakly) and a handler that
 * hands out the same frozen record on every call (a cached project) serializes and encodes it once. Only the
 * top level is checked: handlers freeze such records deeply (src/base/deep-freeze.ts).
 */
const frozenBytes = new WeakMap<object, Buffer>();
function serialized(value: unknown): string | Buffer {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return JSON.stringify(value);
  let bytes = frozenBytes.get(value);
  if (bytes === undefined) frozenBytes.set(value, (bytes = Buffer.from(JSON.stringify(value))));
  return bytes;
}

const SET_BY_US = new Set(['content-length', 'content-type', 'x-request-id']);

/** Streams bytes [start, end] of a file; pauses the file stream whenever uWS reports backpressure. */
export function sendFile(
  res: HttpResponse,
  st: ResState,
  status: number,
  headers: Record<string, string>,
  path: string,
  start: number,
  end: number,
): Promise<void> {
  return new Promise((resolve) => {
    if (st.aborted || st.done) return resolve();
    st.done = true;
    st.status = status;
    const total = end - start + 1;
    if (total <= 0) {
      res.cork(() => {
        res.writeStatus(statusLine(status));
        writeHeaders(res, headers);
        res.end();
      });
      return resolve();
    }
    const stream = createReadStream(path, { start, end, highWaterMark: 256 * 1024 });
    let headerSent = false;
    let pending: { buf: Buffer; offset: number } | null = null;
    const finish = () => {
      stream.destroy();
      resolve();
    };
    st.onAbort.push(finish);
    const tryWrite = (buf: Buffer): boolean => {
      let ok = false;
      let responded = false;
      res.cork(() => {
        if (!headerSent) {
          res.writeStatus(statusLine(status));
          writeHeaders(res, headers);
          headerSent = true;
        }
        [ok, responded] = res.tryEnd(buf, total);
      });
      if (responded) finish();
      return ok;
    };
    stream.on('data', (chunk) => {
      const buf = chunk as Buffer;
      if (st.aborted) return finish();
      st.bytesOut += buf.length;
      const offset = res.getWriteOffset();
      if (!tryWrite(buf)) {
        pending = { buf, offset };
        stream.pause();
        res.onWritable((off) => {
          if (!pending) return true;
          const rest = pending.buf.subarray(off - pending.offset);
          const ok = tryWrite(rest);
          if (ok) {
            pending = null;
            stream.resume();
          }
          return ok;
        });
      }
    });
    stream.on('error', () => {
      if (!st.aborted) {
        st.aborted = true;
        res.cork(() => res.close());
      }
      finish();
    });
  });
}
