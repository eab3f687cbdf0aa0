// The reaper and leases, in-process: a "worker" that claims a task and then goes silent (no heartbeats) is
// simulated with the queue and archive directly, so every case is deterministic. The real-process SIGKILL
// cases are in test/video/video-multiprocess.both-db.test.ts (PostgreSQL).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../helpers/app.js';
import {
  SyntheticProvider,
  body,
  chunksOf,
  createTask,
  parseEvents,
  readStream,
  startWorker,
  waitStatus,
} from '../helpers/video-tasks.js';
import { LEASE, expire, useReaperHarness } from '../helpers/reaper-harness.js';
import { MAX_ATTEMPTS } from '../../src/video/tasks/task-store.js';

const h = useReaperHarness();

const frame = (i: number) => ({
  stream_info: {
    frame_index: i,
    total_frames: 10,
    decoded_frames: i + 1,
    dropped_frames: 0,
    fps: 10,
    elapsed_ms: 10 * i,
  },
  delta: {
    results: [
      {
        index: 0,
        targets: [{ track_id: 1, class: 'person', confidence: 0.9, roi: { left: 0, top: 0, width: 5, height: 5 } }],
      },
    ],
  },
});

test('claim takes the oldest pending task once; a second claim gets the next; none left -> null', async () => {
  const a = await createTask(h.t);
  const b = await createTask(h.t);
  const c1 = await h.queue.claim('w1', 10_000);
  const c2 = await h.queue.claim('w2', 10_000);
  assert.equal(c1?.id, a);
  assert.equal(c2?.id, b);
  assert.equal(c1?.attempts, 1);
  assert.equal(await h.queue.claim('w3', 10_000), null);
  assert.equal((await api(h.t, `/v1/video/tasks/${a}`)).body.status, 'running');
  assert.deepEqual(await h.queue.heartbeat(a, 'w1', 10_000), { status: 'running' });
  assert.equal(await h.queue.heartbeat(a, 'intruder', 10_000), null);
  // Leave them to the next test's reaper pass: expire quickly.
  await h.queue.heartbeat(a, 'w1', 1);
  await h.queue.heartbeat(b, 'w2', 1);
  await expire();
  assert.ok((await h.reaper.reapOnce()) >= 2);
  assert.equal((await api(h.t, `/v1/video/tasks/${a}`)).body.status, 'pending');
  await api(h.t, `/v1/video/tasks/${a}/cancel`, { method: 'POST' });
  await api(h.t, `/v1/video/tasks/${b}/cancel`, { method: 'POST' });
});

test('lease expired before the first chunk -> back to pending, then a live worker runs it to success', async () => {
  const id = await createTask(h.t);
  const claimed = await h.queue.claim('ghost', LEASE);
  assert.equal(claimed?.id, id);
  await h.archive.appendHeartbeat(id, 'ghost'); // bytes but no chunk: still retryable
  await expire();
  assert.equal(await h.reaper.reapOnce(), 1);
  const rec = (await api(h.t, `/v1/video/tasks/${id}`)).body;
  assert.equal(rec.status, 'pending');
  const w = startWorker(h.t, () => [new SyntheticProvider({ frames: 5, frameMs: 1 })]);
  try {
    await waitStatus(h.t, id, ['succeeded']);
  } finally {
    await w.stop();
  }
  const bytes = (await readStream(h.t, id)).bytes;
  const ev = parseEvents(bytes);
  assert.equal(ev[0]!.kind, 'comment');
  assert.deepEqual(
    chunksOf(bytes).map((c) => c.finish_reason),
    [null, null, null, null, null, 'stop'],
  );
  assert.equal(chunksOf(bytes)[0].model, 'detect', 'the first frame chunk echoes the model even after a re-queue');
});

test('lease expired mid-stream -> failed with a terminal error chunk, partial archive replayable; the late worker cannot write', async () => {
  const id = await createTask(h.t);
  await h.queue.claim('ghost', LEASE);
  assert.equal(await h.archive.appendFrame(id, 'ghost', frame(0), LEASE), 'appended');
  assert.equal(await h.archive.appendFrame(id, 'ghost', frame(1), LEASE), 'appended');
  await expire();
  assert.equal(await h.reaper.reapOnce(), 1);
  const rec = (await api(h.t, `/v1/video/tasks/${id}`)).body;
  assert.equal(rec.status, 'failed');
  assert.equal(rec.error.code, 'worker_lost');
  assert.ok(rec.finished_at);
  const bytes = (await readStream(h.t, id)).bytes;
  const chunks = chunksOf(bytes);
  assert.deepEqual(
    chunks.map((c) => c.finish_reason),
    [null, null, 'error'],
  );
  assert.equal(chunks[2].usage.processed_frames, 2);
  assert.deepEqual(chunks[2].stream_info, frame(1).stream_info);
  assert.equal(parseEvents(bytes).at(-1)!.kind, 'done');
  // The presumed-dead worker wakes up: nothing it does reaches the archive.
  assert.equal(await h.archive.appendFrame(id, 'ghost', frame(2), LEASE), 'lost');
  assert.equal(
    await h.archive.finishOwned(id, 'ghost', {
      status: 'succeeded',
      reason: 'stop',
      usage: { processed_frames: 3, processing_time_ms: 1, decoded_frames: 3, dropped_frames: 0 },
    }),
    null,
  );
  assert.ok((await readStream(h.t, id)).bytes.equals(bytes));
  assert.equal(await h.reaper.reapOnce(), 0, 'a terminal task is never reaped again');
});

test(`attempts are bounded: ${MAX_ATTEMPTS} silent claims before the first chunk -> failed`, async () => {
  const id = await createTask(h.t);
  for (let i = 1; i <= MAX_ATTEMPTS; i++) {
    const c = await h.queue.claim(`ghost${i}`, LEASE);
    assert.equal(c?.id, id);
    assert.equal(c?.attempts, i);
    await expire();
    assert.equal(await h.reaper.reapOnce(), 1);
  }
  const rec = (await api(h.t, `/v1/video/tasks/${id}`)).body;
  assert.equal(rec.status, 'failed');
  assert.deepEqual(rec.error, {
    code: 'worker_lost',
    message: `The worker stopped responding before the first chunk on each of ${MAX_ATTEMPTS} attempts`,
  });
  assert.deepEqual(
    chunksOf((await readStream(h.t, id)).bytes).map((c) => c.finish_reason),
    ['error'],
  );
});

test('a cancelling task whose worker died -> cancelled by the reaper', async () => {
  const id = await createTask(h.t);
  await h.queue.claim('ghost', LEASE);
  await h.archive.appendFrame(id, 'ghost', frame(0), LEASE);
  const c = await api(h.t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
  assert.equal(c.body.status, 'cancelling');
  await expire();
  assert.equal(await h.reaper.reapOnce(), 1);
  assert.equal((await api(h.t, `/v1/video/tasks/${id}`)).body.status, 'cancelled');
  assert.deepEqual(
    chunksOf((await readStream(h.t, id)).bytes).map((c) => c.finish_reason),
    [null, 'cancelled'],
  );
});

test('worker concurrency: at most N tasks run at once; shutdown gives an unstarted task back to the queue', async () => {
  let live = 0;
  let peak = 0;
  const slow = {
    name: 'slow',
    async run(req: any, src: any, ctx: any) {
      live++;
      peak = Math.max(peak, live);
      try {
        return await new SyntheticProvider({ frames: 4, frameMs: 30 }).run(req, src, ctx);
      } finally {
        live--;
      }
    },
  };
  const w = startWorker(h.t, () => [slow], {}, 2);
  const ids: string[] = [];
  try {
    for (let i = 0; i < 5; i++) ids.push(await createTask(h.t));
    for (const id of ids) await waitStatus(h.t, id, ['succeeded']);
  } finally {
    await w.stop();
  }
  assert.equal(peak, 2);
  // Stop while a task waits for its first frame: it goes back to pending, not failed.
  const w2 = startWorker(h.t, () => [new SyntheticProvider({ frames: 3, startMs: 5_000 })]);
  const id = await createTask(h.t, body());
  await waitStatus(h.t, id, ['running']);
  await w2.stop();
  assert.equal((await api(h.t, `/v1/video/tasks/${id}`)).body.status, 'pending');
  await api(h.t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
});
