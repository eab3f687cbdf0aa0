// Child process for the SSE backpressure test: serves EVENTS events of ~16 KB through SseWriter and, when
// done, prints its RSS before and at peak so the test measures the server alone.
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { uws } from '../../src/http/uws.js';
import { SseWriter } from '../../src/http/sse.js';
import type { ResState } from '../../src/http/send.js';

export const EVENTS = 4000;
export const event = (i: number) => `id: ${i}\ndata: {"i":${i},"p":"${'x'.repeat(16 * 1024)}"}\n\n`;

// Run as a script (the path may be a link, as in the suite's compiled tree: Node runs the real file).
if (import.meta.url === pathToFileURL(realpathSync(process.argv[1] ?? '.')).href) {
  const app = uws.App().get('/stream', (res) => {
    const st: ResState = { aborted: false, done: false, status: 0, onAbort: [], bytesOut: 0 };
    res.onAborted(() => {
      st.aborted = true;
      for (const f of st.onAbort.splice(0)) f();
    });
    const w = new SseWriter(res, st);
    void (async () => {
      const base = process.memoryUsage().rss;
      let peak = base;
      for (let i = 0; i < EVENTS; i++) {
        if (!(await w.write(event(i)))) break;
        if (i % 50 === 0) peak = Math.max(peak, process.memoryUsage().rss);
      }
      w.end();
      process.stdout.write(JSON.stringify({ base, peak }) + '\n');
      setTimeout(() => process.exit(0), 100);
    })();
  });
  app.listen('127.0.0.1', 0, (s) => {
    process.stdout.write(`port ${uws.us_socket_local_port(s as never)}\n`);
  });
}
