// The settings file changed by several processes at once: each read-modify-write holds a lock on the file, so
// no process's change is lost; a lock left by a process that died is taken over; one held too long is an
// error naming its holder. Real processes on one data dir.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { FileLockTimeout, withFileLock } from '../../src/base/file-lock.js';
import {
  SETTINGS_FILE,
  readSettingsOverrides,
  updateSettingsOverride,
} from '../../src/inference/settings-overrides.js';
import { scriptArgs } from '../helpers/node-script.js';

const run = promisify(execFile);
const writer = (dataDir: string, prefix: string, n: number) =>
  run(process.execPath, [
    ...scriptArgs(new URL('../helpers/settings-writer.ts', import.meta.url).pathname),
    dataDir,
    prefix,
    String(n),
  ]);

function tempDir(t: { after: (fn: () => void) => void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'sf-settings-lock-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('three processes changing the settings file at once: every change kept', { timeout: 60_000 }, async (t) => {
  const dir = tempDir(t);
  await Promise.all([writer(dir, 'a', 25), writer(dir, 'b', 25), writer(dir, 'c', 25)]);
  const { overrides, problem } = await readSettingsOverrides(dir);
  assert.equal(problem, undefined);
  assert.equal(overrides.size, 75, [...overrides.keys()].join(' '));
  for (const p of 'abc') for (let i = 0; i < 25; i++) assert.equal(overrides.get(`${p}${i}`)?.queueDepth, i + 1);
});

test('a lock left by a process that died is taken over; a live holder is waited for', {
  timeout: 60_000,
}, async (t) => {
  const dir = tempDir(t);
  const lock = join(dir, `${SETTINGS_FILE}.lock`);
  // A pid that has ended: a child that has exited.
  const gone = await new Promise<number>((resolve) => {
    const c = execFile(process.execPath, ['-e', '0']);
    c.on('exit', () => resolve(c.pid!));
  });
  writeFileSync(lock, `${gone}\n`);
  await updateSettingsOverride(dir, 'm', { sessions: 2 });
  assert.equal((await readSettingsOverrides(dir)).overrides.get('m')?.sessions, 2);

  // This process holds it for 400 ms; a child's change waits and then lands beside this one's.
  const t0 = Date.now();
  let child: Promise<unknown> | undefined;
  await withFileLock(join(dir, SETTINGS_FILE), async () => {
    child = writer(dir, 'w', 1);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal((await readSettingsOverrides(dir)).overrides.has('w0'), false, 'not while the lock is held');
  });
  await child;
  assert.ok(Date.now() - t0 >= 400);
  const { overrides } = await readSettingsOverrides(dir);
  assert.deepEqual([...overrides.keys()].sort(), ['m', 'w0']);
});

test('a lock held past the wait is an error naming its holder', async (t) => {
  const dir = tempDir(t);
  const path = join(dir, SETTINGS_FILE);
  writeFileSync(`${path}.lock`, `${process.pid}\n`);
  await assert.rejects(
    withFileLock(path, async () => 1, 200),
    (e: Error) =>
      e instanceof FileLockTimeout && e.message.includes(`process ${process.pid}`) && e.message.includes('.lock'),
  );
  rmSync(`${path}.lock`);
  assert.equal(await withFileLock(path, async () => 2, 200), 2);
  assert.equal(existsSync(`${path}.lock`), false, 'let go after the call');
});
