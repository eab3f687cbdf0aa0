// Scale-out on one real PostgreSQL (SIGHTFLOW_TEST_DB=postgres only; skipped on PGlite): two API nodes and
// separate worker processes (./synthetic-worker.ts: `sightflow worker` with the synthetic provider, so
// frames are deterministic and no model is needed). Covers: a task
// created on node A streams identically from A and B (LISTEN/NOTIFY fan-out); SIGKILL of a worker mid-stream
// -> failed with a terminal chunk within the lease timeout; SIGKILL before the first chunk -> runs again on
// another worker and succeeds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, backend, freshDatabaseUrl, type TestApp } from '../helpers/app.js';
import {
  chunksOf,
  createTask,
  parseEvents,
  readStream,
  startVideoApp,
  waitFor,
  waitStatus,
  warmKey,
} from '../helpers/video-tasks.js';
import { spawnWorker } from '../helpers/worker-process.js';

const skip = backend !== 'postgres' ? 'PostgreSQL only (SIGHTFLOW_TEST_DB=postgres)' : false;
const LEASE_MS = 1500;
// The API nodes' reapers (this process) look often, so a dead worker's task moves within ~2 s; wake-ups
// must come from NOTIFY, not polling.
const API_NODE_ENV = { SIGHTFLOW_VIDEO_REAPER_MS: '250', SIGHTFLOW_VIDEO_STREAM_POLL_MS: '5000' };

let a: TestApp;
let b: TestApp;
let dataDir: string;
let databaseUrl: string;
const workers: ChildProcess[] = [];

const WORKER = fileURLToPath(new URL('./synthetic-worker.ts', import.meta.url));

function startWorker(startMs = 0): Promise<ChildProcess> {
  return spawnWorker(WORKER, {
    databaseUrl,
    dataDir,
    args: [String(startMs)],
    env: {
      SIGHTFLOW_VIDEO_LEASE_MS: String(LEASE_MS),
      SIGHTFLOW_VIDEO_HEARTBEAT_MS: '200',
      SIGHTFLOW_VIDEO_POLL_MS: '100',
      SIGHTFLOW_WORKER_CONCURRENCY: '2',
    },
    spawned: (child) => workers.push(child),
  });
}

const url = (q: string) => `http://127.0.0.1:9/synthetic.mp4?${q}`;
const task = (q: string) => ({ input: [{ type: 'video_url', url: url(q) }], steps: [{ model: 'detect' }] });

before(async () => {
  if (skip) return;
  dataDir = mkdtempSync(join(tmpdir(), 'sightflow-video-mp-'));
  databaseUrl = (await freshDatabaseUrl())!;
  a = await startVideoApp(API_NODE_ENV, { dataDir, databaseUrl });
  b = await startVideoApp(API_NODE_ENV, { dataDir, databaseUrl });
  await warmKey(b, a.key);
});

after(async () => {
  for (const w of workers) if (w.exitCode === null && w.signalCode === null) w.kill('SIGKILL');
  await b?.close();
  await a?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('a task created on node A is processed by a separate worker and streams identically from A and B', {
  skip,
  timeout: 180_000,
}, async () => {
  await startWorker();
  const id = await createTask(a, task('frames=40&frame_ms=25'));
  const onB = { ...b, key: a.key };
  const [fromA, fromB] = await Promise.all([readStream(a, id), readStream(onB, id)]);
  assert.equal(fromA.status, 200);
  assert.equal(fromB.status, 200);
  assert.ok(fromA.bytes.length > 0 && fromA.bytes.equals(fromB.bytes), 'A and B stream the same bytes');
  const chunks = chunksOf(fromA.bytes);
  assert.equal(chunks.length, 41);
  assert.equal(chunks.at(-1).finish_reason, 'stop');
  assert.equal(parseEvents(fromA.bytes).at(-1)!.kind, 'done');
  assert.equal((await waitStatus(onB, id, ['succeeded'])).usage.processed_frames, 40);
  // Resumed on B from the middle: the same tail.
  const mid = Math.floor(fromA.bytes.length / 2);
  assert.ok((await readStream(onB, id, { offset: mid })).bytes.equals(fromA.bytes.subarray(mid)));
  assert.equal((await api(onB, `/v1/video/tasks/${id}/results`)).body.usage.processed_frames, 40);
});

test('SIGKILL of a worker mid-stream -> failed with a terminal error chunk within the lease timeout', {
  skip,
  timeout: 180_000,
}, async () => {
  const w = workers.find((c) => c.exitCode === null) ?? (await startWorker());
  const id = await createTask(a, task('frames=100000&frame_ms=40'));
  const live = readStream({ ...b, key: a.key }, id); // a subscriber on B while it happens
  await waitFor(
    'the task to stream a few chunks',
    async () => ((await api(a, `/v1/video/tasks/${id}`)).body.progress.frame_index ?? -1) >= 3,
  );
  w.kill('SIGKILL');
  const killedAt = Date.now();
  const rec = await waitStatus(a, id, ['failed'], 30_000);
  const took = Date.now() - killedAt;
  assert.ok(took < LEASE_MS + 10_000, `failed ${took} ms after the kill (lease ${LEASE_MS} ms)`);
  assert.equal(rec.error.code, 'worker_lost');
  const bytes = (await live).bytes;
  const chunks = chunksOf(bytes);
  assert.equal(chunks.at(-1).finish_reason, 'error');
  assert.ok(chunks.length >= 5);
  assert.ok(chunks.slice(0, -1).every((c) => c.finish_reason === null));
  assert.equal(parseEvents(bytes).at(-1)!.kind, 'done');
  assert.ok((await readStream(a, id)).bytes.equals(bytes), 'the partial archive replays identically');
});

test('SIGKILL of a worker before the first chunk -> the task runs again on another worker and succeeds', {
  skip,
  timeout: 240_000,
}, async () => {
  const slow = await startWorker(600_000);
  const id = await createTask(a, task('frames=6&frame_ms=5'));
  await waitStatus(a, id, ['running'], 30_000);
  slow.kill('SIGKILL');
  await startWorker();
  const rec = await waitStatus(a, id, ['succeeded'], 60_000);
  assert.equal(rec.usage.processed_frames, 6);
  const chunks = chunksOf((await readStream(a, id)).bytes);
  assert.deepEqual(
    chunks.map((c) => c.stream_info.frame_index),
    [0, 1, 2, 3, 4, 5, 5],
  );
  assert.equal(chunks.at(-1).finish_reason, 'stop');
});
