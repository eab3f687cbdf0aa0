// The transport every resource uses: one fetch per attempt, retries the way the server asks, typed errors.
// Retry policy (docs/clients.md, "Retries"): connection errors, timeouts, 408, 429 and 5xx are retried, at
// most `maxRetries` times (2 by default), after min(0.5 * 2^n, 8) s less up to a quarter of jitter, never
// sooner than the answer's Retry-After; any other 4xx is sent exactly once. A POST that takes an
// Idempotency-Key gets one generated key that every retry repeats, so a retry after a cut connection finds
// the first request's result instead of doing the work twice.
import { APIConnectionError, APIError, APITimeoutError, APIUserAbortError } from './errors.js';

export interface ClientOptions {
  /** Project API key (sk_sf_...); default SIGHTFLOW_API_KEY from the environment where there is one. */
  apiKey?: string;
  /** Server URL; default SIGHTFLOW_BASE_URL, else http://127.0.0.1:8080. */
  baseURL?: string;
  /** SIGHTFLOW_ADMIN_TOKEN, for the admin routes only. */
  adminToken?: string;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Milliseconds an attempt may take, answer body included (default 60 000). */
  timeout?: number;
  /** A Retry-After longer than this many seconds is not waited for: the error is thrown (default 60). */
  maxRetryAfter?: number;
  /** Headers sent with every request. */
  defaultHeaders?: Record<string, string>;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  signal?: AbortSignal;
  timeout?: number;
  maxRetries?: number;
  headers?: Record<string, string>;
  /** Overrides the generated Idempotency-Key on the POSTs that take one. */
  idempotencyKey?: string;
}

export type QueryValue =
  | string
  | number
  | boolean
  | null
  | undefined
  | Array<string | number>
  | Record<string, unknown>;

export interface RequestSpec {
  method: string;
  /** Path with {name} placeholders, as in the OpenAPI document. */
  path: string;
  pathParams?: Record<string, string>;
  query?: Record<string, QueryValue>;
  /** A JSON body. */
  json?: unknown;
  /** A body sent as is (multipart FormData, raw image bytes); must be replayable. */
  body?: BodyInit;
  contentType?: string;
  idempotencyKey?: boolean;
  auth?: 'key' | 'admin' | 'none';
  /** Hand back the Response (2xx) unread, for streams and binary answers. */
  raw?: boolean;
}

function env(name: string): string | undefined {
  const p = (globalThis as { process?: { env?: Record<string, string | undefined> } }).process;
  const v = p?.env?.[name];
  return v ? v : undefined;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(new APIUserAbortError('Request was aborted'));
    const onAbort = () => {
      clearTimeout(t);
      reject(new APIUserAbortError('Request was aborted'));
    };
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });

/** Seconds a Retry-After (or retry-after-ms) header asks for, or null when absent or unreadable. */
export function retryAfterSeconds(headers: Headers): number | null {
  const ms = headers.get('retry-after-ms');
  if (ms && Number.isFinite(Number(ms))) return Math.max(0, Number(ms) / 1000);
  const v = headers.get('retry-after');
  if (!v) return null;
  if (/^\s*\d+(\.\d+)?\s*$/.test(v)) return Number(v);
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, (at - Date.now()) / 1000) : null;
}

/** Backoff before retry n (0-based): min(0.5 * 2^n, 8) s, less up to a quarter at random, floored at Retry-After. */
export function retryDelayMs(attempt: number, retryAfter: number | null, random: () => number = Math.random): number {
  const base = Math.min(0.5 * 2 ** attempt, 8);
  const jittered = base * (1 - 0.25 * random());
  return Math.ceil(Math.max(jittered, retryAfter ?? 0) * 1000);
}

export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

function encodeQuery(query: Record<string, QueryValue> | undefined): string {
  if (!query) return '';
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const e of v) q.append(k, String(e));
    else if (typeof v === 'object') q.append(k, JSON.stringify(v));
    else q.append(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export function fillPath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/\{([A-Za-z_]+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined || v === '') throw new TypeError(`Missing path parameter ${name} for ${path}`);
    // {path} is a wildcard: its slashes are separators.
    return name === 'path' ? String(v).split('/').map(encodeURIComponent).join('/') : encodeURIComponent(String(v));
  });
}

function newIdempotencyKey(): string {
  return `sf-${globalThis.crypto.randomUUID()}`;
}

export class Transport {
  readonly baseURL: string;
  readonly apiKey: string | undefined;
  readonly adminToken: string | undefined;
  readonly maxRetries: number;
  readonly timeout: number;
  readonly maxRetryAfter: number;
  private readonly defaultHeaders: Record<string, string>;
  private readonly fetchImpl: typeof fetch;

  constructor(opts: ClientOptions = {}) {
    this.baseURL = (opts.baseURL ?? env('SIGHTFLOW_BASE_URL') ?? 'http://127.0.0.1:8080').replace(/\/+$/, '');
    this.apiKey = opts.apiKey ?? env('SIGHTFLOW_API_KEY');
    this.adminToken = opts.adminToken ?? env('SIGHTFLOW_ADMIN_TOKEN');
    this.maxRetries = opts.maxRetries ?? 2;
    this.timeout = opts.timeout ?? 60_000;
    this.maxRetryAfter = opts.maxRetryAfter ?? 60;
    this.defaultHeaders = opts.defaultHeaders ?? {};
    this.fetchImpl = opts.fetch ?? ((...a) => globalThis.fetch(...a));
  }

  url(spec: Pick<RequestSpec, 'path' | 'pathParams' | 'query'>): string {
    return this.baseURL + fillPath(spec.path, spec.pathParams) + encodeQuery(spec.query);
  }

  headersFor(auth: RequestSpec['auth'], extra?: Record<string, string>): Headers {
    const h = new Headers(this.defaultHeaders);
    const credential = auth === 'admin' ? this.adminToken : auth === 'none' ? undefined : this.apiKey;
    if (credential) h.set('authorization', `Bearer ${credential}`);
    for (const [k, v] of Object.entries(extra ?? {})) h.set(k, v);
    return h;
  }

  /**
   * One logical request: attempts until a 2xx, a non-retryable answer or the retries are spent. Answers the
   * parsed JSON (undefined for an empty body), or the Response itself with `raw`.
   */
  async request<T = unknown>(spec: RequestSpec, opts: RequestOptions = {}): Promise<T> {
    const url = this.url(spec);
    const headers = this.headersFor(spec.auth, opts.headers);
    let body: BodyInit | undefined = spec.body;
    if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers.set('content-type', 'application/json');
    } else if (spec.contentType) headers.set('content-type', spec.contentType);
    if (spec.idempotencyKey && !headers.has('idempotency-key'))
      headers.set('idempotency-key', opts.idempotencyKey ?? newIdempotencyKey());
    const maxRetries = opts.maxRetries ?? this.maxRetries;
    const timeout = opts.timeout ?? this.timeout;

    for (let attempt = 0; ; attempt++) {
      if (opts.signal?.aborted) throw new APIUserAbortError('Request was aborted');
      const timer = new AbortController();
      const t = setTimeout(() => timer.abort(), timeout);
      const signal = opts.signal ? AbortSignal.any([opts.signal, timer.signal]) : timer.signal;
      /** An attempt without a whole answer (none, or one cut while its body was read): waits to retry, or throws. */
      const failed = async (err: unknown, what: string): Promise<void> => {
        clearTimeout(t);
        if (opts.signal?.aborted) throw new APIUserAbortError('Request was aborted', { cause: err });
        if (attempt < maxRetries) return sleep(retryDelayMs(attempt, null), opts.signal);
        throw timer.signal.aborted
          ? new APITimeoutError(`${spec.method} ${url} timed out after ${timeout} ms`, { cause: err })
          : new APIConnectionError(`${spec.method} ${url}${what}: ${(err as Error)?.message ?? err}`, { cause: err });
      };
      let res: Response;
      try {
        res = await this.fetchImpl(url, { method: spec.method, headers, body, signal });
      } catch (err) {
        await failed(err, ' failed');
        continue;
      }
      if (res.ok && spec.raw) {
        clearTimeout(t);
        return res as T;
      }
      let text: string;
      try {
        text = res.status === 204 ? '' : await res.text();
      } catch (err) {
        // The answer was cut while its body was read: the same as a connection error.
        await failed(err, ': the answer was cut');
        continue;
      }
      clearTimeout(t);
      let parsed: unknown = text;
      if (text && (res.headers.get('content-type') ?? '').includes('json')) {
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = text;
        }
      }
      if (res.ok) return (text ? parsed : undefined) as T;
      if (isRetryableStatus(res.status) && attempt < maxRetries) {
        const after = retryAfterSeconds(res.headers);
        if (after === null || after <= this.maxRetryAfter) {
          await sleep(retryDelayMs(attempt, after), opts.signal);
          continue;
        }
      }
      throw APIError.of(
        res.status,
        parsed,
        res.headers,
        typeof parsed === 'string' && parsed ? parsed.slice(0, 500) : undefined,
      );
    }
  }
}
