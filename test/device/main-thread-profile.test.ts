// bench/main-thread-profile.ts: a real server under the C clients, its main thread profiled while they run, each
// sample put in a part of the request. Here it only has to run and account for the time it measured (the
// figures are in docs/capacity.md, "One event loop's share of an image").
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/base/paths.js';

test('main-thread-profile: the main thread milliseconds of a detect request, by part', {
  timeout: 120_000,
}, async () => {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      '--import',
      'tsx',
      join(projectRoot, 'bench', 'main-thread-profile.ts'),
      '--clients',
      '2',
      '--seconds',
      '1',
      '--json',
    ],
    { cwd: projectRoot, maxBuffer: 16 * 1024 * 1024 },
  );
  const r = JSON.parse(stdout.trim().split('\n').pop()!);
  assert.ok(r.images > 0 && r.main_thread_ms_per_image > 0, JSON.stringify(r));
  assert.equal(r.one_event_loop_allows, Math.round(1000 / r.main_thread_ms_per_image));
  const parts = r.parts as Array<{ part: string; share: number; ms_per_image: number }>;
  const total = parts.reduce((a, p) => a + p.share, 0);
  assert.ok(Math.abs(total - 1) < 0.01, `the parts account for the busy samples: ${total}`);
  // The request's own steps are seen: the HTTP front and the image's decoding.
  for (const want of [/^request in/, /^image in/])
    assert.ok(
      parts.some((p) => want.test(p.part) && p.share > 0),
      `${want} in ${JSON.stringify(parts)}`,
    );
});
