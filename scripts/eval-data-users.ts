// Which test files, benches and evaluations read the evaluation data or the real bring-your-own model exports,
// for the check that runs exactly those without them (scripts/test.d/85-no-eval-data.sh). Found by imports, not kept as a list, so a new reader cannot
// be left out: a file reads the data when its relative imports reach eval/dir.ts, the one place that knows
// where the data lives (tests reach it through test/helpers/eval-data.ts, which nothing else imports, so the
// users of the other helpers are not run for nothing), or eval/byo-dir.ts, the one place that knows where the
// exports live. A file that spells either location itself would escape that, so any file outside those two
// naming SIGHTFLOW_EVAL_DIR, shared/eval, SIGHTFLOW_BYO_MODELS_DIR or shared/byo-models in code fails this script.
// Prints one line per reader: `test <path>`, `bench <suite>` or `eval <task>`.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const DIR_MODULE = resolve(root, 'eval/dir.ts');
const BYO_MODULE = resolve(root, 'eval/byo-dir.ts');
const SELF = fileURLToPath(import.meta.url);

function tsFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith('.ts') && !join(d.parentPath, d.name).includes('/node_modules/'))
    .map((d) => join(d.parentPath, d.name));
}

/** Relative imports of a file (static, side-effect and dynamic), as paths of .ts files that exist. */
function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = resolve(dirname(file), m[1]!);
    const ts = target.replace(/\.js$/, '.ts');
    if (existsSync(ts)) out.push(ts);
    else if (existsSync(target)) out.push(target);
  }
  return out;
}

const reaches = new Map<string, boolean>();
function readsEvalData(file: string, path: Set<string> = new Set()): boolean {
  if (file === DIR_MODULE || file === BYO_MODULE) return true;
  const known = reaches.get(file);
  if (known !== undefined) return known;
  if (path.has(file)) return false; // an import cycle: decided where it started
  path.add(file);
  const result = imports(file).some((f) => readsEvalData(f, path));
  path.delete(file);
  reaches.set(file, result);
  return result;
}

// Code (not comments) that locates the data on its own.
const LOCATES =
  /SIGHTFLOW_EVAL_DIR|SIGHTFLOW_BYO_MODELS_DIR|shared\/eval|shared\/byo-models|['"]shared['"]\s*,\s*['"](?:eval|byo-models)['"]/;
const bypass: string[] = [];
for (const file of ['src', 'test', 'bench', 'eval', 'scripts'].flatMap((d) => tsFiles(join(root, d)))) {
  if (file === DIR_MODULE || file === BYO_MODULE || file === SELF) continue;
  readFileSync(file, 'utf8')
    .split('\n')
    .forEach((line, i) => {
      const code = line.trimStart();
      if (code.startsWith('//') || code.startsWith('*') || code.startsWith('/*')) return;
      if (LOCATES.test(code)) bypass.push(`${relative(root, file)}:${i + 1}: ${code.trim()}`);
    });
}
if (bypass.length > 0) {
  console.error(
    'these lines locate the evaluation data or the model exports themselves; use eval/dir.ts (evalDir, evalDataSkip,\n' +
      'skipWithoutEvalData) or eval/byo-dir.ts (byoPath, byoModelsSkip, skipWithoutByoModels)\n' +
      'so the run without the data covers them:',
  );
  for (const b of bypass) console.error(`  ${b}`);
  process.exit(1);
}

const lines: string[] = [];
for (const file of tsFiles(join(root, 'test'))
  .filter((f) => f.endsWith('.test.ts'))
  .sort()) {
  if (readsEvalData(file)) lines.push(`test ${relative(root, file)}`);
}
for (const [kind, dir] of [
  ['bench', 'bench/suites'],
  ['eval', 'eval/tasks'],
] as const) {
  for (const f of readdirSync(join(root, dir))
    .filter((n) => n.endsWith('.ts'))
    .sort()) {
    if (readsEvalData(join(root, dir, f))) lines.push(`${kind} ${f.slice(0, -3)}`);
  }
}
console.log(lines.join('\n'));
