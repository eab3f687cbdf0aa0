// Builds test/helpers/nvml-stub.c, a stand-in for the NVIDIA driver's management library, as
// DIR/libnvidia-ml.so.1: a process started with LD_LIBRARY_PATH=DIR reads its cards as a GPU host's. Each call
// builds into a fresh directory (a new file, so the loader does not hand back one opened before).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SOURCE = fileURLToPath(new URL('./nvml-stub.c', import.meta.url));

export interface NvmlStub {
  dir: string;
  /** DIR/libnvidia-ml.so.1 */
  library: string;
  remove(): void;
}

export function buildNvmlStub(): NvmlStub {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-nvml-stub-'));
  const library = join(dir, 'libnvidia-ml.so.1');
  const r = spawnSync('cc', ['-O1', '-shared', '-fPIC', '-o', library, SOURCE], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`nvml-stub.c did not compile: ${r.error?.message ?? r.stderr}`);
  }
  return { dir, library, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
