// The TypeScript SDK's retry policy as numbers (docs/clients.md, "Retries"): the wait before retry n is
// min(0.5 * 2^n, 8) s less at most a quarter, never under Retry-After; which statuses are retried; how a
// Retry-After header reads. The conformance cases show the same policy against a real server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isRetryableStatus, retryAfterSeconds, retryDelayMs } from '../../clients/typescript/src/index.js';

test('backoff: min(0.5 * 2^n, 8) s, jitter takes off at most a quarter, Retry-After is the floor', () => {
  const expected = [500, 1000, 2000, 4000, 8000, 8000];
  expected.forEach((ms, n) => {
    assert.equal(
      retryDelayMs(n, null, () => 0),
      ms,
    );
    assert.equal(
      retryDelayMs(n, null, () => 0.999999),
      Math.ceil(ms * (1 - 0.25 * 0.999999)),
    );
    for (let i = 0; i < 50; i++) {
      const d = retryDelayMs(n, null);
      assert.ok(d >= ms * 0.75 && d <= ms, `retry ${n}: ${d} ms`);
    }
  });
  assert.equal(
    retryDelayMs(0, 1, () => 0),
    1000,
    'Retry-After: 1 waits a second, not half of one',
  );
  assert.equal(
    retryDelayMs(5, 1, () => 0),
    8000,
    'a longer backoff is not shortened by Retry-After',
  );
  assert.equal(
    retryDelayMs(0, 0, () => 0.5),
    438,
  );
});

test('retried: 408, 429 and 5xx; never another 4xx', () => {
  for (const s of [408, 429, 500, 502, 503, 504]) assert.ok(isRetryableStatus(s), String(s));
  for (const s of [400, 401, 403, 404, 405, 409, 413, 416, 422]) assert.ok(!isRetryableStatus(s), String(s));
});

test('Retry-After in seconds or as an HTTP date; retry-after-ms wins; garbage is ignored', () => {
  assert.equal(retryAfterSeconds(new Headers({ 'retry-after': '3' })), 3);
  assert.equal(retryAfterSeconds(new Headers({ 'retry-after': '3', 'retry-after-ms': '250' })), 0.25);
  const at = retryAfterSeconds(new Headers({ 'retry-after': new Date(Date.now() + 5000).toUTCString() }))!;
  assert.ok(at > 3 && at <= 5, String(at));
  assert.equal(retryAfterSeconds(new Headers({ 'retry-after': 'soon' })), null);
  assert.equal(retryAfterSeconds(new Headers()), null);
});
