// The GPU check's in-process rows (bench/device/providers.ts) on a model that cannot run: the row says why and
// the run still ends with its JSON, so a provider that fails on a GPU host costs that row, not the check's
// other rows (scripts/gpu-check.sh goes on to the HTTP and camera rows even when a whole step fails).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
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

test('--until: no row starts after it; the rows left out are listed, and --json-file holds the JSON', async (t) => {
  const models = await mkdtemp(join(tmpdir(), 'sightflow-providers-until-'));
  t.after(() => rm(models, { recursive: true, force: true }));
  await mkdir(join(models, 'broken'));
  await writeFile(join(models, 'broken', 'broken.onnx'), 'not an ONNX model');
  const file = join(models, 'rows.json');
  const args = ['--models', models, '--models-only', 'broken', '--batch', '1,2', '--seconds', '0.2', '--json'];
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...scriptArgs(PROVIDERS), ...args, '--until', String(Date.now() - 1), '--json-file', file],
    { timeout: 60_000 },
  );
  const out = JSON.parse(stdout.trim().split('\n').at(-1)!);
  assert.deepEqual(out.batch_rows, []);
  assert.deepEqual(out.skipped_rows, ['broken cpu 2 session(s) batch 1', 'broken cpu 2 session(s) batch 2']);
  assert.deepEqual(JSON.parse(await readFile(file, 'utf8')), out);
  // A bad moment is refused, not taken as "no limit".
  await assert.rejects(
    promisify(execFile)(process.execPath, [...scriptArgs(PROVIDERS), ...args, '--until', 'soon'], { timeout: 60_000 }),
    /--until takes a time in milliseconds/,
  );
});

test("a check stopped part way: its report keeps each step's rows so far, merged, and says where it stopped", async (t) => {
  const work = await mkdtemp(join(tmpdir(), 'sightflow-gpu-partial-'));
  t.after(() => rm(work, { recursive: true, force: true }));
  const put = (f: string, v: unknown) => writeFile(join(work, f), JSON.stringify(v));
  const row = (model: string, ips: number) => ({
    model,
    providers: 'cuda,cpu',
    sessions: 1,
    batch: 8,
    images_per_s: ips,
    same_as_alone: true,
  });
  await put('meta.json', { dry_run: false, seconds: 2, batches: [1, 8], budget_s: 480 });
  await put('steps.json', { done: ['probe', 'reference', 'in-process rows'], running: 'HTTP rows' });
  await put('sightflow.json', { batch_rows: [row('centernet-coco (fp16, uint8, decoded)', 900)] });
  await put('sightflow-detail.json', {
    batch_rows: [row('centernet-coco', 500)],
    skipped_rows: ['centernet-coco (fp16) cuda,cpu 1 session(s) batch 8'],
  });
  // The HTTP step as `timeout` left it: the rows it had written, then the check's failure with --stopped.
  const http = join(work, 'http.json');
  await put('http.json', {
    route: 'POST /v1/vision/detect',
    servers: [],
    server_metrics: null,
    rows: [
      {
        config: 'defaults',
        model: 'centernet-coco',
        providers: 'cuda',
        clients: 1,
        images_per_s: 310,
        p50_ms: 3.1,
        p99_ms: 4,
      },
    ],
  });
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [...scriptArgs(CHECK), 'failure', '--stopped', join(work, 'no-such.err'), http],
    { timeout: 60_000 },
  );
  await writeFile(http, stdout);
  await promisify(execFile)(process.execPath, [...scriptArgs(CHECK), 'report', work, work], { timeout: 60_000 });
  const r = JSON.parse(await readFile(join(work, 'gpu-check.json'), 'utf8'));
  assert.deepEqual(
    r.sightflow.batch_rows.map((x: { model: string }) => x.model),
    ['centernet-coco (fp16, uint8, decoded)', 'centernet-coco'],
  );
  assert.equal(r.http.rows.length, 1);
  const md = await readFile(join(work, 'gpu-check.md'), 'utf8');
  assert.match(md, /- unfinished: the check stopped during "HTTP rows"/);
  assert.match(md, /- in-process rows not run \(the check's time was spent\): centernet-coco \(fp16\) cuda,cpu/);
  assert.match(md, /- failed: stopped: it ran past its share of the check's time \(--budget\)/);
  assert.match(md, /\| defaults \| centernet-coco \| cuda \| 1 \| 310 \|/);
  assert.match(md, /- centernet-coco \(fp16, uint8, decoded\): in-process ceiling 900 images\/s/);
});
