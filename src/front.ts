// `sightflow __front`, a front process (SIGHTFLOW_HTTP_FRONTS): started by `serve`, it listens on the server's
// port with the other fronts (the kernel spreads connections over them; `serve` itself listens only on a
// loopback port for them) and takes the image routes' HTTP off the event loop of the process that runs the models: request, API key (looked up once by the owner, then cached here), body, JSON, validation, base64
// and the reply. The owner gets the image's bytes and the caller over the pipe and runs the route's use case
// (models, rate limit, usage rows), so answers, errors and bills are the ones `serve` gives alone. Every other
// request is passed to `serve` over loopback. No model, database or video code is loaded here.
import { Authenticator } from './auth/authenticator.js';
import { createLogger, requestLogger } from './base/log.js';
import type { Config } from './config/index.js';
import { visionRoutes } from './vision/vision.routes.js';
import { HttpServer } from './http/server.js';
import { proxyTo } from './http/fronts/front-proxy.js';
import type { FrontMessage, OwnerMessage } from './http/fronts/front-wire.js';
import { OwnerLink } from './http/fronts/owner-link.js';
import { spanningRequests } from './tracing/request-spans.js';
import { startSpanExport } from './tracing/spans.js';

export async function runFront(config: Config, ownerPort: number): Promise<void> {
  const send = process.send?.bind(process);
  if (!send) throw new Error('a front process is started by `sightflow serve` (SIGHTFLOW_HTTP_FRONTS > 0)');
  const log = createLogger(config.logLevel).child({ front: process.pid });
  let stopping: Promise<void> | null = null;
  const link = new OwnerLink(
    (m: FrontMessage) => send(m),
    () => void stop(),
  );
  const proxy = proxyTo(ownerPort);
  // With an OTLP endpoint the requests answered here are SERVER spans too, handed to the owner's exporter; the
  // span ids are made here, so the calls the owner makes for a request hang under its span.
  if (config.otlp) startSpanExport(link.spanRecorder);
  const logged = config.otlp ? spanningRequests(requestLogger(log)) : requestLogger(log);
  const server = new HttpServer(
    {
      log,
      requestLog: (r) => {
        link.ended(r);
        link.observe(r);
        logged(r);
      },
      authenticator: new Authenticator(link.keys, config.keyCacheMs),
      // The owner takes from each key's bucket when it runs the call, and for a request refused here when it
      // ends (link.ended): one bucket, however many fronts. A key the owner found empty is refused here, 429,
      // until its bucket refills (front-limits.ts).
      rateLimiter: link.limits,
      maxJsonBytes: config.maxJsonBytes,
      bodyTimeoutMs: config.bodyTimeoutMs,
    },
    { fallback: proxy.handle },
  );
  for (const r of visionRoutes({ ...link.calls, vlm: null })) server.route(r);

  const stop = () =>
    (stopping ??= (async () => {
      await server.stop(config.shutdownTimeoutMs);
      const until = Date.now() + config.shutdownTimeoutMs;
      while (proxy.inFlight() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      link.flushRecords();
      log.flush();
      // Let the pipe take the last records before the process goes.
      await new Promise((r) => setTimeout(r, 50));
      process.exit(0);
    })());
  process.on('message', (m: OwnerMessage) => link.receive(m));
  // The owner went away (killed, crashed): nothing here can answer without it.
  process.on('disconnect', () => {
    link.closed();
    log.flush();
    process.exit(1);
  });
  // The owner stops its fronts itself; a signal meant for the whole group (Ctrl-C, a supervisor) starts the
  // same drain here, and the owner waits for it.
  process.on('SIGTERM', () => void stop());
  process.on('SIGINT', () => void stop());
  await link.hello();
  await server.listen(config.host, config.port);
  send({ t: 'ready', pid: process.pid });
}
