// The access log line: the one log line every request pays for, so it is built without pino's serializer
// and with as little as possible per request (measured: pino's machinery, and later a Date.now() per line,
// two regular expressions and the joined string's copies, cost more than the rest of a small request's own
// work). Route patterns and project ids repeat: each is escaped once. Request ids need no escaping (the
// server makes them, or accepts only [A-Za-z0-9._:-]). A path is copied as is when it is printable ASCII
// without a quote or backslash, else JSON.stringify escapes it. The line is the same JSON pino would write.
import type { LogSink } from './log-sink.js';

export interface RequestLine {
  /** Made by the server or checked against [A-Za-z0-9._:-]{1,128}: written without escaping. */
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

export class RequestLineWriter {
  private readonly head: string;
  private readonly escaped = new Map<string, string>();

  constructor(private readonly sink: LogSink, level: number, service: string) {
    this.head = `{"level":${level},"time":`;
    this.service = `,"service":${JSON.stringify(service)},"requestId":"`;
  }

  private readonly service: string;

  write(r: RequestLine): void {
    const project = r.project === undefined ? '' : `,"project":${this.once(r.project)}`;
    const ms = Math.round((r.endedMs - r.startedMs) * 100) / 100;
    this.sink.write(`${this.head}${wallMs(r.endedMs)}${this.service}${r.requestId}","method":${this.once(r.method)},"route":${this.once(r.route)},"path":${jsonString(r.path)},"status":${r.status},"ms":${ms}${project},"msg":"request"}\n`);
  }

  /** Route patterns, methods and project ids repeat on every request: escape each once. */
  private once(v: string): string {
    let s = this.escaped.get(v);
    if (s === undefined) {
      s = jsonString(v);
      if (this.escaped.size < 10_000) this.escaped.set(v, s);
    }
    return s;
  }
}

/** Printable ASCII without quote or backslash is its own JSON text: the common case, without JSON.stringify. */
function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(s);
  }
  return `"${s}"`;
}
