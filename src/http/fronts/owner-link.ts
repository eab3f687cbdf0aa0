// A front process's side of the pipe to `serve`: API-key lookups for its authenticator, the image routes'
// calls (VisionPort), and the request records for the owner's metrics with the requests' spans for its exporter. The image's base64 is decoded here, so
// the owner gets bytes, as from an upload, and spends none of its event loop on the text.
import { decodeBase64 } from '../../media/base64.js';
import { IMAGE_MAX_BYTES } from '../../media/image-input.js';
import type { SpanRecord, SpanRecorder } from '../../tracing/spans.js';
import type { Caller } from '../../usage/billing.js';
import { FrontLimits } from './front-limits.js';
import {
  asBuffer,
  fromWire,
  type FrontMessage,
  type KeyRow,
  type ObservedRequest,
  type OwnerMessage,
  type VisionCalls,
  type VisionOp,
} from './front-wire.js';

/** How often a front hands its request records (and spans) to the owner. */
const RECORDS_EVERY_MS = 100;

interface Pending {
  resolve: (v: any) => void;
  reject: (e: unknown) => void;
}

export class OwnerLink {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private records: ObservedRequest[] = [];
  private spans: SpanRecord[] = [];
  /** Requests whose call went to the owner (it took from the key's rate-limit bucket for them). */
  private readonly reached = new Set<string>();
  private recordsTimer: NodeJS.Timeout | undefined;
  /** The keys `serve` found out of requests, for this front's HTTP server to answer 429 itself. */
  readonly limits = new FrontLimits();
  private welcomed: (() => void) | undefined;

  constructor(
    private readonly send: (m: FrontMessage) => void,
    private readonly onStop: () => void,
  ) {}

  /** Every message from the owner comes here. */
  receive(m: OwnerMessage): void {
    if (m.t === 'stop') return this.onStop();
    if (m.t === 'limited') {
      this.limits.limited(m.keyId, m.forMs);
      return this.send({ t: 'heard', seq: m.seq });
    }
    if (m.t === 'welcome') {
      for (const l of m.limited) this.limits.limited(l.keyId, l.forMs);
      return this.welcomed?.();
    }
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.t === 'key') {
      if (m.error) p.reject(new Error(m.error));
      else p.resolve(m.row ? { ...m.row, key_hash: asBuffer(m.row.key_hash) } : null);
    } else if (m.t === 'done') p.resolve(m.json);
    else p.reject(fromWire(m.error));
  }

  /**
   * Asks the owner for the keys whose buckets are empty now and resolves when they are known: called before
   * the front listens, so its first request is refused as `serve` would refuse it.
   */
  hello(): Promise<void> {
    return new Promise((resolve) => {
      this.welcomed = resolve;
      this.send({ t: 'hello' });
    });
  }

  /** The owner went away: whatever waits on it fails (the front then exits). */
  closed(): void {
    for (const p of this.pending.values()) p.reject(new Error('the serve process went away'));
    this.pending.clear();
  }

  /** The authenticator's store (auth/projects.ts keyByHash and touchKey), answered by the owner's database. */
  readonly keys = {
    keyByHash: (hash: Buffer): Promise<KeyRow | null> =>
      new Promise((resolve, reject) => {
        const id = this.nextId++;
        this.pending.set(id, { resolve, reject });
        this.send({ t: 'key', id, hash });
      }),
    touchKey: async (keyId: string): Promise<void> => this.send({ t: 'touch', keyId }),
  };

  /** The image routes' use cases, run by the owner. */
  readonly calls: VisionCalls = {
    detect: (caller, body) => this.call('detect', caller, body),
    ocr: (caller, body) => this.call('ocr', caller, body),
    describe: (caller, body) => this.call('describe', caller, body),
  };

  /**
   * A request this front ended: one that authenticated but never reached the owner (refused here) takes from
   * its key's bucket in the owner now, as `serve` alone takes before it reads a body, so refused requests
   * count against the rate limit whichever process answered them. A 429 this front answered takes nothing
   * (`serve` alone takes nothing from an empty bucket).
   */
  ended(r: { requestId: string; keyId?: string; status: number }): void {
    if (!this.reached.delete(r.requestId) && r.keyId && r.status !== 429) this.send({ t: 'take', keyId: r.keyId });
  }

  observe(r: ObservedRequest): void {
    this.records.push({
      method: r.method,
      route: r.route,
      status: r.status,
      startedMs: r.startedMs,
      endedMs: r.endedMs,
      bytesIn: r.bytesIn,
      bytesOut: r.bytesOut,
    });
    this.recordsTimer ??= setTimeout(() => this.flushRecords(), RECORDS_EVERY_MS);
  }

  /**
   * Where this front's spans go while the owner exports them (tracing/spans.ts startSpanExport): to the owner's
   * exporter with the request records, so a front needs no collector connection of its own.
   */
  readonly spanRecorder: SpanRecorder = {
    record: (s) => {
      this.spans.push(s);
      this.recordsTimer ??= setTimeout(() => this.flushRecords(), RECORDS_EVERY_MS);
    },
    close: async () => this.flushRecords(),
  };

  flushRecords(): void {
    if (this.recordsTimer) clearTimeout(this.recordsTimer);
    this.recordsTimer = undefined;
    if (this.records.length === 0 && this.spans.length === 0) return;
    const { records, spans } = this;
    this.records = [];
    this.spans = [];
    if (spans.length === 0) this.send({ t: 'requests', records });
    else this.send({ t: 'requests', records, spans, origin: performance.timeOrigin });
  }

  private call<R>(op: VisionOp, caller: Caller, body: { image?: unknown; image_base64?: unknown }): Promise<R> {
    // Decoded first: a malformed string is answered here and leaves no call waiting (nor counted in flight).
    const bytes = decoded(body);
    const id = this.nextId++;
    const out = new Promise<R>((resolve, reject) => this.pending.set(id, { resolve, reject }));
    const onAbort = () => this.send({ t: 'abort', id });
    caller.signal.addEventListener('abort', onAbort, { once: true });
    const done = () => caller.signal.removeEventListener('abort', onAbort);
    out.then(done, done);
    this.send({
      t: 'call',
      id,
      op,
      projectId: caller.projectId,
      keyId: caller.keyId!,
      requestId: caller.requestId ?? '',
      traceparent: caller.traceparent,
      body: bytes,
    });
    if (caller.requestId) this.reached.add(caller.requestId);
    return out;
  }
}

/**
 * The body with its base64 image as bytes. Only when `image` is absent: with both given the owner answers the
 * "exactly one" error as it would for any caller. A malformed string fails here with the owner's own error.
 */
function decoded<B extends { image?: unknown; image_base64?: unknown }>(body: B): B {
  if (typeof body.image_base64 !== 'string' || (body.image !== undefined && body.image !== null)) return body;
  return { ...body, image_base64: decodeBase64(body.image_base64, 'image_base64', IMAGE_MAX_BYTES, 'image') };
}
