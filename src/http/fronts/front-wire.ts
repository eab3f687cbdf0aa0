// The messages between `serve` (the owner of the models, the database and the rate limits) and its front
// processes, over the pipe child_process.fork opens with 'advanced' serialization: Buffers cross as bytes, so
// an image decoded from base64 in a front reaches the owner without being encoded again.
import { relayedError, type ApiError, type ErrorFields } from '../../base/errors.js';
import type { ObservedRequest } from '../../metrics/http.js';
import type { SpanRecord } from '../../tracing/spans.js';
import type { Caller } from '../../usage/billing.js';

/** The image routes a front answers itself; every other route it passes to the owner over loopback. */
export type VisionOp = 'detect' | 'ocr' | 'describe';

/** The use cases behind those routes: the vision service in `serve`, the pipe to it in a front. */
export type VisionCalls = Record<VisionOp, (caller: Caller, body: any) => Promise<any>>;

/** A key row as the authenticator reads it (auth/projects.ts keyByHash). */
export interface KeyRow {
  id: string;
  project_id: string;
  key_hash: Buffer;
  disabled: boolean;
}

/** What a front's request line adds to the owner's HTTP metrics (metrics/http.ts observeRequest). */
export type { ObservedRequest };

export type FrontMessage =
  /** Before it listens: the front asks which keys' buckets are empty (the owner answers 'welcome'). */
  | { t: 'hello' }
  | { t: 'ready'; pid: number }
  /** The front has taken in the 'limited' message with this `seq`. */
  | { t: 'heard'; seq: number }
  | { t: 'key'; id: number; hash: Buffer }
  | { t: 'touch'; keyId: string }
  /** A request with this key that the front answered itself (a malformed body, a wrong method): `serve` alone takes from the key's bucket for it too. */
  | { t: 'take'; keyId: string }
  | {
      t: 'call';
      id: number;
      op: VisionOp;
      projectId: string;
      keyId: string;
      requestId: string;
      traceparent?: string;
      body: unknown;
    }
  | { t: 'abort'; id: number }
  /**
   * Request records for the owner's metrics and, while spans are exported, the requests' SERVER spans, their
   * times on the front's clock (performance.now() from `origin`, the front's performance.timeOrigin).
   */
  | { t: 'requests'; records: ObservedRequest[]; spans?: SpanRecord[]; origin?: number };

/** An answered error as it crosses the pipe (errors.ts relayedError makes it again). */
export type WireError = ErrorFields;

export type OwnerMessage =
  | { t: 'key'; id: number; row: KeyRow | null; error?: string }
  | { t: 'done'; id: number; json: unknown }
  | { t: 'fail'; id: number; error: WireError }
  /**
   * The key's bucket in `serve` is empty for `forMs` more: the front answers its requests 429 meanwhile, and
   * says 'heard' with `seq` (`serve` holds the 429 that emptied it until every front has).
   */
  | { t: 'limited'; keyId: string; forMs: number; seq: number }
  /** The answer to 'hello': the keys whose buckets are empty now, each for `forMs` more. */
  | { t: 'welcome'; limited: Array<{ keyId: string; forMs: number }> }
  | { t: 'stop' };

export function toWire(e: ApiError): WireError {
  return { status: e.status, type: e.type, code: e.code, message: e.message, param: e.param, headers: e.headers };
}

/** The owner's error, thrown again in the front so its exchange answers it as the owner would have. */
export function fromWire(w: WireError): ApiError {
  return relayedError(w);
}

/** A Buffer that crossed the pipe (some Node versions hand typed arrays back as Uint8Array). */
export function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}
