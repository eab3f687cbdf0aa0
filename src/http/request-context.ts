// The RequestContext a handler receives. A class rather than an object literal: a literal with getters is
// built by defining each accessor at run time, which turns every request's context into a dictionary-mode
// object (measured at several percent of a small request's CPU); a class shares its accessors on the prototype.
import type { Principal } from '../auth/authenticator.js';
import type { Logger } from '../base/log.js';
import type { Method, RequestContext } from './route.js';
import type { ResState } from './send.js';
import { SseWriter } from './sse.js';
import { childTraceparent, spanTraceparent } from '../tracing/traceparent.js';
import { spansOn } from '../tracing/spans.js';
import type { HttpResponse } from './uws.js';

/** What a context needs of the server's side of its request. */
export interface RequestLink extends ResState {
  /** Every request header by lower-case name. */
  readonly headers: Record<string, string>;
  /** Attaches the uWS abort handler: due before anything may answer after the request callback returns. */
  watchAbort(): void;
  readonly traceId: string;
  readonly traceFlags: string;
  /** The request's own span id (made on first use). */
  readonly spanId: string;
}

export class HttpRequestContext implements RequestContext {
  private childLog: Logger | null = null;

  constructor(
    readonly method: Method,
    readonly path: string,
    readonly params: Record<string, string>,
    readonly query: unknown,
    readonly rawQuery: URLSearchParams,
    readonly requestId: string,
    readonly principal: Principal,
    readonly body: unknown,
    private readonly rawRes: HttpResponse,
    private readonly st: RequestLink,
    private readonly baseLog: Logger,
  ) {}

  /** Every request header by lower-case name. */
  get headers(): Record<string, string> {
    return this.st.headers;
  }

  /** A handler that takes the response into its own hands answers later: the abort handler goes on first. */
  get res(): HttpResponse {
    this.st.watchAbort();
    return this.rawRes;
  }

  get remoteAddress(): string {
    return this.st.aborted ? '' : Buffer.from(this.rawRes.getRemoteAddressAsText()).toString();
  }

  /** Created on first use (most requests never look at it); aborted when the client goes away. */
  get signal(): AbortSignal {
    this.st.watchAbort();
    let c = this.st.controller;
    if (!c) {
      c = this.st.controller = new AbortController();
      if (this.st.aborted) c.abort();
    }
    return c.signal;
  }

  /**
   * For a call this request makes: its trace with a new span id, or, while spans are exported, with the
   * request's own span id, so that the callee's span hangs under the request's exported one.
   */
  get traceparent(): string {
    const t = { traceId: this.st.traceId, flags: this.st.traceFlags };
    return spansOn ? spanTraceparent(t, this.st.spanId) : childTraceparent(t);
  }

  get log(): Logger {
    return (this.childLog ??= this.baseLog.child({ requestId: this.requestId }));
  }

  sse(): SseWriter {
    this.st.watchAbort();
    return new SseWriter(this.rawRes, this.st);
  }
}
