// bench/owner-cpu-profile.ts: `serve` behind two front processes under the C clients, the main thread of the
// process that owns the sessions sampled by perf and put in parts. Here it only has to run and account for
// what it sampled (the figures are in docs/capacity.md, "Front processes").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/base/paths.js';

test("owner-cpu-profile: the owner's main-thread CPU behind fronts, by part", { timeout: 120_000 }, async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--import',
      'tsx',
      join(projectRoot, 'bench', 'owner-cpu-profile.ts'),
      '--clients',
      '2',
      '--seconds',
      '2',
      '--json',
    ],
    { cwd: projectRoot, maxBuffer: 64 * 1024 * 1024 },
  );
  const r = JSON.parse(stdout.trim().split('\n').pop()!);
  assert.ok(r.images > 0 && r.samples > 0 && r.main_thread_ms_per_image > 0, JSON.stringify(r));
  const parts = r.parts as Array<{ part: string; share: number }>;
  const total = parts.reduce((a, p) => a + p.share, 0);
  assert.ok(Math.abs(total - 1) < 0.01, `the parts account for the samples: ${total}`);
  // The owner's own steps are seen: the pipe from the fronts, and the model's side.
  for (const want of [/^pipe to the fronts/, /^model queue/])
    assert.ok(
      parts.some((p) => want.test(p.part) && p.share > 0),
      `${want} in ${JSON.stringify(parts)}`,
    );
});
