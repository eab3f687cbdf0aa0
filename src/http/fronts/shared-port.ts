// The port `serve` and its fronts share. uWS sets SO_REUSEPORT on a socket bound to a port it is given, not on
// one it asks the kernel to choose (`--port 0`): the fronts could then not join it. So for port 0 with fronts,
// a free port is found first and every process listens on that number.
import { createServer } from 'node:net';
import type { HttpServer } from '../server.js';

const TRIES = 5;

export async function listenShared(server: HttpServer, host: string, port: number): Promise<number> {
  if (port !== 0) return server.listen(host, port);
  let last: unknown;
  // Another process may take the port between the probe and the listen: try again with another.
  for (let i = 0; i < TRIES; i++) {
    try {
      return await server.listen(host, await freePort(host));
    } catch (e) {
      last = e;
    }
  }
  throw last;
}

function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
