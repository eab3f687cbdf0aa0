// The index step on a `sightflow worker` process (docs/moments.md, "Limits and notes"), on one real PostgreSQL
// (SIGHTFLOW_TEST_DB=postgres only; skipped on PGlite, which one process owns): an API node in this process
// without a worker of its own and a worker process built as `sightflow worker` builds it (./live-worker.ts),
// sharing the data directory for blobs. The worker runs an index task on a clip of known colour scenes; its
// items, written without a vector index in that process, are found by the API node's moment search (its index
// catches up from the database), with their thumbnails.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, backend, freshDatabaseUrl, type TestApp } from '../helpers/app.js';
import { colourPng, scenesClip } from '../helpers/moments.js';
import { createTask, startVideoApp, waitStatus } from '../helpers/video-tasks.js';
import { spawnWorker } from '../helpers/worker-process.js';

const skip = backend !== 'postgres' ? 'PostgreSQL only (SIGHTFLOW_TEST_DB=postgres)' : undefined;
const WORKER = fileURLToPath(new URL('./live-worker.ts', import.meta.url));

let a: TestApp;
let dataDir: string;
let databaseUrl: string;
let worker: ChildProcess | undefined;

before(async () => {
  if (skip) return;
  dataDir = mkdtempSync(join(tmpdir(), 'sightflow-index-worker-'));
  databaseUrl = (await freshDatabaseUrl())!;
  a = await startVideoApp({}, { dataDir, databaseUrl });
  worker = await spawnWorker(WORKER, {
    databaseUrl,
    dataDir,
    env: { SIGHTFLOW_NO_WORKER: 'false', SIGHTFLOW_VIDEO_POLL_MS: '200', SIGHTFLOW_WORKER_CONCURRENCY: '1' },
    spawned: () => {},
  });
});

after(async () => {
  if (worker && worker.exitCode === null && worker.signalCode === null) {
    const gone = new Promise((r) => worker!.once('exit', r));
    worker.kill('SIGTERM');
    await gone;
  }
  await a?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('a sightflow worker runs the index step: its moments are found by the API node, thumbnails included', {
  skip,
  timeout: 240_000,
}, async () => {
  const c = await api(a, '/v1/vectors/collections', { method: 'POST', json: { name: 'worker-moments' } });
  assert.equal(c.status, 201, c.text);
  const clip = await scenesClip('worker', [
    ['red', 2],
    ['blue', 2],
  ]);
  const id = await createTask(a, {
    input: [{ type: 'video_base64', data: readFileSync(clip).toString('base64'), sampling: { mode: 'fps', value: 2 } }],
    steps: [{ model: 'index', parameters: { collection: c.body.id, segment_ms: 2000, video_id: 'cam' } }],
  });
  const done = await waitStatus(a, id, ['succeeded', 'failed'], 180_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.index?.segments, 2, JSON.stringify(done.index));

  const s = await api(a, `/v1/vectors/collections/${c.body.id}/search`, {
    method: 'POST',
    json: { image_base64: await colourPng([0, 0, 255]), group_by: 'video', top_k: 1 },
  });
  assert.equal(s.status, 200, s.text);
  const best = s.body.videos[0].moments[0];
  assert.deepEqual([s.body.videos[0].video, best.task_id, best.start_ms, best.end_ms], ['cam', id, 2000, 4000]);
  const thumb = await fetch(new URL(best.thumbnail_url, a.url));
  assert.equal(thumb.status, 200);
  assert.equal(thumb.headers.get('content-type'), 'image/jpeg');
});
