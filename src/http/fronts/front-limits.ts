// A front's view of the keys' rate limits. The buckets live in `serve` (one per key, however many processes
// answer it); when `serve` refuses a key it tells every front how long the bucket stays empty, and a front
// answers that key's requests 429 itself until then, before it reads a body, as `serve` alone does. Nothing is
// asked per request: a front that has not heard yet passes the request on and `serve` refuses it there.
import { errors } from '../../base/errors.js';
import { retryAfterS, type RateGate } from '../../auth/rate-limit.js';

export class FrontLimits implements RateGate {
  /** Key id -> until when (this process's performance.now()) its bucket is empty. */
  private readonly emptyUntil = new Map<string, number>();

  /** `serve` refused this key: its bucket holds no request for `forMs` from now. */
  limited(keyId: string, forMs: number, now = performance.now()): void {
    const until = now + forMs;
    if (until <= (this.emptyUntil.get(keyId) ?? 0)) return;
    // Keys whose buckets have refilled go as another empties, so keys never used again are not kept.
    for (const [k, u] of this.emptyUntil) if (u <= now) this.emptyUntil.delete(k);
    this.emptyUntil.set(keyId, until);
  }

  take(keyId: string, now = performance.now()): void {
    const until = this.emptyUntil.get(keyId);
    if (until === undefined) return;
    if (now >= until) {
      this.emptyUntil.delete(keyId);
      return;
    }
    throw errors.rateLimited(retryAfterS(until - now));
  }
}
