// The token bucket's refusal and the time it names, and a front's copy of that refusal (front-limits.ts): both
// answer the same 429 (code and Retry-After) for as long as the bucket is empty, and let the key through after.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiter } from '../../src/auth/rate-limit.js';
import { FrontLimits } from '../../src/http/fronts/front-limits.js';

function refusal(f: () => void): { code: string; retryAfter: string } | null {
  try {
    f();
    return null;
  } catch (e) {
    const err = e as { code: string; headers: Record<string, string> };
    return { code: err.code, retryAfter: err.headers['Retry-After']! };
  }
}

test('msUntilToken names when the emptied bucket takes again; a front told so refuses as the bucket does', () => {
  const limiter = new RateLimiter(0.5, 2);
  assert.equal(limiter.msUntilToken('k', 0), 0);
  limiter.take('k', 0);
  limiter.take('k', 0);
  const wait = limiter.msUntilToken('k', 100);
  assert.ok(Math.abs(wait - 1900) < 1e-6, String(wait));
  // msUntilToken takes nothing: the bucket is as empty after it as before.
  assert.ok(Math.abs(limiter.msUntilToken('k', 100) - 1900) < 1e-6);

  const front = new FrontLimits();
  const now = performance.now();
  front.limited('k', wait, now);
  // Away from whole seconds of the wait: the two clocks differ in their last bits there.
  for (const dt of [0, 850, 950, 1850]) {
    const a = refusal(() => limiter.take('k', 100 + dt));
    const b = refusal(() => front.take('k', now + dt));
    assert.deepEqual(b, a, `${dt} ms later`);
    assert.equal(a?.code, 'rate_limit_exceeded');
  }
  assert.equal(
    refusal(() => front.take('k', now + 1901)),
    null,
  );
  assert.equal(
    refusal(() => limiter.take('k', 2000)),
    null,
  );
  // Other keys are not touched, and a shorter word never shortens a longer one.
  assert.equal(
    refusal(() => front.take('other', now)),
    null,
  );
  front.limited('j', 5000, now);
  front.limited('j', 10, now);
  assert.equal(refusal(() => front.take('j', now + 1000))?.retryAfter, '4');
  // At 0.1 ms the end less the time asked is a few ulps over 4000 ms: still 4 s (it once said 5, by the clock).
  front.limited('m', 5000, 0.1);
  assert.ok(0.1 + 5000 - (0.1 + 1000) > 4000);
  assert.equal(refusal(() => front.take('m', 0.1 + 1000))?.retryAfter, '4');
});
