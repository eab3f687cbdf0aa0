// Secret files in the data dir: created once with mode 0600, exactly one racing caller reports creating it,
// the admin token's shape, and a clear error for an empty file.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrCreateAdminToken, loadOrCreateSecretFile } from '../../src/store/secret-file.js';

const root = mkdtempSync(join(tmpdir(), 'sightflow-secret-file-'));
after(() => rmSync(root, { recursive: true, force: true }));

test('racing callers agree on one secret and exactly one of them created it', async () => {
  const dir = join(root, 'race');
  let n = 0;
  const files = await Promise.all(
    Array.from({ length: 6 }, () => loadOrCreateSecretFile(dir, 'thing', () => `value-${n++}`, 'SOME_VAR')),
  );
  assert.equal(new Set(files.map((f) => f.value)).size, 1);
  assert.equal(files.filter((f) => f.created).length, 1);
  assert.ok(files.every((f) => f.path === join(dir, 'thing')));
  assert.equal((await stat(join(dir, 'thing'))).mode & 0o777, 0o600);
  assert.deepEqual(await readdir(dir), ['thing'], 'no temporary files left behind');
  const again = await loadOrCreateSecretFile(dir, 'thing', () => 'other', 'SOME_VAR');
  assert.deepEqual(again, { value: files[0]!.value, path: join(dir, 'thing'), created: false });
});

test('the admin token is sf_admin_ + 32 random bytes base64url, kept in <dataDir>/admin-token', async () => {
  const dir = join(root, 'admin');
  const first = await loadOrCreateAdminToken(dir);
  assert.match(first.value, /^sf_admin_[A-Za-z0-9_-]{43}$/);
  assert.equal(first.created, true);
  assert.equal(first.path, join(dir, 'admin-token'));
  assert.equal((await readFile(first.path, 'utf8')).trim(), first.value);
  assert.equal((await stat(first.path)).mode & 0o777, 0o600);
  const second = await loadOrCreateAdminToken(dir);
  assert.equal(second.value, first.value);
  assert.equal(second.created, false);
  assert.notEqual((await loadOrCreateAdminToken(join(root, 'admin-2'))).value, first.value);
});

test('an empty secret file is an error naming the setting that replaces it', async () => {
  const dir = join(root, 'empty');
  await loadOrCreateAdminToken(dir);
  await writeFile(join(dir, 'admin-token'), '\n');
  await assert.rejects(
    loadOrCreateAdminToken(dir),
    /admin-token exists but holds no secret; delete it or set SIGHTFLOW_ADMIN_TOKEN/,
  );
});
