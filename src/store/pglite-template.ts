// A new embedded database starts from a template of an empty PGlite cluster instead of running initdb, which
// costs several times the CPU of starting from the template (docs/operations.md, "Where data lives"; the test
// suite makes a few hundred fresh databases; a user making a second data dir also gains). Templates live in
// a directory of their own (SIGHTFLOW_PGLITE_TEMPLATE_DIR), one per PGlite version, made by the first fresh
// start that finds none; a template of another version is never used. A second kind has the migrations
// applied too (sparing every fresh database their run), one per version and set of migrations (a hash of
// their versions, names and SQL), so a changed migration never meets an old template.
// A template is the data directory of a cluster shut down cleanly, copied file by file into the new data dir,
// which PGlite then opens as an existing cluster: faster than having PGlite unpack a tarball of the cluster (its
// `loadDataDir`), as templates did before (docs/operations.md, "Where data lives").
import { cpSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
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
 * The directory of the empty cluster's template, or (with `key`) of a cluster on which the work named by `key`
 * was done (the migrations: db.ts DbPrepare), for this PGlite version.
 */
export function templatePath(dir: string, key?: string): string {
  return join(dir, `pglite-${pgliteVersion()}${key ? `-${key}` : ''}`);
}

/**
 * Copies the template into `target` (an empty or missing directory) and says whether it did: false when there
 * is none for this PGlite version or the copy failed (then `target` is left empty). Whether the copy is a
 * cluster PGlite can open is for the caller to find out.
 */
export function copyTemplate(dir: string, target: string, key?: string): boolean {
  try {
    const path = templatePath(dir, key);
    if (!existsSync(join(path, 'PG_VERSION'))) return false;
    cpSync(path, target, { recursive: true });
    return true;
  } catch {
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    return false;
  }
}

/**
 * Saves a just-initialised (with `key`: just-migrated), still empty cluster as the template: its files as
 * PGlite dumps them, opened once in a directory beside the template and closed, which leaves a cluster shut
 * down cleanly; then renamed into place, so processes starting at once never copy half a template. A template
 * already there is replaced (this runs only when it could not be used, so a damaged one does not stay). Best
 * effort: a failure only costs the next start the slower way.
 */
export async function saveTemplate(pg: PGlite, dir: string, key?: string): Promise<void> {
  let tmp: string | undefined;
  try {
    const path = templatePath(dir, key);
    tmp = `${path}.${process.pid}.tmp`;
    const dump = await pg.dumpDataDir('none');
    mkdirSync(dir, { recursive: true });
    rmSync(tmp, { recursive: true, force: true });
    const { PGlite } = await import('@electric-sql/pglite');
    const copy = await PGlite.create(tmp, { loadDataDir: dump });
    await copy.close();
    const old = `${path}.${process.pid}.old`;
    if (existsSync(path)) renameSync(path, old);
    renameSync(tmp, path);
    rmSync(old, { recursive: true, force: true });
    // The same template as an earlier release kept it (a tarball beside where the directory now is): never read
    // again, so not left to take its room.
    rmSync(`${path}.tar`, { force: true });
  } catch {
    // Read-only or full disk, or another process's template landed between our check and our rename: fresh
    // databases start the way they can.
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }
}
