// The client bench's load clients through the TypeScript SDK (bench/suites/clients.ts runs this as a child
// process, beside bench/peers/post-clients.c doing the same with raw HTTP): C callers each calling
// vision.detect back to back for a number of milliseconds with the SDK's defaults (two retries that wait
// what Retry-After says). A call the SDK gives up on (its retries spent) waits its Retry-After before the
// caller's next one, as the C clients do after each 503. Every 503 the server answers is counted.
//
//   node --import tsx bench/sdk-clients.ts PORT KEY BODY_FILE C MS
//
// One JSON line to stdout at the end: {"wall_ms", "ok", "refused", "errors", "ms": [latency of each call that
// succeeded, retries included, in ms]}.
import { setMaxListeners } from 'node:events';
import { readFileSync } from 'node:fs';
import { Sightflow, OverloadedError, APIError } from '../clients/typescript/src/index.js';

const [port, key, bodyFile, c, ms] = process.argv.slice(2);
const image = (JSON.parse(readFileSync(bodyFile!, 'utf8')) as { image_base64: string }).image_base64;
let refused = 0;
let ok = 0;
let errors = 0;
const times: number[] = [];
const client = new Sightflow({
  baseURL: `http://127.0.0.1:${port}`,
  apiKey: key,
  fetch: async (input, init) => {
    const r = await fetch(input, init);
    if (r.status === 503 && performance.now() < until) refused++;
    return r;
  },
});

const started = performance.now();
const until = started + Number(ms);
// The C clients stop at the deadline; so do these, retries in flight included.
const stop = AbortSignal.timeout(Number(ms));
setMaxListeners(0, stop);
await Promise.all(
  Array.from({ length: Number(c) }, async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      try {
        await client.vision.detect(image, {}, { signal: stop });
        ok++;
        times.push(performance.now() - t0);
      } catch (err) {
        if (stop.aborted) break;
        if (!(err instanceof APIError)) {
          errors++;
          continue;
        }
        if (!(err instanceof OverloadedError)) {
          errors++;
          continue;
        }
        const after = Number(err.headers.get('retry-after') ?? 0.05);
        await new Promise((r) => setTimeout(r, Math.min(60, after) * 1000));
      }
    }
  }),
);
process.stdout.write(`${JSON.stringify({ wall_ms: performance.now() - started, ok, refused, errors, ms: times })}\n`);
