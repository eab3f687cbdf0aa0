// The access log line: the one log line every request pays for, so it is built without pino's serializer
// and without building a string at all. As a string (a dozen concatenations, then a flattening copy and a
// UTF-8 copy into the sink's buffer) it was most of what a small request allocated and about a tenth of its
// CPU. Here the line is written into the sink's buffer directly: fixed text and the parts that repeat (the
// method and route, the status, the project, the current millisecond's timestamp) are copied from bytes
// prepared once, and the rest (request id, path, duration) is written character by character. Text that is
// not printable ASCII without a quote or backslash (rare: paths are percent-encoded) goes through
// JSON.stringify. The line is the same JSON pino would write.
import { LogSink } from './log-sink.js';

export interface RequestLine {
  /** Made by the server or checked against [A-Za-z0-9._:-]{1,128}; escaped all the same if it is not. */
  requestId: string;
  method: string; route: string; path: string; status: number;
  /** performance.now() when the request arrived and when it was answered. */
  startedMs: number; endedMs: number;
  project: string | undefined;
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

type Utf8Writable = Buffer & { utf8Write(s: string, offset: number): number };

export class RequestLineWriter {
  private readonly head: Buffer;
  private readonly service: Buffer;
  private readonly timeBytes = Buffer.alloc(24);
  private lastTime = -1;
  private timeLength = 0;
  /** `","method":…,"route":…,"path":` by route, for the method last seen on it. */
  private readonly methodRoute = new Map<string, { method: string; bytes: Buffer }>();
  private readonly projects = new Map<string, Buffer>();
  private readonly statuses = new Map<number, Buffer>();

  constructor(private readonly sink: LogSink, private readonly level: number, service: string) {
    this.head = bytes(`{"level":${level},"time":`);
    this.service = bytes(`,"service":${JSON.stringify(service)},"requestId":`);
  }

  write(r: RequestLine): void {
    const mr = this.methodRouteBytes(r.method, r.route);
    const status = this.statusBytes(r.status);
    const project = r.project === undefined ? null : this.projectBytes(r.project);
    const need = FIXED_BYTES + worst(r.requestId) + worst(r.path) + mr.length + status.length + (project ? project.length : 0);
    if (need > LogSink.SIZE) {
      this.sink.write(`${JSON.stringify(this.record(r))}\n`);
      return;
    }
    const buf = this.sink.buffer;
    let o = this.sink.reserve(need);
    buf.set(this.head, o);
    o += this.head.length;
    o = this.time(buf, o, wallMs(r.endedMs));
    buf.set(this.service, o);
    o += this.service.length;
    o = text(buf, o, r.requestId);
    buf.set(mr, o);
    o += mr.length;
    o = text(buf, o, r.path);
    buf.set(status, o);
    o += status.length;
    o = hundredths(buf, o, Math.round((r.endedMs - r.startedMs) * 100));
    if (project) {
      buf.set(project, o);
      o += project.length;
    }
    buf.set(TAIL, o);
    this.sink.commit(o + TAIL.length);
  }

  /** The same line as an object, for a line too long for the buffer. */
  record(r: RequestLine): Record<string, unknown> {
    return {
      level: this.level, time: wallMs(r.endedMs), service: 'sightflow', requestId: r.requestId, method: r.method, route: r.route,
      path: r.path, status: r.status, ms: Math.round((r.endedMs - r.startedMs) * 100) / 100, project: r.project, msg: 'request',
    };
  }

  private methodRouteBytes(method: string, route: string): Buffer {
    const hit = this.methodRoute.get(route);
    if (hit !== undefined && hit.method === method) return hit.bytes;
    const b = bytes(`,"method":${JSON.stringify(method)},"route":${JSON.stringify(route)},"path":`);
    if (this.methodRoute.size < CACHE_LIMIT) this.methodRoute.set(route, { method, bytes: b });
    return b;
  }

  private statusBytes(status: number): Buffer {
    let b = this.statuses.get(status);
    if (b === undefined) {
      b = bytes(`,"status":${status},"ms":`);
      if (this.statuses.size < CACHE_LIMIT) this.statuses.set(status, b);
    }
    return b;
  }

  private projectBytes(project: string): Buffer {
    let b = this.projects.get(project);
    if (b === undefined) {
      b = bytes(`,"project":${JSON.stringify(project)}`);
      if (this.projects.size < CACHE_LIMIT) this.projects.set(project, b);
    }
    return b;
  }

  /** The time changes once a millisecond while a busy server logs many lines in each: keep its digits. */
  private time(buf: Buffer, o: number, t: number): number {
    if (t !== this.lastTime) {
      this.lastTime = t;
      this.timeLength = (this.timeBytes as Utf8Writable).utf8Write(String(t), 0);
    }
    buf.set(this.timeBytes.subarray(0, this.timeLength), o);
    return o + this.timeLength;
  }
}

const TAIL = bytes(',"msg":"request"}\n');

/** A JSON string: copied as is when printable ASCII without `"` or `\`, else JSON.stringify's escaping. */
function text(buf: Buffer, o: number, s: string): number {
  buf[o] = 0x22;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return o + (buf as Utf8Writable).utf8Write(JSON.stringify(s), o);
    buf[o + 1 + i] = c;
  }
  buf[o + 1 + s.length] = 0x22;
  return o + s.length + 2;
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
