// The HTTP front: one uWS catch-all handler that assigns a request id, authenticates (/v1 by API key,
// /admin/v1 by admin token), routes through the table, reads and validates the body, runs the handler,
// writes the reply and logs one line. Every failure becomes the catalogue's wire shape.
import { randomUUID, timingSafeEqual, createHash } from 'node:crypto';
// Imported rather than the global: a global lookup on every request is measurable here.
import { performance } from 'node:perf_hooks';
import { uws, type HttpRequest, type HttpResponse, type ListenSocket } from './uws.js';
import { Router } from './router.js';
import type { Method, Reply, RouteDef } from './route.js';
import { ClientGone, readBody } from './body-reader.js';
import { validate } from './validation.js';
import { IMAGE_UPLOAD_TYPES, isImageUploadType, readImageUpload } from './image-upload.js';
import { sendBody, sendFile, sendJson, sendJsonReply, type ResState } from './send.js';
import { HttpRequestContext } from './request-context.js';
import { RequestHeaders } from './request-headers.js';
import { errors, isApiError } from '../errors.js';
import type { Logger, RequestRecord } from '../log.js';
import type { Authenticator, Principal } from '../auth/authenticator.js';
import type { RateLimiter } from '../auth/rate-limit.js';

export interface ServerDeps {
  log: Logger;
  /** The one-line-per-request log (log.ts requestLogger). */
  requestLog: (r: RequestRecord) => void;
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  adminToken?: string;
  maxJsonBytes: number;
  bodyTimeoutMs: number;
}

const REQUEST_ID_RE = /^[A-Za-z0-9._:-]{1,128}$/;
const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const EMPTY_QUERY = new URLSearchParams();
/** The headers every request reads, as bytes: uWS then converts no name. */
const H_AUTHORIZATION = Buffer.from('authorization');
const H_REQUEST_ID = Buffer.from('x-request-id');
const H_CONTENT_LENGTH = Buffer.from('content-length');
/** uWS gives the method lower-cased: the common ones upper-cased without a new string per request. */
const METHOD_NAMES = new Map(['get', 'post', 'put', 'patch', 'delete', 'head', 'options'].map((m) => [m, m.toUpperCase()]));

// Request ids: a random per-process prefix (unique across nodes and restarts) plus a counter, 32 hex
// characters like a UUID without its cost on every request. The counter's last three hex digits come from a
// table and the rest is formatted once per 4096 requests: a number formatted and padded per request was
// measurable.
const ID_PREFIX = randomUUID().replace(/-/g, '').slice(0, 20);
const ID_LOW = Array.from({ length: 4096 }, (_, i) => i.toString(16).padStart(3, '0'));
let idCounter = 0;
let idHigh = '';
function nextRequestId(): string {
  const n = ++idCounter;
  const low = n % 4096;
  if (low === 0 || idHigh === '') idHigh = `req_${ID_PREFIX}${Math.floor(n / 4096).toString(16).padStart(9, '0')}`;
  return idHigh + ID_LOW[low]!;
}

export class HttpServer {
  readonly router = new Router();
  private readonly app = uws.App();
  private listenSocket: ListenSocket | null = null;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly adminTokenHash: Buffer | null;

  constructor(private readonly deps: ServerDeps) {
    this.adminTokenHash = deps.adminToken ? sha256(deps.adminToken) : null;
    this.app.any('/*', (res, req) => this.onRequest(res, req));
  }

  route(def: RouteDef): void {
    this.router.add(def);
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (sock) => {
        if (!sock) return reject(new Error(`could not listen on ${host}:${port}`));
        this.listenSocket = sock;
        resolve(uws.us_socket_local_port(sock as never));
      });
    });
  }

  /** Stops accepting connections, then waits (up to timeoutMs) for in-flight requests to finish. */
  async stop(timeoutMs: number): Promise<void> {
    if (this.listenSocket) {
      uws.us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
    if (this.inFlight > 0) {
      await Promise.race([
        new Promise<void>((r) => this.idleWaiters.push(r)),
        new Promise<void>((r) => setTimeout(r, timeoutMs).unref()),
      ]);
    }
    // Let uSockets flush the last responses before the caller exits the process.
    await new Promise((r) => setTimeout(r, 50));
  }

  private onRequest(res: HttpResponse, req: HttpRequest): void {
    const started = performance.now();
    // Everything from req must be read now: it is invalid after the first await (headers: see keep()).
    const m = req.getMethod();
    const method = METHOD_NAMES.get(m) ?? m.toUpperCase();
    const path = req.getUrl();
    const q = req.getQuery();
    const rawQuery = q ? new URLSearchParams(q) : EMPTY_QUERY;
    const headers = new RequestHeaders(req);
    const authorization = headers.one(H_AUTHORIZATION, 'authorization');
    const incomingId = headers.one(H_REQUEST_ID, 'x-request-id');
    const requestId = incomingId && REQUEST_ID_RE.test(incomingId) ? incomingId : nextRequestId();
    const st: ResState = { aborted: false, done: false, status: 0, onAbort: [], controller: null };
    this.inFlight++;
    let routePattern = '(unmatched)';
    let principal: Principal | undefined;
    // uWS needs an abort handler before the callback returns whenever the answer comes later; a request
    // answered before it returns (a cached key, no body, a handler with its answer at hand: the common small
    // request) needs none, and skips the handler's persistent handle and every promise of the slow path.
    // Whatever goes on after the callback has attached it, which is also the sign to keep the headers.
    let watching = false;
    const watchAbort = () => {
      if (watching) return;
      watching = true;
      res.onAborted(() => {
        st.aborted = true;
        st.controller?.abort();
        for (const f of st.onAbort.splice(0)) f();
      });
    };
    const leaveCallback = () => {
      if (watching) headers.keep();
      else headers.release();
    };

    const fail = (e: unknown) => {
      if (e instanceof ClientGone || st.aborted) return;
      const err = isApiError(e) ? e : errors.internal();
      if (!isApiError(e)) this.deps.log.error({ requestId, err: e, method, path }, 'unhandled error');
      // A body we did not read may still be arriving: close the connection so it is not parsed as a request.
      const close = err.status === 413 || err.status === 408;
      sendJson(res, st, err.status, { 'x-request-id': requestId, ...err.headers }, err.toBody(), close);
    };
    const done = () => {
      this.deps.requestLog({
        requestId, method, route: routePattern, path, status: st.aborted && !st.status ? 499 : st.status,
        startedMs: started, endedMs: performance.now(), project: principal?.projectId,
      });
      if (--this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
    };
    const failed = (e: unknown) => { fail(e); done(); };

    // uWS drops body bytes that arrive before onData is attached, so the body reader must start now,
    // synchronously, before authentication awaits anything. Routing is synchronous and has no effects, so
    // it runs first to pick the route's limit; errors still answer in the order auth -> 404/405 -> body.
    const match = this.router.match(method, path);
    const matched = match.kind === 'found' ? match.def : null;
    let bodyPromise: Promise<Buffer> | null = null;
    if (BODY_METHODS.has(method) && !matched?.noBody) {
      watchAbort();
      const cl = headers.one(H_CONTENT_LENGTH, 'content-length');
      bodyPromise = readBody(res, st, {
        limit: matched?.bodyLimit ?? this.deps.maxJsonBytes,
        contentLength: cl !== undefined && /^\d+$/.test(cl) ? Number(cl) : null,
        timeoutMs: this.deps.bodyTimeoutMs,
      });
      // Handled below, or deliberately dropped when auth or routing answers first.
      bodyPromise.catch(() => {});
    }

    // The steps below return a value when they can finish at once and a promise only where they must wait
    // (a key not in the cache, a body still arriving, a handler doing I/O).
    const invoke = (def: RouteDef, body: unknown): Reply | Promise<Reply> => {
      const query = def.query ? validate(def.query, Object.fromEntries(rawQuery), 'query') : q ? Object.fromEntries(rawQuery) : {};
      const ctx = new HttpRequestContext(method as Method, path, match.kind === 'found' ? match.params : {}, query, rawQuery, headers, requestId,
        principal as Principal, body, res, st, this.deps.log, watchAbort);
      return def.handler(ctx);
    };
    const withBody = (def: RouteDef): Reply | Promise<Reply> => {
      if (bodyPromise) return bodyPromise.then((buf) => invoke(def, def.body ? this.parseBody(def, buf, headers.record, rawQuery) : undefined));
      return invoke(def, def.body ? validate(def.body, undefined, 'body') : undefined);
    };
    const routed = (): Reply | Promise<Reply> => {
      if (match.kind === 'not_found') throw errors.routeNotFound(method, path);
      if (match.kind === 'method_not_allowed') throw errors.methodNotAllowed(method, path, match.allowed);
      const def = match.def;
      routePattern = def.path;
      // Key-protected routes outside /v1 (e.g. /mcp) authenticate here, after routing.
      if (def.auth === 'key' && !principal) {
        return this.deps.authenticator.authenticate(authorization).then((p) => {
          principal = p;
          this.deps.rateLimiter.take(p.keyId);
          return withBody(def);
        });
      }
      return withBody(def);
    };
    const run = (): Reply | Promise<Reply> => {
      const isV1 = path === '/v1' || path.startsWith('/v1/');
      const isAdmin = path === '/admin/v1' || path.startsWith('/admin/v1/');
      // Presigned links carry their own credential (the signature).
      const isPresigned = path.startsWith('/v1/files/');
      if (isAdmin && !this.adminTokenHash) throw errors.routeNotFound(method, path);
      if (isV1 && !isPresigned) {
        principal = this.deps.authenticator.cached(authorization, started);
        if (!principal) {
          return this.deps.authenticator.authenticate(authorization).then((p) => {
            principal = p;
            this.deps.rateLimiter.take(p.keyId);
            return routed();
          });
        }
        this.deps.rateLimiter.take(principal.keyId, started);
      } else if (isAdmin) {
        this.checkAdmin(authorization);
      }
      return routed();
    };

    let result: Reply | Promise<Reply>;
    try {
      result = run();
    } catch (e) {
      leaveCallback();
      failed(e);
      return;
    }
    if (!(result instanceof Promise)) {
      // Answered now, unless a file is still being sent: that answer goes on after the callback returns, so
      // its abort handler must be attached before the first byte (uWS refuses it once the response ended).
      // (A handler that writes the response itself reached for ctx.res or ctx.sse(), which attached it.)
      if ('file' in result) watchAbort();
      leaveCallback();
      let writing: Promise<void> | void;
      try {
        writing = this.write(res, st, requestId, result, true);
      } catch (e) {
        failed(e);
        return;
      }
      if (writing) writing.then(done, failed);
      else done();
      return;
    }
    watchAbort();
    leaveCallback();
    // One settle handler pair rather than catch().finally(): fewer promises per request.
    result.then((reply) => this.write(res, st, requestId, reply)).then(done, failed);
  }

  /** The body of a route that takes one: an image upload (multipart or raw) or JSON, validated. */
  private parseBody(def: RouteDef, buf: Buffer, headers: Record<string, string>, rawQuery: URLSearchParams): unknown {
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

  /** Writes the reply; returns a promise only while a file is still streaming. */
  private write(res: HttpResponse, st: ResState, requestId: string, reply: Reply, inRequestCallback = false): Promise<void> | void {
    if ('handled' in reply) return;
    const status = reply.status ?? 200;
    if ('json' in reply) return sendJsonReply(res, st, status, requestId, reply.headers, reply.json, inRequestCallback);
    const headers = { 'x-request-id': requestId, ...reply.headers };
    if ('body' in reply) sendBody(res, st, status, headers, reply.body);
    else return sendFile(res, st, status, headers, reply.file.path, reply.file.start, reply.file.end);
  }

  private checkAdmin(header: string | undefined): void {
    const m = header ? /^Bearer (\S+)$/i.exec(header.trim()) : null;
    if (!m || !timingSafeEqual(sha256(m[1]!), this.adminTokenHash!)) {
      throw errors.invalidAdminToken();
    }
  }
}

function sha256(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

function parseJson(buf: Buffer): unknown {
  if (buf.length === 0) return undefined;
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch (e) {
    throw errors.invalidJson((e as Error).message);
  }
}
