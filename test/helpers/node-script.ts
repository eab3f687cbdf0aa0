// How a test or bench runs a TypeScript script as a child process. The suite runs from its compiled tree
// (scripts/lib/test-tree.sh: each .ts there is a link with its compiled .js beside it), and a child from that
// tree runs the .js: through tsx the same child spends more CPU starting (loader hooks and a transform for
// every module; docs/benchmarks.md, "The test suite's compiled JavaScript"), and the suite starts many
// (workers killed and restarted, fixtures). Run from the sources (node --import tsx), there is no .js beside
// the script and the child runs through tsx too.
import { existsSync } from 'node:fs';

const fromTree = import.meta.url.endsWith('.js');

/** Node's arguments that run `script` (a .ts path; a .js one runs as it is). */
export function scriptArgs(script: string): string[] {
  if (script.endsWith('.js')) return ['--enable-source-maps', script];
  const js = `${script.slice(0, -3)}.js`;
  if (fromTree && script.endsWith('.ts') && existsSync(js)) return ['--enable-source-maps', js];
  return ['--import', 'tsx', script];
}
