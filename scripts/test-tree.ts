// The suite's compiled tree: every TypeScript file of src/, test/, bench/, eval/, scripts/, console/ and clients/
// compiled once to JavaScript (esbuild, as tsx would), at the same relative path under one folder, with
// everything else there as a link to the real file: fixtures, the .ts sources themselves (helpers that a test
// spawns through tsx), node_modules, and every other top-level entry (package.json, models, build, dist,
// docs...). Tests then run as plain JavaScript: a test process that loads the app through tsx spends more CPU
// than one that loads compiled code (tsx's module hooks run on a thread of their own, and each inference worker
// registers them again), and the suite starts some 200 of them (docs/benchmarks.md, "The test suite's compiled
// JavaScript"). Source maps name the .ts lines in stacks; they are files beside the code rather than inline,
// where they made each module's text several times as long for every process to read (the same section).
// File-relative paths hold because the layout is the same; the project root (src/base/paths.ts) resolves to
// the real one through the package.json link.
// Usage: node --import tsx scripts/test-tree.ts [out-dir] (default .tmp/js; made anew each run).
import { build } from 'esbuild';
import { mkdirSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { projectRoot } from '../src/base/paths.js';

const COMPILED = new Set(['src', 'test', 'bench', 'eval', 'scripts', 'console', 'clients']);
/** Top-level entries left out: the repository's own metadata and the working folder the tree lives in. */
const SKIPPED = new Set(['.git', '.tmp']);

const out = resolve(process.argv[2] ?? join(projectRoot, '.tmp', 'js'));
const started = Date.now();
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });

const entryPoints: string[] = [];
let links = 0;
function link(from: string): void {
  symlinkSync(from, join(out, relative(projectRoot, from)));
  links++;
}
function isSource(name: string): boolean {
  return name.endsWith('.ts') && !name.endsWith('.d.ts');
}
function hasSources(dir: string): boolean {
  return readdirSync(dir, { withFileTypes: true }).some((d) =>
    d.isDirectory() ? d.name !== 'node_modules' && hasSources(join(dir, d.name)) : d.isFile() && isSource(d.name),
  );
}
function mirror(dir: string): void {
  mkdirSync(join(out, relative(projectRoot, dir)), { recursive: true });
  for (const d of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, d.name);
    if (d.isDirectory() && d.name !== 'node_modules' && hasSources(path)) mirror(path);
    else {
      link(path);
      if (d.isFile() && isSource(d.name)) entryPoints.push(path);
    }
  }
}
for (const d of readdirSync(projectRoot, { withFileTypes: true })) {
  if (SKIPPED.has(d.name)) continue;
  if (COMPILED.has(d.name) && d.isDirectory()) mirror(join(projectRoot, d.name));
  else link(join(projectRoot, d.name));
}

await build({
  entryPoints,
  outdir: out,
  outbase: projectRoot,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
});
console.log(`test tree: ${entryPoints.length} files compiled, ${links} links, in ${out} (${Date.now() - started} ms)`);
