// The GPU check's in-process rows (bench/device/providers.ts) on a model that cannot run: the row says why and
// the run still ends with its JSON, so a provider that fails on a GPU host costs that row, not the check's
// other rows (scripts/gpu-check.sh goes on to the HTTP and camera rows even when a whole step fails).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { scriptArgs } from '../helpers/node-script.js';

const PROVIDERS = fileURLToPath(new URL('../../bench/device/providers.ts', import.meta.url));

test('a model that cannot load fails its rows with the reason, and the run ends with its JSON', async (t) => {
  const models = await mkdtemp(join(tmpdir(), 'sightflow-providers-'));
  t.after(() => rm(models, { recursive: true, force: true }));
  await mkdir(join(models, 'broken'));
  await writeFile(join(models, 'broken', 'broken.onnx'), 'not an ONNX model');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      ...scriptArgs(PROVIDERS),
      '--models',
      models,
      '--models-only',
      'broken',
      '--batch',
      '1,2',
      '--seconds',
      '0.2',
      '--json',
    ],
    { timeout: 60_000 },
  );
  const out = JSON.parse(stdout.trim().split('\n').at(-1)!) as { batch_rows: Array<Record<string, unknown>> };
  assert.deepEqual(
    out.batch_rows.map((r) => [r.model, r.batch, r.images_per_s]),
    [
      ['broken', 1, 0],
      ['broken', 2, 0],
    ],
  );
  for (const r of out.batch_rows) assert.match(String(r.error), /\S/, JSON.stringify(r));
});

const CHECK = fileURLToPath(new URL('../../bench/device/gpu-check.ts', import.meta.url));

test("the check's report says which steps and rows failed, and keeps the rest", async (t) => {
  const work = await mkdtemp(join(tmpdir(), 'sightflow-gpu-report-'));
  t.after(() => rm(work, { recursive: true, force: true }));
  const put = (f: string, v: unknown) => writeFile(join(work, f), JSON.stringify(v));
  await put('meta.json', { dry_run: false, seconds: 2, batches: [1, 8] });
  await put('probe.json', { date: '2026-11-30', driver: { gpus: [{ name: 'NVIDIA H200', driver: '580' }] } });
  await put('sightflow.json', {
    batch_rows: [
      { model: 'centernet-coco', providers: 'cuda,cpu', sessions: 1, batch: 1, images_per_s: 0, error: 'no cuDNN' },
      { model: 'centernet-coco', providers: 'cpu', sessions: 2, batch: 8, images_per_s: 40.5, same_as_alone: true },
    ],
  });
  await put('sweep.json', { error: 'providers.js: out of memory' });
  await put('http.json', { error: 'the server did not start' });
  await put('cameras.json', { error: 'no cameras' });
  await promisify(execFile)(process.execPath, [...scriptArgs(CHECK), 'report', work, work], { timeout: 60_000 });
  const md = await import('node:fs/promises').then((f) => f.readFile(join(work, 'gpu-check.md'), 'utf8'));
  assert.match(md, /\| centernet-coco \| cuda,cpu \| 1 \| 1 \| 0 \|.*failed: no cuDNN/);
  assert.match(md, /- unbatched rows failed: providers\.js: out of memory/);
  assert.match(md, /- centernet-coco: in-process ceiling 40\.5 images\/s \(cpu, 2 session\(s\), batch 8\)/);
  assert.match(md, /failed: the server did not start/);
});
