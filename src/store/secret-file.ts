// Secrets kept as small files in the data directory (the presigned-link signing secret, the admin token):
// read when present, otherwise generated and written with mode 0600.
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface SecretFile {
  value: string;
  path: string;
  /** True when this call generated and wrote the file (false when it was already there). */
  created: boolean;
}

/**
 * The secret in <dataDir>/<name>, created on first use with `generate()` (mode 0600). Creation is race-free
 * across processes and nodes sharing the directory: the file appears whole via link(2) or not at all, and the
 * loser of a race reads the winner's secret (and reports created: false). `envVar` names the setting that
 * replaces the file, for the error about an empty one.
 */
export async function loadOrCreateSecretFile(
  dataDir: string,
  name: string,
  generate: () => string,
  envVar: string,
): Promise<SecretFile> {
  const path = join(dataDir, name);
  const existing = await readSecret(path);
  if (existing) return { value: existing, path, created: false };
  await mkdir(dataDir, { recursive: true });
  const tmp = join(dataDir, `.${name}.${randomBytes(6).toString('hex')}.tmp`);
  await writeFile(tmp, generate() + '\n', { mode: 0o600, flag: 'wx' });
  let created = false;
  try {
    await link(tmp, path);
    created = true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  } finally {
    await rm(tmp, { force: true });
  }
  const value = await readSecret(path);
  if (!value) throw new Error(`${path} exists but holds no secret; delete it or set ${envVar}`);
  return { value, path, created };
}

async function readSecret(path: string): Promise<string | null> {
  try {
    return (await readFile(path, 'utf8')).trim() || null;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

export const ADMIN_TOKEN_FILE = 'admin-token';

/** The admin token kept in <dataDir>/admin-token: `sf_admin_` + 32 random bytes, base64url. */
export function loadOrCreateAdminToken(dataDir: string): Promise<SecretFile> {
  return loadOrCreateSecretFile(
    dataDir,
    ADMIN_TOKEN_FILE,
    () => `sf_admin_${randomBytes(32).toString('base64url')}`,
    'SIGHTFLOW_ADMIN_TOKEN',
  );
}
