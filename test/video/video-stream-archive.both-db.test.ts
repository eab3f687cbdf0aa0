// The stream archive's frame appends: after a task's first frame a worker appends each next one in one
// statement that expects the row as it left it, and falls back to the row lock whenever the row moved (a
// heartbeat, a cancel, another process finishing the task). The bytes must stay contiguous, the chunk ids
// consecutive and the task's counters equal to the archive, whichever path wrote them. On PGlite and
// PostgreSQL (where the one statement also tells other processes at commit). Frames of several tasks that
// wait while a statement is in flight go together in one statement, each as if alone.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, backend, type TestApp } from '../helpers/app.js';
import { chunksOf, createTask, parseEvents, startVideoApp, waitFor } from '../helpers/video-tasks.js';
import { TaskQueue } from '../../src/video/worker/queue.js';
import { StreamArchive } from '../../src/video/stream/stream-archive.js';
import { StreamHub, hubFor } from '../../src/video/stream/stream-hub.js';

let t: TestApp;
let queue: TaskQueue;
before(async () => {
  // No worker in the app (startVideoApp) and its reaper idle: these tests are the only writers of their tasks.
  t = await startVideoApp({ SIGHTFLOW_VIDEO_REAPER_MS: '3600000' });
  queue = new TaskQueue(t.app.services);
});
after(async () => {
  await t?.close();
});

const LEASE = 60_000;
const frame = (i: number) => ({
  stream_info: {
    frame_index: i,
    total_frames: null,
    decoded_frames: i + 1,
    dropped_frames: 0,
    fps: 5,
    elapsed_ms: 200 * i,
  },
  delta: {
    results: [
      {
        index: 0,
        targets: [{ track_id: 1, class: 'person', confidence: 0.9, roi: { left: i, top: 0, width: 5, height: 5 } }],
      },
    ],
  },
});

/** A claimed task and an archive of this "process" writing it. */
async function claimed(owner: string): Promise<{ id: string; archive: StreamArchive }> {
  const id = await createTask(t);
  const c = await queue.claim(owner, LEASE);
  assert.equal(c?.id, id);
  return { id, archive: new StreamArchive(t.app.services, hubFor(t.app.services)) };
}

/** The archive's bytes, and the task row's view of them. */
async function stored(archive: StreamArchive, id: string) {
  const { bytes } = await archive.read(id, 0, 100_000);
  const [row] = await t.app.services.db.query(
    'SELECT stream_bytes, chunk_count, status, progress FROM video_tasks WHERE id = $1',
    [id],
  );
  return { bytes, row: row! };
}

/** Every row starts where the previous one ended (reading from any row's offset gives the rest exactly), to `length`. */
async function assertContiguous(id: string, length: number): Promise<void> {
  const rows = await t.app.services.db.query<{ byte_offset: string; bytes: Uint8Array }>(
    'SELECT byte_offset, bytes FROM video_stream_bytes WHERE task_id = $1 ORDER BY byte_offset',
    [id],
  );
  let end = 0;
  for (const r of rows) {
    assert.equal(Number(r.byte_offset), end);
    end += r.bytes.length;
  }
  assert.equal(end, length);
}

test('consecutive frames: the first under the row lock, the rest in one statement each; bytes contiguous, ids consecutive', async () => {
  const { id, archive } = await claimed('w1');
  for (let i = 0; i < 6; i++) assert.equal(await archive.appendFrame(id, 'w1', frame(i), LEASE), 'appended');
  assert.deepEqual(archive.frameAppends, { oneStatement: 5, locked: 1, batches: 0 });
  const { bytes, row } = await stored(archive, id);
  assert.equal(Number(row.stream_bytes), bytes.length, 'the task row ends where the archive does');
  assert.equal(Number(row.chunk_count), 6);
  assert.equal(row.status, 'streaming');
  assert.equal((row.progress as { frame_index: number }).frame_index, 5);
  const chunks = chunksOf(bytes);
  assert.deepEqual(
    chunks.map((c) => c.id),
    [...Array(6).keys()].map((i) => `${id}.${i}`),
  );
  assert.equal(chunks[0].model, 'detect');
  assert.ok(chunks.slice(1).every((c) => c.model === undefined));
  assert.deepEqual(
    chunks.map((c) => c.delta.results[0].targets[0].roi.left),
    [0, 1, 2, 3, 4, 5],
  );
  await assertContiguous(id, bytes.length);
  await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
});

test('a heartbeat between frames moves the row: the next frame takes the row lock and lands after it', async () => {
  const { id, archive } = await claimed('w2');
  await archive.appendFrame(id, 'w2', frame(0), LEASE);
  await archive.appendFrame(id, 'w2', frame(1), LEASE);
  assert.equal(await archive.appendHeartbeat(id, 'w2'), true);
  await archive.appendFrame(id, 'w2', frame(2), LEASE);
  await archive.appendFrame(id, 'w2', frame(3), LEASE);
  assert.deepEqual(archive.frameAppends, { oneStatement: 2, locked: 2, batches: 0 });
  const { bytes, row } = await stored(archive, id);
  assert.equal(Number(row.stream_bytes), bytes.length);
  assert.deepEqual(
    parseEvents(bytes).map((e) => (e.kind === 'chunk' ? e.chunk.id : e.kind)),
    ['comment', `${id}.0`, `${id}.1`, 'comment', `${id}.2`, `${id}.3`],
  );
  await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
});

test('a cancel between frames: the next frame writes nothing and says cancelling', async () => {
  const { id, archive } = await claimed('w3');
  await archive.appendFrame(id, 'w3', frame(0), LEASE);
  await archive.appendFrame(id, 'w3', frame(1), LEASE);
  const before = await stored(archive, id);
  assert.equal((await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' })).body.status, 'cancelling');
  assert.equal(await archive.appendFrame(id, 'w3', frame(2), LEASE), 'cancelling');
  const after = await stored(archive, id);
  assert.ok(after.bytes.equals(before.bytes));
  assert.equal(Number(after.row.chunk_count), 2);
  // Finishing it (the worker's answer to 'cancelling') ends the archive at a chunk boundary.
  const state = await archive.withTask(id, (task, q, append) =>
    archive.finishIn(q, task, append, {
      status: 'succeeded',
      reason: 'stop',
      usage: { processed_frames: 2, processing_time_ms: 1, decoded_frames: 2, dropped_frames: 0 },
    }),
  );
  assert.equal(state, 'cancelled');
  assert.deepEqual(
    chunksOf((await stored(archive, id)).bytes).map((c) => c.finish_reason),
    [null, null, 'cancelled'],
  );
});

test("another process finished the task: the old owner's next frame is lost and the archive stays as it was", async () => {
  const { id, archive } = await claimed('w4');
  await archive.appendFrame(id, 'w4', frame(0), LEASE);
  await archive.appendFrame(id, 'w4', frame(1), LEASE);
  // Another process (its own archive, as the reaper of another node) fails the task.
  const other = new StreamArchive(t.app.services, hubFor(t.app.services));
  await other.withTask(id, (task, q, append) =>
    other.finishIn(q, task, append, {
      status: 'failed',
      reason: 'error',
      error: { code: 'worker_lost', message: 'gone' },
      usage: { processed_frames: 2, processing_time_ms: 1, decoded_frames: 2, dropped_frames: 0 },
    }),
  );
  const done = await stored(archive, id);
  assert.equal(done.row.status, 'failed');
  assert.equal(await archive.appendFrame(id, 'w4', frame(2), LEASE), 'lost');
  const after = await stored(archive, id);
  assert.ok(after.bytes.equals(done.bytes));
  assert.equal(Number(after.row.stream_bytes), after.bytes.length);
  assert.equal(parseEvents(after.bytes).at(-1)!.kind, 'done');
});

test('one-statement appends tell other processes the new end at commit', {
  skip: backend === 'postgres' ? false : 'PostgreSQL only (PGlite has one process)',
}, async () => {
  const { id, archive } = await claimed('w5');
  const elsewhere = new StreamHub(t.app.services);
  const ends: (number | null)[] = [];
  const off = elsewhere.onTask(id, (end) => ends.push(end));
  try {
    // The LISTEN connection is up once a notification of a write made after subscribing arrives.
    await waitFor('the other process to listen', async () => {
      await archive.appendHeartbeat(id, 'w5');
      await new Promise((r) => setTimeout(r, 50));
      return ends.length > 0;
    });
    for (let i = 0; i < 4; i++) await archive.appendFrame(id, 'w5', frame(i), LEASE);
    assert.equal(archive.frameAppends.oneStatement, 3);
    const { bytes } = await stored(archive, id);
    await waitFor('the last end to arrive', async () => ends.includes(bytes.length));
  } finally {
    off();
    await elsewhere.close();
  }
  await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
});

/** `n` claimed tasks of one archive (one worker process running n cameras). */
async function claimedMany(owner: string, n: number): Promise<{ ids: string[]; archive: StreamArchive }> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const id = await createTask(t);
    assert.equal((await queue.claim(owner, LEASE))?.id, id);
    ids.push(id);
  }
  return { ids, archive: new StreamArchive(t.app.services, hubFor(t.app.services)) };
}

test('frames of many tasks at once go several to a statement; each task reads as if its frames were alone', async () => {
  const { ids, archive } = await claimedMany('w6', 12);
  const published = new Map<string, number>();
  const off = hubFor(t.app.services).onAppend((id, end) => {
    if (end !== null) published.set(id, end);
  });
  // Each task's frames one after another (as a worker appends), the tasks all at once.
  await Promise.all(
    ids.map(async (id) => {
      for (let i = 0; i < 5; i++) assert.equal(await archive.appendFrame(id, 'w6', frame(i), LEASE), 'appended');
    }),
  );
  off();
  assert.equal(archive.frameAppends.locked, 12, 'each first frame took the row lock');
  assert.equal(archive.frameAppends.oneStatement, 48);
  // Once every task is past its first frame, the others' frames wait while each statement is in flight.
  assert.ok(archive.frameAppends.batches > 0, "some statements carried several tasks' frames");
  for (const id of ids) {
    const { bytes, row } = await stored(archive, id);
    assert.equal(Number(row.stream_bytes), bytes.length, 'the task row ends where the archive does');
    assert.equal(Number(row.chunk_count), 5);
    assert.equal((row.progress as { frame_index: number }).frame_index, 4);
    const chunks = chunksOf(bytes);
    assert.deepEqual(
      chunks.map((c) => c.id),
      [...Array(5).keys()].map((i) => `${id}.${i}`),
    );
    assert.deepEqual(
      chunks.map((c) => c.delta.results[0].targets[0].roi.left),
      [0, 1, 2, 3, 4],
    );
    await assertContiguous(id, bytes.length);
    assert.equal(published.get(id), bytes.length, 'subscribers heard the last end');
  }
  for (const id of ids) await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
});

test('in a statement of several, a task whose row moved falls back alone: the others are appended', async () => {
  const { ids, archive } = await claimedMany('w7', 4);
  for (const id of ids) await archive.appendFrame(id, 'w7', frame(0), LEASE);
  const [moved, cancelled, ...rest] = ids as [string, string, ...string[]];
  // Another writer moves one row (a heartbeat comment of another archive) and a cancel arrives for another.
  const other = new StreamArchive(t.app.services, hubFor(t.app.services));
  assert.equal(await other.appendHeartbeat(moved, 'w7'), true);
  assert.equal((await api(t, `/v1/video/tasks/${cancelled}/cancel`, { method: 'POST' })).body.status, 'cancelling');
  const before = archive.frameAppends.batches;
  const outcomes = await Promise.all(ids.map((id) => archive.appendFrame(id, 'w7', frame(1), LEASE)));
  assert.deepEqual(outcomes, ['appended', 'cancelling', 'appended', 'appended']);
  assert.equal(archive.frameAppends.batches, before + 1, 'the four frames went in one statement');
  const m = await stored(archive, moved);
  assert.deepEqual(
    parseEvents(m.bytes).map((e) => (e.kind === 'chunk' ? e.chunk.id : e.kind)),
    ['comment', `${moved}.0`, 'comment', `${moved}.1`],
  );
  assert.equal(Number(m.row.stream_bytes), m.bytes.length);
  assert.equal(Number((await stored(archive, cancelled)).row.chunk_count), 1);
  for (const id of rest) assert.equal(Number((await stored(archive, id)).row.chunk_count), 2);
  for (const id of ids) await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
});

test("statements of several tell other processes each task's new end at commit", {
  skip: backend === 'postgres' ? false : 'PostgreSQL only (PGlite has one process)',
}, async () => {
  const { ids, archive } = await claimedMany('w8', 6);
  const elsewhere = new StreamHub(t.app.services);
  const ends = new Map<string, number[]>();
  const offs = ids.map((id) => elsewhere.onTask(id, (end) => ends.set(id, [...(ends.get(id) ?? []), end ?? -1])));
  try {
    await waitFor('the other process to listen', async () => {
      await archive.appendHeartbeat(ids[0]!, 'w8');
      await new Promise((r) => setTimeout(r, 50));
      return (ends.get(ids[0]!)?.length ?? 0) > 0;
    });
    await Promise.all(
      ids.map(async (id) => {
        for (let i = 0; i < 4; i++) await archive.appendFrame(id, 'w8', frame(i), LEASE);
      }),
    );
    assert.ok(archive.frameAppends.batches > 0);
    for (const id of ids) {
      const { bytes } = await stored(archive, id);
      await waitFor(`${id}'s last end to arrive`, async () => ends.get(id)?.includes(bytes.length) ?? false);
    }
  } finally {
    for (const off of offs) off();
    await elsewhere.close();
  }
  for (const id of ids) await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
});

/** An archive of this "process" whose live frames wait up to `gatherMs` for other live tasks' frames. */
function gathering(gatherMs: number): StreamArchive {
  const s = t.app.services;
  return new StreamArchive(
    { ...s, config: { ...s.config, video: { ...s.config.video, appendGatherMs: gatherMs } } },
    hubFor(s),
  );
}

const liveFrame = (i: number) => {
  const f = frame(i);
  return { ...f, stream_info: { ...f.stream_info, live: true, received_at_ms: Date.now() } };
};

test('live frames wait for the other live tasks and go in one statement; a lone live task or a file does not wait', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    const id = await createTask(t);
    assert.equal((await queue.claim('w9', LEASE))?.id, id);
    ids.push(id);
  }
  // A wait that would outlast the test's time limit: every append below ends only because it did not wait.
  const archive = gathering(600_000);
  const [lone, file, ...cams] = ids as [string, string, ...string[]];
  for (let i = 0; i < 3; i++) assert.equal(await archive.appendFrame(lone, 'w9', liveFrame(i), LEASE), 'appended');
  for (let i = 0; i < 3; i++) assert.equal(await archive.appendFrame(file, 'w9', frame(i), LEASE), 'appended');
  await archive.finishOwned(lone, 'w9', {
    status: 'succeeded',
    reason: 'stop',
    usage: { processed_frames: 3, processing_time_ms: 1, decoded_frames: 3, dropped_frames: 0 },
  });
  const before = { ...archive.frameAppends };
  // Three cameras, each frame of each as its camera sends it: a round's frames go in one statement.
  for (let round = 0; round < 4; round++)
    assert.deepEqual(await Promise.all(cams.map((id) => archive.appendFrame(id, 'w9', liveFrame(round), LEASE))), [
      'appended',
      'appended',
      'appended',
    ]);
  assert.equal(archive.frameAppends.locked - before.locked, 3, "each camera's first frame took the row lock");
  assert.equal(archive.frameAppends.oneStatement - before.oneStatement, 9);
  assert.equal(archive.frameAppends.batches - before.batches, 3, 'one statement a round after the first');
  for (const id of cams) {
    const chunks = chunksOf((await stored(archive, id)).bytes);
    assert.deepEqual(
      chunks.map((c) => c.id),
      [0, 1, 2, 3].map((i) => `${id}.${i}`),
    );
  }
  for (const id of [file, ...cams]) await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
});

test('a live frame waits no longer than the gather time when another live task sends nothing', async () => {
  const ids: string[] = [];
  for (let i = 0; i < 2; i++) {
    const id = await createTask(t);
    assert.equal((await queue.claim('w10', LEASE))?.id, id);
    ids.push(id);
  }
  const archive = gathering(150);
  const [a, b] = ids as [string, string];
  for (let i = 0; i < 2; i++)
    await Promise.all([
      archive.appendFrame(a, 'w10', liveFrame(i), LEASE),
      archive.appendFrame(b, 'w10', liveFrame(i), LEASE),
    ]);
  // b's camera stalls: a's next frame waits for it the gather time, then goes alone.
  const t0 = performance.now();
  assert.equal(await archive.appendFrame(a, 'w10', liveFrame(2), LEASE), 'appended');
  const waited = performance.now() - t0;
  assert.ok(waited >= 140, `waited ${waited.toFixed(0)} ms`);
  assert.equal(Number((await stored(archive, a)).row.chunk_count), 3);
  for (const id of ids) await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
});
