// A new embedded database starts from a template of an empty PGlite cluster instead of running initdb, which
// costs several times the CPU of loading the template (docs/operations.md, "Where data lives"; the test
// suite makes a few hundred fresh databases; a user making a second data dir also gains). Templates live in
// a directory of their own (SIGHTFLOW_PGLITE_TEMPLATE_DIR), one file per PGlite version, made by the first
// fresh start that finds none; a template of another version is never loaded. A second kind has the
// migrations applied too (sparing every fresh database their run), one file per version and set of
// migrations (a hash of their versions, names and SQL), so a changed migration never meets an old template.
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';

const require = createRequire(import.meta.url);
let version: string | undefined;
/** The installed PGlite's version (its package.json is not among the package's exports: found from its entry). */
function pgliteVersion(): string {
  if (version) return version;
  for (let d = dirname(require.resolve('@electric-sql/pglite')); d !== dirname(d); d = dirname(d)) {
    const file = join(d, 'package.json');
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
    if (pkg.name === '@electric-sql/pglite' && pkg.version) return (version = pkg.version);
  }
  throw new Error('cannot find the version of @electric-sql/pglite');
}

/**
 * The empty cluster's template, or (with `key`) that of a cluster on which the work named by `key` was done
 * (the migrations: db.ts DbPrepare), for this PGlite version.
 */
export function templatePath(dir: string, key?: string): string {
  return join(dir, `pglite-${pgliteVersion()}${key ? `-${key}` : ''}.tar`);
}

/** The template's bytes, or null when there is none for this PGlite version (or it cannot be read). */
export function readTemplate(dir: string, key?: string): Blob | null {
  try {
    const path = templatePath(dir, key);
    return existsSync(path) ? new Blob([readFileSync(path)]) : null;
  } catch {
    return null;
  }
}

/**
 * Saves a just-initialised (with `key`: just-migrated), still empty cluster as the template. Written to a
 * temporary name and renamed, so processes starting at once never read half a file. Best effort: a failure
 * only costs the next start the slower way.
 */
export async function saveTemplate(pg: PGlite, dir: string, key?: string): Promise<void> {
  try {
    const tar = Buffer.from(await (await pg.dumpDataDir('none')).arrayBuffer());
    mkdirSync(dir, { recursive: true });
    const path = templatePath(dir, key);
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, tar);
    renameSync(tmp, path);
  } catch {
    // Read-only or full disk: fresh databases keep running initdb.
  }
}
