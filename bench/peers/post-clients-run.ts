// One run of the C clients (bench/peers/post-clients.c): `connections` keep-alive connections POST one body
// file to a path for `ms` milliseconds; the clients print what they saw as one JSON object.
import { spawn } from 'node:child_process';

export interface ClientsRun {
  wall_ms: number;
  ok: number;
  refused: number;
  errors: number;
  /** Every answered request's latency, ms. */
  ms: number[];
}

export async function postClients(
  exe: string,
  target: { port: number; key: string; path?: string },
  bodyFile: string,
  connections: number,
  ms: number,
): Promise<ClientsRun> {
  const args = [String(target.port), target.path ?? '/v1/vision/detect', target.key, bodyFile, String(connections)];
  const child = spawn(exe, [...args, String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (d: Buffer) => chunks.push(d));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`post-clients exited with ${code}`);
  return JSON.parse(Buffer.concat(chunks).toString()) as ClientsRun;
}

/** The p-quantile of xs (0..1), NaN when empty. */
export function percentile(xs: number[], p: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}
