// Ports for servers that a test stops and starts again on the same port (a camera, a broker) or that a child
// process binds some time after the port was chosen (PostgreSQL, Prometheus). A port from the kernel's
// ephemeral range, what listen(0) hands out, can be taken in between by any outgoing connection on the
// machine, since each gets its local port from that same range; in a suite running files in parallel, many
// connections (and their TIME_WAIT) pass through it, and a camera that could not come back on its port failed
// a test. The kernel gives a port below that range only to whoever asks for it by
// number, so one picked there at random stays free for its server (or closed, for a test that needs a port
// nothing answers on).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/** The first port of the kernel's ephemeral range (Linux: /proc/sys/net/ipv4/ip_local_port_range). */
export function ephemeralLow(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 1024) return low;
  } catch {
    /* not Linux: the IANA range's start */
  }
  return 49152;
}

/** Ports below this are left to services configured by number (PostgreSQL's 5432, MQTT's 1883, ...). */
export const FLOOR = 20000;

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host: '127.0.0.1', exclusive: true }, () => s.close(() => resolve(true)));
  });
}

function anyFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/**
 * A port on 127.0.0.1, free now, that no outgoing connection will take: picked at random below the kernel's
 * ephemeral range. Where that range starts too low to leave room, any free port (the old behaviour).
 */
export async function stablePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  if (high - FLOOR < 1000) return anyFreePort();
  for (let i = 0; i < 50; i++) {
    const port = FLOOR + Math.floor(Math.random() * (high - FLOOR + 1));
    if (await bindable(port)) return port;
  }
  return anyFreePort();
}
