import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The project root (where package.json is), from src/ under tsx, dist/src/ when built, or the suite's compiled
 * tree (scripts/test-tree.ts), whose package.json is a link to the real one: the root is that file's folder.
 */
export const projectRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above ' + fileURLToPath(import.meta.url));
    dir = up;
  }
  return dirname(realpathSync(join(dir, 'package.json')));
})();

export const VERSION: string = (
  JSON.parse(readFileSync(join(projectRoot, 'package.json'), 'utf8')) as { version: string }
).version;
