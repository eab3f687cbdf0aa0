// The metrics port (SIGHTFLOW_METRICS_PORT): GET /metrics and nothing else, without a credential, on its own
// listener, so that a `sightflow worker` (which serves no HTTP) is scraped the same way as a `serve` node,
// the scrape never queues behind API traffic in uWS, and an operator can keep the port on a private
// interface instead of handing Prometheus an admin token.
import { createServer, type Server } from 'node:http';
import { renderMetrics } from './registry.js';

export interface MetricsListener {
  port: number;
  close(): Promise<void>;
}

export function listenMetrics(host: string, port: number, onError: (err: unknown) => void): Promise<MetricsListener> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') {
      res
        .writeHead(404, { 'content-type': 'text/plain; charset=utf-8' })
        .end('not found: the metrics port serves GET /metrics\n');
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res
        .writeHead(405, { allow: 'GET, HEAD', 'content-type': 'text/plain; charset=utf-8' })
        .end('method not allowed\n');
      return;
    }
    renderMetrics(req.headers.accept).then(
      ({ contentType, body }) => {
        res
          .writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store' })
          .end(req.method === 'HEAD' ? undefined : body);
      },
      (err: unknown) => {
        onError(err);
        res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' }).end('metrics collection failed\n');
      },
    );
  });
  // Prometheus keeps its connection open between scrapes; shutdown must not wait for it.
  server.keepAliveTimeout = 65_000;
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const addr = server.address();
      resolve({
        port: typeof addr === 'object' && addr ? addr.port : port,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            server.closeAllConnections();
          }),
      });
    });
  });
}
