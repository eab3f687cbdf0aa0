// The one way to find the evaluation data (SIGHTFLOW_EVAL_DIR, default ../shared/eval beside the project).
// A clone without it still passes: every test, bench and evaluation that reads it asks here first and is
// skipped with EVAL_DATA_MISSING as its reason; the test summary counts skips by reason, and CI (which has
// the data) fails on any skip with this one. scripts/eval-data-users.ts finds the readers by their imports
// of this file, so a reader that builds the path itself would escape that check: it refuses them.
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { projectRoot } from '../src/base/paths.js';

/** The skip reason, word for word what the test summary groups by and what CI refuses. */
export const EVAL_DATA_MISSING = 'evaluation data not found (set SIGHTFLOW_EVAL_DIR)';

/** The root of the evaluation data, whether or not it is there. */
export function evalRoot(): string {
  const env = process.env.SIGHTFLOW_EVAL_DIR;
  return env ? resolve(env) : resolve(projectRoot, '..', 'shared', 'eval');
}

/** Whether every part (a path under the root) is there; with no part, whether the root holds anything. */
export function hasEvalData(...parts: string[]): boolean {
  const root = evalRoot();
  if (parts.length === 0) return existsSync(root) && readdirSync(root).length > 0;
  return parts.every((p) => existsSync(resolve(root, p)));
}

/** For node:test's `skip` option: the reason when a part is missing, false when all are there. */
export function evalDataSkip(...parts: string[]): string | false {
  return hasEvalData(...parts) ? false : EVAL_DATA_MISSING;
}

/** A directory of the evaluation data; throws when it is missing (callers ask hasEvalData or evalDataSkip first). */
export function evalDir(sub = ''): string {
  const dir = resolve(evalRoot(), sub);
  if (!existsSync(dir)) throw new Error(`evaluation data not found at ${dir} (set SIGHTFLOW_EVAL_DIR)`);
  return dir;
}

/**
 * First thing in a bench's or an evaluation's run(), before it loads a model: when a part is missing, prints
 * the skip message (with --json, then the skip object as the last stdout line, as the quick run of every
 * bench and evaluation reads it) and returns true, and run() returns at once so the command exits 0.
 */
export function skipWithoutEvalData(opts: { json: boolean }, ...parts: string[]): boolean {
  if (hasEvalData(...parts)) return false;
  console.log(`skipped: ${EVAL_DATA_MISSING}`);
  if (opts.json) console.log(JSON.stringify({ skipped: true, reason: EVAL_DATA_MISSING }));
  return true;
}
