// A request's headers, read from uWS only when something asks for all of them. uWS's request object is valid
// only during its callback, so copying every header into an object up front (one call back into JS per
// header) was the largest single cost of a small request, paid even when nothing but the Authorization header
// was read. The server reads the few headers it needs one by one, and keeps a copy of all of them before its
// callback returns whenever the request goes on after it (a body, an await, a stream).
import type { HttpRequest } from './uws.js';

export class RequestHeaders {
  private all: Record<string, string> | null = null;

  constructor(private req: HttpRequest | null) {}

  /** One header by its lower-case name (a Buffer: uWS then needs no conversion); undefined when absent. */
  one(name: Buffer, key: string): string | undefined {
    if (this.all) return this.all[key];
    const v = this.req!.getHeader(name);
    // uWS answers '' for an absent header: an empty one counts as absent (no header read here tells them apart).
    return v === '' ? undefined : v;
  }

  /** Every header, lower-case names. */
  get record(): Record<string, string> {
    if (this.all) return this.all;
    if (!this.req) throw new Error('request headers read after the request callback returned without keep()');
    const all: Record<string, string> = {};
    this.req.forEach((k, v) => { all[k] = v; });
    return (this.all = all);
  }

  /** The request outlives the uWS callback: copy the headers now, while they can still be read. */
  keep(): void {
    if (!this.all) void this.record;
    this.req = null;
  }

  /** The uWS callback is returning and nothing reads headers after it. */
  release(): void {
    this.req = null;
  }
}
