// One HTTP request from the uWS callback to its log line: request id, authentication (/v1 by API key,
// /admin/v1 by admin token), routing, body, handler, reply, log. Every failure becomes the catalogue's wire
// shape. A class with methods rather than a function with a closure per step: the closures of the common
// small request were most of what it allocated, and so of the collections that follow
// (docs/capacity.md, "A small request's CPU").
// Steps return a value when they can finish at once and a promise only where they must wait (a key not in
// the cache, a body still arriving, a handler doing I/O): a request answered inside the uWS callback makes no
// promise and attaches no abort handler.
import { timingSafeEqual, createHash } from 'node:crypto';
// Imported rather than the global: a global lookup on every request is measurable here.
import { performance } from 'node:perf_hooks';
import type { HttpRequest, HttpResponse } from './uws.js';
import type { Match, Router } from './router.js';
import type { Method, Reply, RouteDef } from './route.js';
import { ClientGone, readBody } from './body-reader.js';
import { validate } from './validation.js';
import { checkPathParams, checkQuery } from './storable-text.js';
import { IMAGE_UPLOAD_TYPES, isImageUploadType, readImageUpload } from './image-upload.js';
import { sendBody, sendFile, sendJson, sendJsonReply, type ResState } from './send.js';
import { HttpRequestContext, type RequestLink } from './request-context.js';
import { nextRequestId } from './request-id.js';
import { parseTraceparent, startedTraceId, STARTED_FLAGS } from '../tracing/traceparent.js';
import { nextSpanId, spansOn } from '../tracing/spans.js';
import { errors, isApiError } from '../base/errors.js';
import type { Logger, RequestRecord } from '../base/log.js';
import type { Authenticator, Principal } from '../auth/authenticator.js';
import type { RateGate } from '../auth/rate-limit.js';

export interface ServerDeps {
  log: Logger;
  /** The one-line-per-request log (log.ts requestLogger). */
  requestLog: (r: RequestRecord) => void;
  authenticator: Authenticator;
  rateLimiter: RateGate;
  adminToken?: string;
  maxJsonBytes: number;
  bodyTimeoutMs: number;
}

/** What every exchange of one server shares. */
export interface ServerShared {
  readonly deps: ServerDeps;
  readonly router: Router;
  readonly adminTokenHash: Buffer | null;
  /** Called once per request, after its log line. */
  ended(): void;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const EMPTY_QUERY = new URLSearchParams();
/** The headers every request reads, as bytes: uWS then converts no name. */
const H_AUTHORIZATION = Buffer.from('authorization');
const H_REQUEST_ID = Buffer.from('x-request-id');
const H_CONTENT_LENGTH = Buffer.from('content-length');
const H_TRACEPARENT = Buffer.from('traceparent');
/**
 * uWS gives the method lower-cased: the common ones upper-cased without a new string per request, by comparison
 * rather than a map (a map would hash uWS's fresh string on every request).
 */
function methodName(m: string): string {
  if (m === 'get') return 'GET';
  if (m === 'post') return 'POST';
  if (m === 'put') return 'PUT';
  if (m === 'patch') return 'PATCH';
  if (m === 'delete') return 'DELETE';
  return m.toUpperCase();
}

export class Exchange implements ResState, RequestLink {
  // The response's state (ResState), shared with the writers in send.ts and sse.ts.
  aborted = false;
  done = false;
  status = 0;
  bytesOut = 0;
  answeredAt: number | undefined = undefined;
  /** Request body bytes read (0 for a request without a body, or whose body was never read). */
  private bytesIn = 0;
  onAbort: Array<() => void> = [];
  controller: AbortController | null = null;

  readonly requestId: string;
  /**
   * The W3C trace this request belongs to (tracing/traceparent.ts): the caller's, a fresh one, or null for a
   * trace it started under a server-made request id, whose id is that request id's hex (traceId): the
   * common request makes no trace id string at all.
   */
  private readonly trace: string | null;
  readonly traceFlags: string;
  /** The caller's span (the incoming traceparent's parent-id), the parent of this request's exported span. */
  private readonly parentSpan: string | undefined;
  /**
   * This request's own span id, made only while spans are exported: when a call names it as its parent, or at
   * the latest when the request ends (a call made after that still names the span that was exported).
   */
  private span: string | undefined = undefined;
  private readonly started: number;
  private readonly method: string;
  private readonly path: string;
  private readonly q: string;
  private readonly rawQuery: URLSearchParams;
  private readonly authorization: string | undefined;
  private readonly match: Match;
  /**
   * uWS's request is valid only during its callback. Headers are read from it one by one (the few the server
   * needs) and copied all at once only when something asks for all of them, or when the request outlives
   * the callback: copying every header up front (a call back into JS per header) was the largest single
   * cost of a small request.
   */
  private req: HttpRequest | null;
  private allHeaders: Record<string, string> | null = null;
  private routePattern = '(unmatched)';
  private principal: Principal | undefined = undefined;
  private watching = false;
  private bodyPromise: Promise<Buffer> | null = null;

  constructor(
    private readonly srv: ServerShared,
    private readonly res: HttpResponse,
    req: HttpRequest,
  ) {
    this.started = performance.now();
    this.req = req;
    this.method = methodName(req.getMethod());
    this.path = req.getUrl();
    this.q = req.getQuery();
    this.rawQuery = this.q ? new URLSearchParams(this.q) : EMPTY_QUERY;
    this.authorization = this.header(H_AUTHORIZATION, 'authorization');
    const incomingId = this.header(H_REQUEST_ID, 'x-request-id');
    const ownId = !(incomingId && REQUEST_ID_RE.test(incomingId));
    this.requestId = ownId ? nextRequestId() : incomingId;
    const trace = parseTraceparent(this.header(H_TRACEPARENT, 'traceparent'));
    this.trace = trace ? trace.traceId : ownId ? null : startedTraceId();
    this.traceFlags = trace ? trace.flags : STARTED_FLAGS;
    this.parentSpan = trace?.parentId;
    // Routing is synchronous and has no effects: it runs first to pick the body limit (see start()).
    this.match = srv.router.match(this.method, this.path);
  }

  /** Runs the request; called once, inside the uWS callback. */
  start(): void {
    // uWS drops body bytes that arrive before onData is attached, so the body reader starts now, before
    // authentication awaits anything; errors still answer in the order auth -> 404/405 -> body.
    const matched = this.match.kind === 'found' ? this.match.def : null;
    if (BODY_METHODS.has(this.method) && !matched?.noBody) {
      this.watchAbort();
      const cl = this.header(H_CONTENT_LENGTH, 'content-length');
      this.bodyPromise = readBody(this.res, this, {
        limit: matched?.bodyLimit ?? this.srv.deps.maxJsonBytes,
        contentLength: cl !== undefined && /^\d+$/.test(cl) ? Number(cl) : null,
        timeoutMs: this.srv.deps.bodyTimeoutMs,
      });
      // Handled below, or deliberately dropped when auth or routing answers first.
      this.bodyPromise.catch(() => {});
    }

    let result: Reply | Promise<Reply>;
    try {
      result = this.run();
    } catch (e) {
      this.leaveCallback();
      this.failed(e);
      return;
    }
    if (!(result instanceof Promise)) {
      // Answered now, unless a file is still being sent: that answer goes on after the callback returns, so
      // its abort handler must be attached before the first byte (uWS refuses it once the response ended).
      // (A handler that writes the response itself reached for ctx.res or ctx.sse(), which attached it.)
      if ('file' in result) this.watchAbort();
      this.leaveCallback();
      let writing: Promise<void> | void;
      try {
        writing = this.write(result, true);
      } catch (e) {
        this.failed(e);
        return;
      }
      if (writing)
        writing.then(
          () => this.finish(),
          (e: unknown) => this.failed(e),
        );
      else this.finish();
      return;
    }
    this.watchAbort();
    this.leaveCallback();
    // One settle handler pair rather than catch().finally(): fewer promises per request.
    result
      .then((reply) => this.write(reply))
      .then(
        () => this.finish(),
        (e: unknown) => this.failed(e),
      );
  }

  get traceId(): string {
    return this.trace ?? this.requestId.slice(4);
  }

  get spanId(): string {
    return (this.span ??= nextSpanId());
  }

  /** Every request header by lower-case name. */
  get headers(): Record<string, string> {
    if (this.allHeaders) return this.allHeaders;
    if (!this.req) throw new Error('request headers read after the request callback returned without being kept');
    const all: Record<string, string> = {};
    this.req.forEach((k, v) => {
      all[k] = v;
    });
    return (this.allHeaders = all);
  }

  /**
   * uWS needs an abort handler before its callback returns whenever the answer comes later; a request
   * answered before it returns needs none, and skips the handler's persistent handle. Whatever goes on after
   * the callback has attached it, which is also the sign to keep the headers.
   */
  watchAbort(): void {
    if (this.watching) return;
    this.watching = true;
    this.res.onAborted(() => {
      this.aborted = true;
      this.controller?.abort();
      for (const f of this.onAbort.splice(0)) f();
    });
  }

  /** One header (a Buffer name: uWS then converts nothing); an empty one counts as absent. */
  private header(name: Buffer, key: string): string | undefined {
    if (this.allHeaders) return this.allHeaders[key];
    const v = this.req!.getHeader(name);
    return v === '' ? undefined : v;
  }

  /** The uWS callback is returning: keep the headers if the request goes on, else let go of uWS's request. */
  private leaveCallback(): void {
    if (this.watching && !this.allHeaders) void this.headers;
    this.req = null;
  }

  private run(): Reply | Promise<Reply> {
    const { path, method } = this;
    const isV1 = path === '/v1' || path.startsWith('/v1/');
    const isAdmin = path === '/admin/v1' || path.startsWith('/admin/v1/');
    // Presigned links carry their own credential (the signature).
    const isPresigned = path.startsWith('/v1/files/');
    if (isAdmin && !this.srv.adminTokenHash) throw errors.routeNotFound(method, path);
    if (isV1 && !isPresigned) {
      const principal = this.srv.deps.authenticator.cached(this.authorization, this.started);
      if (!principal)
        return this.srv.deps.authenticator
          .authenticate(this.authorization)
          .then((p) => this.authenticated(p, () => this.routed()));
      this.principal = principal;
      this.srv.deps.rateLimiter.take(principal.keyId, this.started);
    } else if (isAdmin) {
      checkAdmin(this.authorization, this.srv.adminTokenHash!);
    }
    return this.routed();
  }

  private authenticated(p: Principal, next: () => Reply | Promise<Reply>): Reply | Promise<Reply> {
    this.principal = p;
    this.srv.deps.rateLimiter.take(p.keyId);
    return next();
  }

  private routed(): Reply | Promise<Reply> {
    const { match } = this;
    if (match.kind === 'not_found') throw errors.routeNotFound(this.method, this.path);
    if (match.kind === 'method_not_allowed') throw errors.methodNotAllowed(this.method, this.path, match.allowed);
    const def = match.def;
    this.routePattern = def.path;
    // Key-protected routes outside /v1 (e.g. /mcp) authenticate here, after routing.
    if (def.auth === 'key' && !this.principal) {
      return this.srv.deps.authenticator
        .authenticate(this.authorization)
        .then((p) => this.authenticated(p, () => this.withBody(def)));
    }
    return this.withBody(def);
  }

  private withBody(def: RouteDef): Reply | Promise<Reply> {
    if (this.bodyPromise)
      return this.bodyPromise.then((buf) => {
        this.bytesIn = buf.length;
        return this.invoke(def, def.body ? parseBody(def, buf, this.headers, this.rawQuery) : undefined);
      });
    return this.invoke(def, def.body ? validate(def.body, undefined, 'body') : undefined);
  }

  private invoke(def: RouteDef, body: unknown): Reply | Promise<Reply> {
    const { rawQuery } = this;
    if (this.q) checkQuery(rawQuery);
    if (this.match.kind === 'found') checkPathParams(this.match.params);
    const query = def.query
      ? validate(def.query, Object.fromEntries(rawQuery), 'query')
      : this.q
        ? Object.fromEntries(rawQuery)
        : {};
    const params = this.match.kind === 'found' ? this.match.params : {};
    const ctx = new HttpRequestContext(
      this.method as Method,
      this.path,
      params,
      query,
      rawQuery,
      this.requestId,
      this.principal as Principal,
      body,
      this.res,
      this,
      this.srv.deps.log,
    );
    return def.handler(ctx);
  }

  /** Writes the reply; returns a promise only while a file is still streaming. */
  private write(reply: Reply, inRequestCallback = false): Promise<void> | void {
    if ('handled' in reply) return;
    const status = reply.status ?? 200;
    if ('json' in reply)
      return sendJsonReply(this.res, this, status, this.requestId, reply.headers, reply.json, inRequestCallback);
    const headers = { 'x-request-id': this.requestId, ...reply.headers };
    if ('body' in reply) sendBody(this.res, this, status, headers, reply.body);
    else return sendFile(this.res, this, status, headers, reply.file.path, reply.file.start, reply.file.end);
  }

  private fail(e: unknown): void {
    if (e instanceof ClientGone || this.aborted) return;
    const err = isApiError(e) ? e : errors.internal();
    if (!isApiError(e))
      this.srv.deps.log.error(
        { requestId: this.requestId, err: e, method: this.method, path: this.path },
        'unhandled error',
      );
    // A body we did not read may still be arriving: close the connection so it is not parsed as a request.
    const close = err.status === 413 || err.status === 408;
    sendJson(this.res, this, err.status, { 'x-request-id': this.requestId, ...err.headers }, err.toBody(), close);
  }

  private failed(e: unknown): void {
    this.fail(e);
    this.finish();
  }

  private finish(): void {
    this.srv.deps.requestLog({
      requestId: this.requestId,
      traceId: this.trace,
      traceFlags: this.traceFlags,
      spanId: spansOn ? this.spanId : undefined,
      parentSpanId: this.parentSpan,
      method: this.method,
      route: this.routePattern,
      path: this.path,
      status: this.aborted && !this.status ? 499 : this.status,
      startedMs: this.started,
      endedMs: this.answeredAt ?? performance.now(),
      project: this.principal?.projectId,
      keyId: this.principal?.keyId,
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
    });
    this.srv.ended();
  }
}

/** The body of a route that takes one: an image upload (multipart or raw) or JSON, validated. */
function parseBody(def: RouteDef, buf: Buffer, headers: Record<string, string>, rawQuery: URLSearchParams): unknown {
  const ct = (headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (def.imageUpload && isImageUploadType(ct)) {
    const upload = readImageUpload(headers['content-type']!, ct, buf, rawQuery, def.body!);
    const body = validate(def.body!, upload.fields, 'body');
    if (upload.image) (body as Record<string, unknown>).image_base64 = upload.image;
    return body;
  }
  if (buf.length > 0 && ct !== 'application/json') {
    throw errors.unsupportedMediaType(ct, def.imageUpload ? ['application/json', ...IMAGE_UPLOAD_TYPES] : undefined);
  }
  return validate(def.body!, parseJson(buf), 'body');
}

function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch (e) {
    throw errors.invalidJson((e as Error).message);
  }
}

function checkAdmin(header: string | undefined, tokenHash: Buffer): void {
  const m = header ? /^Bearer (\S+)$/i.exec(header.trim()) : null;
  if (!m || !timingSafeEqual(sha256(m[1]!), tokenHash)) throw errors.invalidAdminToken();
}

export function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}
