// Shared by `npm run bench` and `npm run eval`: picks <dir>/<name>.ts from the first non-flag argument and
// calls its run({quick, json, args}). With --json the module prints one object as the last stdout line.
// Compiled (the suite's tree of JavaScript, scripts/test-tree.ts), the suites are the .js files beside it.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface SuiteOptions {
  quick: boolean;
  json: boolean;
  args: string[];
}

export async function runSuite(dir: string, usage: string): Promise<never> {
  const ext = import.meta.url.endsWith('.js') ? '.js' : '.ts';
  const names = readdirSync(dir)
    .filter((f) => f.endsWith(ext) && !f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -3))
    .sort();
  const argv = process.argv.slice(2);
  const name = argv.find((a) => !a.startsWith('--'));
  if (!name || !names.includes(name)) {
    console.error(`usage: ${usage} [--quick] [--json]\navailable: ${names.join(', ')}`);
    process.exit(2);
  }
  const args = argv.filter((a) => a !== name);
  const mod = await import(pathToFileURL(join(dir, `${name}${ext}`)).href);
  const quick = args.includes('--quick') || process.env.SIGHTFLOW_QUICK === '1';
  await mod.run({ quick, json: args.includes('--json'), args } satisfies SuiteOptions);
  // A suite may leave pools or servers behind; it is done when run() resolves. A suite whose checks failed says
  // so with process.exitCode (its JSON line still printed).
  process.exit(typeof process.exitCode === 'number' ? process.exitCode : 0);
}
