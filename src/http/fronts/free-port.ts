// A free port for the front processes when `serve` is asked for port 0: uWS sets SO_REUSEPORT only on a port it
// is given, not on one it asks the kernel to choose, so the fronts could not share a port the kernel picked for
// one of them. The port is found first and every front listens on that number.
import { createServer } from 'node:net';

export function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}
