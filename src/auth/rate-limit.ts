// Per-key token bucket (off when rps is 0). Answers 429 with Retry-After in whole seconds.
import { errors } from '../base/errors.js';

/** What an HTTP server asks of a rate limit: take one request from a key's bucket, or throw the 429. */
export interface RateGate {
  /** `now` in milliseconds of any steady clock (the server passes the request's performance.now()). */
  take(key: string, now?: number): void;
}

export class RateLimiter implements RateGate {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly rps: number,
    private readonly burst: number,
  ) {}

  get enabled(): boolean {
    return this.rps > 0;
  }

  take(key: string, now?: number): void {
    if (!this.enabled) return;
    now ??= performance.now();
    const b = this.refilled(key, now);
    if (b.tokens < 1) throw errors.rateLimited(retryAfterS(this.untilTokenMs(b)));
    b.tokens -= 1;
  }

  /** Milliseconds until the key's bucket holds a whole request again; 0 when it holds one now. */
  msUntilToken(key: string, now = performance.now()): number {
    return this.enabled ? this.untilTokenMs(this.refilled(key, now)) : 0;
  }

  private refilled(key: string, now: number): { tokens: number; at: number } {
    const cap = Math.max(1, this.burst);
    let b = this.buckets.get(key);
    if (!b) this.buckets.set(key, (b = { tokens: cap, at: now }));
    b.tokens = Math.min(cap, b.tokens + ((now - b.at) / 1000) * this.rps);
    b.at = now;
    return b;
  }

  private untilTokenMs(b: { tokens: number }): number {
    return b.tokens >= 1 ? 0 : ((1 - b.tokens) / this.rps) * 1000;
  }
}

/**
 * A 429's Retry-After: whole seconds, at least one. A wait of whole seconds can come out of clock arithmetic a
 * few ulps over (an end time told as t + 5 s, asked at t + 1 s); a nanosecond's grace keeps that at 4 s, not 5.
 */
export function retryAfterS(ms: number): number {
  return Math.max(1, Math.ceil((ms - 1e-6) / 1000));
}
