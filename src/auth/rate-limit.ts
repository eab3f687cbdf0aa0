// Per-key token bucket (off when rps is 0). Answers 429 with Retry-After in whole seconds.
import { errors } from '../base/errors.js';

export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly rps: number,
    private readonly burst: number,
  ) {}

  get enabled(): boolean {
    return this.rps > 0;
  }

  /** `now` in milliseconds of any steady clock (the server passes the request's performance.now()). */
  take(key: string, now?: number): void {
    if (!this.enabled) return;
    now ??= performance.now();
    const cap = Math.max(1, this.burst);
    const b = this.buckets.get(key) ?? { tokens: cap, at: now };
    b.tokens = Math.min(cap, b.tokens + ((now - b.at) / 1000) * this.rps);
    b.at = now;
    if (b.tokens < 1) {
      this.buckets.set(key, b);
      throw errors.rateLimited(Math.max(1, Math.ceil((1 - b.tokens) / this.rps)));
    }
    b.tokens -= 1;
    this.buckets.set(key, b);
  }
}
