// The benches' C peers (load clients and readers that stand for callers on other machines, bench/peers/*.c),
// compiled with the system's cc into a temporary directory when a bench starts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

/** bench/peers/NAME.c built as an executable; null, with the reason printed, without a C compiler. Remove `dir` when done. */
export function compilePeer(name: string, purpose: string): { exe: string; dir: string } | null {
  const dir = mkdtempSync(join(tmpdir(), `sightflow-${name}-`));
  const exe = join(dir, name);
  const r = spawnSync('cc', ['-O2', '-o', exe, join(HERE, `${name}.c`)], { stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status === 0) return { exe, dir };
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `${purpose} run in Node.js: bench/peers/${name}.c did not compile (${r.error?.message ?? r.stderr?.toString().trim().split('\n')[0]})`,
  );
  return null;
}
