import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** SIGHTFLOW_EVAL_DIR, default ../shared/eval from the project root; says clearly when it is missing. */
export function evalDir(sub = ''): string {
  const root = process.env.SIGHTFLOW_EVAL_DIR ?? resolve(fileURLToPath(new URL('..', import.meta.url)), '..', 'shared', 'eval');
  const dir = resolve(root, sub);
  if (!existsSync(dir)) {
    console.error(`evaluation data not found at ${dir} (set SIGHTFLOW_EVAL_DIR)`);
    process.exit(2);
  }
  return dir;
}
