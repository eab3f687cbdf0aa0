// The host side of the decoder's guarded network path: FFmpeg opens nothing itself, it asks (onNet) for every
// URL it needs (the input, a ranged re-request after a seek, each HLS playlist, segment and key), and this
// fetches it through openMediaResponse, the one guarded fetch: the host resolved once, every address checked
// against the URL policy, the connection pinned to a checked address, each redirect checked before it is
// followed (at most 3). Bytes go back through the sink into the decoder's bounded queue; when it is full the
// response pauses until the decoder asks for more, so a fast server never fills memory.
//
// Hostile sources end with a clear code in bounded time and memory: a playlist over maxPlaylistBytes, or more
// requests than maxRequests within requestWindowMs (an HLS playlist that names itself, a live playlist that
// asks to be reloaded without pause), fail the decode with source_limit_exceeded; a refused URL fails it with
// url_not_allowed. Both stop the decoder at once rather than letting the HLS demuxer skip to the next entry.
//
// The input's first response says what identifies the resource (its length and ETag / Last-Modified: `identity`),
// so a task continued on another worker can tell that it reads the same bytes; with `expect` every response for
// the input must match it, else the decode fails with a SourceChangedError before a byte of it is decoded.
// Without, every later response (a ranged re-request after a seek) must match the first one's identity.
import type { IncomingMessage } from 'node:http';
import { ApiError, DecodeError, errors } from '../base/errors.js';
import { openMediaResponse } from './fetch.js';
import { resolveOnce, type Resolver, type UrlPolicy } from './url-policy.js';

/** Where the host's answers go: the native decoder's request queues (src/native/decode.ts). */
export interface NetSink {
  head(id: number, size: number, seekable: boolean, finalUrl: string): void;
  /** 0: queued; 1: queued, pause until 'more'; -1: the request is gone. */
  push(id: number, chunk: Uint8Array): number;
  end(id: number): void;
  fail(id: number, code: string, message: string, fatal: boolean): void;
}

export type NetRequestKind = 'open' | 'more' | 'close';

export interface GuardedSourceOptions {
  policy: UrlPolicy;
  /** DNS seam for tests. */
  resolve?: Resolver;
  /** Request parameter named in errors; default input[0].url. */
  param?: string;
  maxRedirects?: number;
  /** A response that starts with #EXTM3U may hold this many bytes (default 1 MiB, about 40 000 short entries). */
  maxPlaylistBytes?: number;
  /** At most this many requests within requestWindowMs (default 64 in 10 s). */
  maxRequests?: number;
  requestWindowMs?: number;
  /** The input must still be this resource (a continued task's); a response that differs fails the decode. */
  expect?: SourceIdentity;
}

/** What identifies an http(s) input's bytes: its length and at least one validator (a weak ETag compares too). */
export interface SourceIdentity {
  length: number;
  etag?: string;
  last_modified?: string;
}

/** The input is no longer the resource a checkpoint was taken from (or no longer says which it is). */
export class SourceChangedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceChangedError';
  }
}

/** Why `got` is not `want` (the resource as it was `when`), or null when it is the same resource. */
function identityChange(want: SourceIdentity, got: SourceIdentity | null, host: string, when: string): string | null {
  const was = JSON.stringify(want);
  if (!got) return `${host} no longer says which resource it serves (no length, ETag or Last-Modified); was ${was}`;
  const same =
    got.length === want.length &&
    (want.etag === undefined || got.etag === want.etag) &&
    (want.last_modified === undefined || got.last_modified === want.last_modified);
  return same ? null : `the video at ${host} changed ${when}: ${JSON.stringify(got)}, was ${was}`;
}

export const SOURCE_DEFAULTS = {
  maxRedirects: 3,
  maxPlaylistBytes: 1024 * 1024,
  maxRequests: 64,
  requestWindowMs: 10_000,
} as const;

interface Active {
  controller: AbortController;
  res?: IncomingMessage;
}

const PLAYLIST_MAGIC = Buffer.from('#EXTM3U');

export class GuardedSource {
  /** The first error that stopped the decode (url_not_allowed, source_limit_exceeded), as the client sees it. */
  failure: ApiError | SourceChangedError | null = null;
  /** The input's identity from its first response; null when it has none (no length or no validator) or is a playlist. */
  identity: SourceIdentity | null = null;
  /** Requests made so far (tests and logs). */
  requests = 0;
  readonly #sink: NetSink;
  readonly #opts: Required<Omit<GuardedSourceOptions, 'resolve' | 'expect'>> & {
    resolve?: Resolver;
    expect?: SourceIdentity;
  };
  /** The decoder's first request is its input; later requests for the same URL re-read it (a seek). */
  #input: string | null = null;
  #firstId: number | null = null;
  readonly #inputIds = new Set<number>();
  readonly #active = new Map<number, Active>();
  readonly #recent: number[] = [];
  #disposed = false;

  constructor(sink: NetSink, options: GuardedSourceOptions) {
    this.#sink = sink;
    // One DNS answer per host for the whole decode (a caller's resolveOnce may already be that).
    this.#opts = { param: 'input[0].url', ...SOURCE_DEFAULTS, ...options, resolve: resolveOnce(options.resolve) };
  }

  /** The decoder's onNet callback. Never throws: every failure goes back to the decoder through the sink. */
  readonly handle = (kind: NetRequestKind, id: number, url: string, offset: number, end: number): void => {
    if (kind === 'close') return this.#close(id);
    if (kind === 'more') return void this.#active.get(id)?.res?.resume();
    void this.#open(id, url, offset, end);
  };

  /** Drops every connection (the decoder was closed or aborted). */
  dispose(): void {
    this.#disposed = true;
    for (const id of [...this.#active.keys()]) this.#close(id);
  }

  #close(id: number): void {
    const a = this.#active.get(id);
    if (!a) return;
    this.#active.delete(id);
    a.controller.abort();
    a.res?.destroy();
  }

  #fatal(id: number, error: ApiError | SourceChangedError): void {
    this.failure ??= error;
    this.#sink.fail(id, error instanceof DecodeError ? error.code : 'fetch_failed', error.message, true);
  }

  async #open(id: number, url: string, offset: number, end: number): Promise<void> {
    if (this.#disposed) return this.#sink.fail(id, 'aborted', 'Decoding was aborted', false);
    // After a fatal failure nothing more is fetched. FFmpeg's HLS demuxer takes a read error in a playlist for its
    // end, so a playlist cut at the size limit can still name a segment, and its open may reach here before the
    // decoder's thread has seen the failure.
    if (this.failure) return this.#fatal(id, this.failure);
    if (this.#input === null) {
      this.#input = url;
      this.#firstId = id;
    }
    if (url === this.#input) this.#inputIds.add(id);
    const now = Date.now();
    this.requests++;
    this.#recent.push(now);
    while (this.#recent.length > 0 && this.#recent[0]! <= now - this.#opts.requestWindowMs) this.#recent.shift();
    if (this.#recent.length > this.#opts.maxRequests) {
      return this.#fatal(
        id,
        new DecodeError(
          'source_limit_exceeded',
          `The video source made more than ${this.#opts.maxRequests} requests within ${this.#opts.requestWindowMs / 1000} s (a playlist that names itself or reloads without pause?)`,
        ),
      );
    }
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return this.#fatal(
        id,
        errors.urlNotAllowed(
          this.#opts.param,
          `the source names ${JSON.stringify(url.slice(0, 200))}, which is not a URL`,
        ),
      );
    }
    const controller = new AbortController();
    const active: Active = { controller };
    this.#active.set(id, active);
    const { param } = this.#opts;
    try {
      const ranged = offset > 0 || end >= 0;
      const { res, url: final } = await openMediaResponse(target, {
        ...this.#opts.policy,
        param,
        media: 'video',
        maxRedirects: this.#opts.maxRedirects,
        signal: controller.signal,
        resolve: this.#opts.resolve,
        ...(ranged ? { range: { start: offset, end } } : {}),
      });
      if (this.#active.get(id) !== active) return void res.destroy();
      active.res = res;
      this.#stream(id, res, final, offset, end);
    } catch (e) {
      if (this.#active.get(id) !== active) return;
      this.#active.delete(id);
      if (e instanceof ApiError && e.code === 'url_not_allowed') return this.#fatal(id, e);
      const message = e instanceof Error ? e.message : String(e);
      this.#sink.fail(id, 'fetch_failed', message, false);
    }
  }

  /** Reports the head, then streams the body into the sink with backpressure, honouring a range the server ignored. */
  #stream(id: number, res: IncomingMessage, final: URL, offset: number, end: number): void {
    const partial = res.statusCode === 206;
    const range = /\/(\d+)\s*$/.exec(String(res.headers['content-range'] ?? ''));
    const length = Number(res.headers['content-length']);
    const size = partial
      ? range
        ? Number(range[1])
        : -1
      : Number.isFinite(length) && res.headers['content-length'] !== undefined
        ? length
        : -1;
    const seekable = size >= 0 && (partial || String(res.headers['accept-ranges'] ?? '').toLowerCase() === 'bytes');
    if (this.#inputIds.delete(id)) {
      const etag = res.headers.etag;
      const modified = res.headers['last-modified'];
      const identity: SourceIdentity | null =
        size >= 0 && (etag || modified)
          ? { length: size, ...(etag ? { etag } : {}), ...(modified ? { last_modified: modified } : {}) }
          : null;
      // A continued task reads the checkpoint's resource; any run reads one resource from its first response on
      // (a file replaced between two range requests would mix two files' bytes). A playlist has no identity.
      const want = this.#opts.expect ?? (id !== this.#firstId ? this.identity : null);
      if (want) {
        const when = this.#opts.expect ? 'since the checkpoint' : 'while it was read';
        const change = identityChange(want, identity, final.host, when);
        if (change) {
          this.#close(id);
          return this.#fatal(id, new SourceChangedError(change));
        }
      }
      if (id === this.#firstId) this.identity = identity;
    }
    this.#sink.head(id, size, seekable, final.toString());
    // A server that answered 200 to a range request sends the whole resource: skip to the range ourselves.
    let skip = !partial && offset > 0 ? offset : 0;
    let left = end >= 0 ? end - offset : Infinity;
    let sniffed = offset > 0;
    let playlist = false;
    let total = 0;
    res.on('data', (chunk: Buffer) => {
      if (skip > 0) {
        const drop = Math.min(skip, chunk.length);
        skip -= drop;
        chunk = chunk.subarray(drop);
        if (chunk.length === 0) return;
      }
      if (chunk.length > left) chunk = chunk.subarray(0, left);
      left -= chunk.length;
      if (!sniffed) {
        sniffed = true;
        playlist = chunk.subarray(0, 16).indexOf(PLAYLIST_MAGIC) >= 0;
        // A playlist's own identity says nothing of its segments' bytes.
        if (playlist && id === this.#firstId) this.identity = null;
      }
      total += chunk.length;
      if (playlist && total > this.#opts.maxPlaylistBytes) {
        this.#close(id);
        return this.#fatal(
          id,
          new DecodeError(
            'source_limit_exceeded',
            `The HLS playlist ${final.host}${final.pathname} is larger than ${this.#opts.maxPlaylistBytes} bytes`,
          ),
        );
      }
      const answer = this.#sink.push(id, chunk);
      if (answer < 0) return this.#close(id);
      if (answer > 0) res.pause();
      if (left === 0) {
        this.#close(id);
        this.#sink.end(id);
      }
    });
    res.once('end', () => {
      if (!this.#active.has(id)) return;
      this.#active.delete(id);
      this.#sink.end(id);
    });
    const cut = (e?: Error) => {
      if (!this.#active.has(id)) return;
      this.#active.delete(id);
      this.#sink.fail(
        id,
        'fetch_failed',
        `${final.host} closed the connection before the body was complete${e ? ` (${e.message})` : ''}`,
        false,
      );
    };
    res.on('error', cut);
    res.once('close', () => {
      if (!res.complete) cut();
    });
  }
}
