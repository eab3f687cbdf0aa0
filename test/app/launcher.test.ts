// The `sightflow` launcher (bin/sightflow.cjs): libuv's thread pool, where each request's image work runs,
// gets one thread a core (at least libuv's 4) unless UV_THREADPOOL_SIZE is given, and it is set before any ES
// module loads, since libuv reads it once, when the pool first gets work (loading ES modules gives it some).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/base/paths.js';

const LAUNCHER = join(projectRoot, 'bin', 'sightflow.cjs');
const { threadpoolSize, sizeThreadpool } = createRequire(import.meta.url)(LAUNCHER) as {
  threadpoolSize(env: Record<string, string | undefined>, cores: number): string | undefined;
  sizeThreadpool(env: Record<string, string | undefined>, cores: number): string | undefined;
};

test('the pool size: one thread a core, at least 4, at most 1024; a size the operator gave is kept', () => {
  assert.equal(threadpoolSize({}, 16), '16');
  assert.equal(threadpoolSize({}, 2), '4');
  assert.equal(threadpoolSize({}, 4096), '1024');
  assert.equal(threadpoolSize({ UV_THREADPOOL_SIZE: '' }, 8), '8');
  assert.equal(threadpoolSize({ UV_THREADPOOL_SIZE: '9' }, 16), undefined);
  const env: Record<string, string | undefined> = { UV_THREADPOOL_SIZE: '3' };
  assert.equal(sizeThreadpool(env, 32), '3');
  const unset: Record<string, string | undefined> = {};
  assert.equal(sizeThreadpool(unset, 12), '12');
  assert.equal(unset.UV_THREADPOOL_SIZE, '12');
});

test("set before the ES modules load, the size is libuv's: the pool has that many threads", () => {
  const dir = mkdtempSync(join(tmpdir(), 'sightflow-launcher-'));
  try {
    // An ES module graph read from files (on the pool, as the CLI's is), then enough pool work to start every
    // thread; it prints the process's thread count.
    writeFileSync(join(dir, 'dep.mjs'), 'export const n = 16;\n');
    writeFileSync(
      join(dir, 'work.mjs'),
      [
        "import { n } from './dep.mjs';",
        "import { pbkdf2 } from 'node:crypto';",
        "import { readdirSync } from 'node:fs';",
        "await Promise.all(Array.from({ length: n }, () => new Promise((r) => pbkdf2('x', 'y', 20000, 32, 'sha256', r))));",
        "console.log(readdirSync('/proc/self/task').length);",
      ].join('\n'),
    );
    const threads = (sized: boolean) => {
      const env: Record<string, string> = { ...(process.env as Record<string, string>) };
      delete env.UV_THREADPOOL_SIZE;
      const script = [
        sized ? `require(${JSON.stringify(LAUNCHER)}).sizeThreadpool(process.env, 12);` : '',
        `import(${JSON.stringify(`file://${join(dir, 'work.mjs')}`)});`,
      ].join('\n');
      return Number(execFileSync(process.execPath, ['-e', script], { env, encoding: 'utf8' }).trim());
    };
    // The same process but for the pool: 12 threads where libuv alone starts 4.
    assert.equal(threads(true) - threads(false), 8);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
