// Request ids: a random per-process prefix (unique across nodes and restarts) plus a counter, 32 hex
// characters like a UUID without its cost on every request. The counter's last three hex digits come from a
// table and the rest is formatted once per 4096 requests: a number formatted and padded per request was
// measurable.
import { randomUUID } from 'node:crypto';

const ID_PREFIX = randomUUID().replace(/-/g, '').slice(0, 20);
const ID_LOW = Array.from({ length: 4096 }, (_, i) => i.toString(16).padStart(3, '0'));
let idCounter = 0;
let idHigh = '';

export function nextRequestId(): string {
  const n = ++idCounter;
  const low = n % 4096;
  if (low === 0 || idHigh === '')
    idHigh = `req_${ID_PREFIX}${Math.floor(n / 4096)
      .toString(16)
      .padStart(9, '0')}`;
  return idHigh + ID_LOW[low]!;
}
