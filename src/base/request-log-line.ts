// The access log line: the one log line every request pays for, so it is built without pino's serializer
// and without building a string at all. As a string (a dozen concatenations, then a flattening copy and a
// UTF-8 copy into the sink's buffer) it was most of what a small request allocated and about a tenth of its
// CPU. Here the line is written into the sink's buffer directly, in six copies of bytes prepared once (the
// start up to the request id, with the current millisecond's time; the trace id's key; the method and route,
// with the path when it is the route itself, as on every route without parameters; the status; the project
// and the end) and four written in place (the request id and the trace id, which need no escaping; a path
// with parameters, character by character; the duration). A path that is not printable ASCII without a quote
// or backslash (rare: paths are percent-encoded) goes through JSON.stringify. The line is the same JSON pino
// would write.
import { LogSink } from './log-sink.js';

export interface RequestLine {
  /**
   * Made by the server or checked against [A-Za-z0-9._:-]{1,128} (a client's id that is not is replaced), so
   * it is written without escaping.
   */
  requestId: string;
  /**
   * The W3C trace id (32 lower-case hex characters, written without escaping); null: the request id's own
   * hex (a server-made `req_` id, whose trace this request started); absent on lines without one.
   */
  traceId?: string | null;
  /** The trace's W3C flags, the request's own span id when one was made, and its caller's span (for spans). */
  traceFlags?: string;
  spanId?: string;
  parentSpanId?: string;
  method: string;
  route: string;
  path: string;
  status: number;
  /** performance.now() when the request arrived and when it was answered. */
  startedMs: number;
  endedMs: number;
  project: string | undefined;
  /** The API key's id once the request authenticated (not in the log line: a front hands it to the owner's rate limit). */
  keyId?: string;
  /** Body bytes read and written (for the HTTP metrics; not in the log line). */
  bytesIn?: number;
  bytesOut?: number;
}

/**
 * Wall-clock milliseconds for a performance.now() reading: the offset between the two clocks is read again at
 * most once a second, so a clock step shows in the log within a second and no request reads the wall clock
 * (Date.now() is a call into the runtime).
 */
let wallOffset = 0;
let rebaseAt = -Infinity;
export function wallMs(perfNow: number): number {
  if (perfNow >= rebaseAt) {
    wallOffset = Date.now() - performance.now();
    rebaseAt = perfNow + 1000;
  }
  return Math.floor(wallOffset + perfNow);
}

const bytes = (s: string): Buffer => Buffer.from(s, 'utf8');
/** Bytes a JSON string of `length` UTF-16 units can take at most (`\uXXXX` is 6 bytes), quotes included. */
const worst = (s: string): number => 6 * s.length + 2;
/** Everything but the request id, path and the cached parts: far below this. */
const FIXED_BYTES = 160;
const CACHE_LIMIT = 10_000;
const SINK_SIZE = LogSink.SIZE;

/** Node's own Buffer methods, without the argument checks of buf.write() (a measurable share of a line). */
type Utf8Writable = Buffer & {
  utf8Write(s: string, offset: number): number;
  latin1Write(s: string, offset: number): number;
};

interface MethodRoute {
  method: string;
  bytes: Buffer;
  withPath: Buffer;
}

export class RequestLineWriter {
  /** `{"level":…,"time":` and `,"service":…,"requestId":"` around the time: one copy with the time inside. */
  private readonly headText: [string, string];
  /** The line's start up to the request id's opening quote, for the millisecond last written. */
  private prefix: Buffer = Buffer.alloc(0);
  private prefixTime = -1;
  /**
   * `","method":…,"route":…,"path":"` by route, for the method last seen on it; `withPath` goes on with the
   * route as the path (and no closing quote), for a request whose path is the route.
   */
  private readonly methodRoute = new Map<string, MethodRoute>();
  /** `,"project":…,"msg":"request"}\n` by project: the rest of the line after the duration. */
  private readonly projects = new Map<string, Buffer>();
  /** `","status":N,"ms":` by status (an array: statuses are small integers). */
  private readonly statuses: Array<Buffer | undefined> = [];

  constructor(
    private readonly sink: LogSink,
    private readonly level: number,
    service: string,
  ) {
    this.headText = [`{"level":${level},"time":`, `,"service":${JSON.stringify(service)},"requestId":"`];
  }

  write(r: RequestLine): void {
    const mrEntry = this.methodRouteEntry(r.method, r.route);
    const literal = r.path === r.route;
    const mr = literal ? mrEntry.withPath : mrEntry.bytes;
    const status = this.statusBytes(r.status);
    const tail = r.project === undefined ? TAIL : this.projectTail(r.project);
    const traceId = r.traceId;
    const need =
      FIXED_BYTES +
      worst(r.requestId) +
      (traceId === undefined ? 0 : TRACE_KEY.length + 32) +
      worst(r.path) +
      mr.length +
      status.length +
      tail.length;
    if (need > SINK_SIZE) {
      this.sink.write(`${JSON.stringify(this.record(r))}\n`);
      return;
    }
    const buf = this.sink.buffer;
    let o = this.sink.reserve(need);
    const prefix = this.prefixFor(wallMs(r.endedMs));
    buf.set(prefix, o);
    o += prefix.length;
    const idAt = o;
    o += (buf as Utf8Writable).latin1Write(r.requestId, o);
    if (traceId !== undefined) {
      buf.set(TRACE_KEY, o);
      o += TRACE_KEY.length;
      // 32 hex characters, stored one by one (cheaper than another call into the runtime); a trace the
      // request started is its request id's hex, copied from the bytes just written (no string is made).
      if (traceId === null) for (let i = 0; i < 32; i++) buf[o + i] = buf[idAt + 4 + i]!;
      else for (let i = 0; i < 32; i++) buf[o + i] = traceId.charCodeAt(i);
      o += 32;
    }
    buf.set(mr, o);
    o += mr.length;
    if (!literal) o = text(buf, o, r.path);
    buf.set(status, o);
    o = hundredths(buf, o + status.length, Math.round((r.endedMs - r.startedMs) * 100));
    buf.set(tail, o);
    this.sink.commit(o + tail.length);
  }

  /** The same line as an object, for a line too long for the buffer. */
  record(r: RequestLine): Record<string, unknown> {
    return {
      level: this.level,
      time: wallMs(r.endedMs),
      service: 'sightflow',
      requestId: r.requestId,
      trace_id: lineTraceId(r),
      method: r.method,
      route: r.route,
      path: r.path,
      status: r.status,
      ms: Math.round((r.endedMs - r.startedMs) * 100) / 100,
      project: r.project,
      msg: 'request',
    };
  }

  /** The time changes once a millisecond while a busy server logs many lines in each: one buffer a millisecond. */
  private prefixFor(t: number): Buffer {
    if (t !== this.prefixTime) {
      this.prefixTime = t;
      this.prefix = bytes(this.headText[0] + t + this.headText[1]);
    }
    return this.prefix;
  }

  private methodRouteEntry(method: string, route: string): MethodRoute {
    const hit = this.methodRoute.get(route);
    if (hit !== undefined && hit.method === method) return hit;
    const start = `","method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"path":"`;
    const entry = { method, bytes: bytes(start), withPath: bytes(start + JSON.stringify(route).slice(1, -1)) };
    if (this.methodRoute.size < CACHE_LIMIT) this.methodRoute.set(route, entry);
    return entry;
  }

  private statusBytes(status: number): Buffer {
    const hit = this.statuses[status];
    if (hit !== undefined) return hit;
    const b = bytes(`","status":${status},"ms":`);
    if (Number.isInteger(status) && status >= 0 && status < 1000) this.statuses[status] = b;
    return b;
  }

  private projectTail(project: string): Buffer {
    let b = this.projects.get(project);
    if (b === undefined) {
      b = bytes(`,"project":${JSON.stringify(project)},"msg":"request"}\n`);
      if (this.projects.size < CACHE_LIMIT) this.projects.set(project, b);
    }
    return b;
  }
}

/** A line's trace id as a string (see RequestLine.traceId). */
export function lineTraceId(r: RequestLine): string | undefined {
  return r.traceId === null ? r.requestId.slice(4) : r.traceId;
}

const TAIL = bytes(',"msg":"request"}\n');
/** Between the request id and the trace id: the trace id's key. */
const TRACE_KEY = bytes('","trace_id":"');

/**
 * A JSON string's characters without its quotes (the fixed bytes around it hold them): copied as is when
 * printable ASCII without `"` or `\`, else JSON.stringify's escaping.
 */
function text(buf: Buffer, o: number, s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) {
      const quoted = JSON.stringify(s);
      return o + (buf as Utf8Writable).utf8Write(quoted.slice(1, -1), o);
    }
    buf[o + i] = c;
  }
  return o + n;
}

/** h/100 as JavaScript prints it (`12`, `12.5`, `12.05`), h a non-negative integer. */
function hundredths(buf: Buffer, o: number, h: number): number {
  let whole = Math.floor(h / 100);
  let len = 1;
  for (let x = whole; x >= 10; x = Math.floor(x / 10)) len++;
  for (let i = o + len - 1; i >= o; i--) {
    buf[i] = 0x30 + (whole % 10);
    whole = Math.floor(whole / 10);
  }
  o += len;
  const frac = h % 100;
  if (frac === 0) return o;
  buf[o] = 0x2e;
  buf[o + 1] = 0x30 + Math.floor(frac / 10);
  if (frac % 10 === 0) return o + 2;
  buf[o + 2] = 0x30 + (frac % 10);
  return o + 3;
}
