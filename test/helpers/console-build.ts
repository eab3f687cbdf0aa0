// The e2e tests run against the built console (console/dist, what the server really serves). Setup builds
// it; this rebuilds when a source file is newer than the build, so the tests never check stale assets.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { projectRoot } from '../../src/base/paths.js';

const consoleDir = join(projectRoot, 'console');

function newestSource(dir: string): number {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'dist' || e.name === 'node_modules') continue;
    const p = join(dir, e.name);
    newest = Math.max(newest, e.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

export function ensureConsoleBuilt(): void {
  const index = join(consoleDir, 'dist', 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestSource(consoleDir)) return;
  execFileSync(
    join(projectRoot, 'node_modules', '.bin', 'vite'),
    ['build', '--config', join(consoleDir, 'vite.config.ts')],
    { cwd: projectRoot, stdio: 'inherit' },
  );
}
