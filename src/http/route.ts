// What a route is: method + path pattern + auth + zod schemas (validation and the OpenAPI document come
// from the same schemas) + a handler returning a Reply.
import type { ZodType } from 'zod';
import type { Logger } from '../base/log.js';
import type { Principal } from '../auth/authenticator.js';
import type { HttpResponse } from './uws.js';
import type { SseWriter } from './sse.js';
import type { Caller } from '../usage/billing.js';

export type Method = 'GET' | 'POST' | 'DELETE' | 'PUT' | 'PATCH';

export interface RequestContext<B = any, Q = any> {
  method: Method;
  path: string;
  params: Record<string, string>;
  /** Parsed and validated query (raw URLSearchParams in `rawQuery`). */
  query: Q;
  rawQuery: URLSearchParams;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  requestId: string;
  /** Set for `auth: 'key'` routes. */
  principal: Principal;
  body: B;
  /** Aborted when the client goes away; pass it to long work. */
  signal: AbortSignal;
  log: Logger;
  /** The uWS response, for handlers that answer `{handled: true}` and write it themselves. */
  res: HttpResponse;
  /** The W3C `traceparent` for a call this request makes (a new span of its trace; while spans are exported, the request's span); unset outside HTTP. */
  traceparent?: string;
  /** Starts a server-sent-events response on this request (backpressure-aware); return `{handled: true}`. */
  sse(): SseWriter;
  remoteAddress: string;
}

/** The use-case view of an authenticated request: who it runs for, its lifetime and its log. */
export function callerOf(ctx: RequestContext): Caller {
  return {
    projectId: ctx.principal.projectId,
    keyId: ctx.principal.keyId,
    signal: ctx.signal,
    log: ctx.log,
    traceparent: ctx.traceparent,
    requestId: ctx.requestId,
  };
}

export type Reply =
  | { status?: number; headers?: Record<string, string>; json: unknown }
  | { status?: number; headers?: Record<string, string>; body: Buffer | string }
  | { status?: number; headers?: Record<string, string>; file: { path: string; start: number; end: number } }
  /** The handler wrote (or will write) the response itself through ctx.res (SSE). */
  | { handled: true };

export interface RouteDef<B = any, Q = any> {
  method: Method;
  path: string;
  auth: 'key' | 'admin' | 'none';
  summary: string;
  tags?: string[];
  /** JSON body schema; required for POST/PUT/PATCH routes that take a body. */
  body?: ZodType<B>;
  query?: ZodType<Q>;
  /** Request headers the route reads, documented as OpenAPI header parameters (all optional). */
  headerParams?: Array<{ name: string; description: string; maxLength?: number }>;
  /** Response schemas by status, for the OpenAPI document. */
  responses: Record<number, { description: string; schema?: ZodType; contentType?: string }>;
  /** Body limit in bytes (default: the JSON limit of the config). */
  bodyLimit?: number;
  /**
   * The body's `image` / `image_base64` may also come as binary: multipart/form-data (an `image` file part)
   * or a raw image/jpeg|png|webp body with the other fields in the query string (http/image-upload.ts).
   */
  imageUpload?: boolean;
  /** Takes no body: skip reading one. */
  noBody?: boolean;
  /** A Reply at hand is written before the request callback returns (no promise, no abort handler). */
  handler: (ctx: RequestContext<B, Q>) => Reply | Promise<Reply>;
}

export function defineRoute<B = any, Q = any>(def: RouteDef<B, Q>): RouteDef<B, Q> {
  return def;
}
