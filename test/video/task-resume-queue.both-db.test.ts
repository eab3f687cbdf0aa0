// The resume path's database side, in-process and deterministic on both databases (docs/video.md, "When a
// worker dies"): workers that claim a task and then go silent are played with the queue and archive directly.
// The fenced append stores the checkpoint with its chunk; on expiry a task with one goes back to the queue
// (status kept, resumes counted, claimed before pending tasks, handed over with its checkpoint) every time a
// taker archived something before it died, and at most 3 times in a row when none did; the previous owner's appends and heartbeats then change nothing; a cancel while it waits ends it at
// once; a task without a checkpoint fails worker_lost as before. The real-process cases (SIGKILL, SIGSTOP, a
// real RTSP camera) are in video-resume-*.both-db.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../helpers/app.js';
import {
  SyntheticProvider,
  chunksOf,
  createTask,
  parseEvents,
  readStream,
  startWorker,
  waitStatus,
} from '../helpers/video-tasks.js';
import { LEASE, expire, useReaperHarness } from '../helpers/reaper-harness.js';
import { MAX_RESUMES } from '../../src/video/tasks/reaper.js';
import type { FrameOutput, TaskCheckpoint, VideoProvider } from '../../src/video/task-contract.js';
import { walkerRules } from '../helpers/synthetic-provider.js';
import { KEEP_CHECKPOINT } from '../../src/video/stream/stream-archive.js';

const h = useReaperHarness();

const liveFrame = (i: number, trackId: number): FrameOutput => ({
  stream_info: {
    frame_index: i,
    total_frames: null,
    decoded_frames: i + 1,
    dropped_frames: 0,
    fps: 5,
    elapsed_ms: 200 * i,
    stream_time_ms: 200 * i,
    received_at_ms: 1_800_000_000_000 + 200 * i,
    live: true,
    reconnects: 0,
  },
  delta: {
    results: [
      {
        index: 0,
        targets: [
          { track_id: trackId, class: 'person', confidence: 0.9, roi: { left: 0, top: 0, width: 5, height: 5 } },
        ],
      },
    ],
  },
});
const checkpoint = (frames: number, f: FrameOutput, next: number): TaskCheckpoint => ({
  v: 1,
  frames,
  frame_index: f.stream_info.frame_index,
  stream_time_ms: f.stream_info.stream_time_ms!,
  received_at_ms: f.stream_info.received_at_ms!,
  decoded_frames: f.stream_info.decoded_frames,
  dropped_frames: 0,
  reconnects: 0,
  elapsed_ms: f.stream_info.elapsed_ms,
  next_track_id: next,
  live: true,
});
const record = async (id: string) => (await api(h.t, `/v1/video/tasks/${id}`)).body;

/** Claims until `id` comes (other tests' leftovers are left claimed by nobody that matters). */
async function claimTask(id: string, owner: string) {
  for (let i = 0; i < 20; i++) {
    const c = await h.queue.claim(owner, LEASE);
    if (!c || c.id === id) return c;
  }
  return null;
}

test('the append stores the checkpoint; on expiry the task waits for another worker, which gets it; the old owner is fenced off', async () => {
  const id = await createTask(h.t);
  assert.equal((await claimTask(id, 'w1'))?.chunkCount, 0);
  const f0 = liveFrame(0, 1);
  const f1 = liveFrame(1, 2);
  assert.equal(await h.archive.appendFrame(id, 'w1', f0, LEASE, checkpoint(1, f0, 2)), 'appended');
  // The second append goes through the one-statement path (the tail of the first).
  assert.equal(await h.archive.appendFrame(id, 'w1', f1, LEASE, checkpoint(2, f1, 3)), 'appended');
  await expire();
  assert.equal(await h.reaper.reapOnce(), 1);
  const waiting = await record(id);
  assert.equal(waiting.status, 'streaming', 'readers see it running while it waits');
  assert.equal(waiting.resumes, 1);
  // A pending task created meanwhile comes after it.
  const other = await createTask(h.t);
  const c = await h.queue.claim('w2', LEASE);
  assert.equal(c?.id, id);
  assert.equal(c?.chunkCount, 2);
  assert.deepEqual(c?.checkpoint, checkpoint(2, f1, 3));
  assert.equal(c?.lastInfo?.frame_index, 1);
  // The frozen first worker wakes: nothing it does lands.
  h.archive.forget(id);
  assert.equal(await h.archive.appendFrame(id, 'w1', liveFrame(2, 2), LEASE, null), 'lost');
  assert.equal(await h.queue.heartbeat(id, 'w1', LEASE), null);
  assert.equal(
    await h.archive.finishOwned(id, 'w1', {
      status: 'succeeded',
      reason: 'stop',
      usage: { processed_frames: 3, processing_time_ms: 1, decoded_frames: 3, dropped_frames: 0 },
    }),
    null,
  );
  // The second goes on with chunk 2.
  const f2 = { ...liveFrame(5, 3), stream_info: { ...liveFrame(5, 3).stream_info, gap_ms: 800 } };
  assert.equal(await h.archive.appendFrame(id, 'w2', f2, LEASE, checkpoint(3, f2, 4)), 'appended');
  assert.equal(
    await h.archive.finishOwned(id, 'w2', {
      status: 'succeeded',
      reason: 'max_frames',
      usage: { processed_frames: 3, processing_time_ms: 1, decoded_frames: 6, dropped_frames: 0 },
    }),
    'succeeded',
  );
  const bytes = (await readStream(h.t, id)).bytes;
  const chunks = chunksOf(bytes);
  assert.deepEqual(
    chunks.map((x) => x.id),
    [0, 1, 2, 3].map((i) => `${id}.${i}`),
  );
  assert.deepEqual(
    chunks.map((x) => x.stream_info.frame_index),
    [0, 1, 5, 5],
  );
  assert.equal(chunks[2].stream_info.gap_ms, 800);
  assert.equal(parseEvents(bytes).at(-1)!.kind, 'done');
  const done = await record(id);
  assert.equal(done.attempts, 2);
  assert.equal(done.resumes, 1);
  await api(h.t, `/v1/video/tasks/${other}/cancel`, { method: 'POST' });
});

test(`a task that moves on between deaths is handed on every time; ${MAX_RESUMES} takeovers in a row that archive nothing, and the next expiry fails it worker_lost`, async () => {
  const id = await createTask(h.t);
  let owner = 'x0';
  let frames = 0;
  await claimTask(id, owner);
  const append = async () => {
    const f = liveFrame(frames, frames + 1);
    frames++;
    assert.equal(await h.archive.appendFrame(id, owner, f, LEASE, checkpoint(frames, f, frames + 1)), 'appended');
  };
  const dies = async () => {
    await expire();
    assert.equal(await h.reaper.reapOnce(), 1);
  };
  const takeOver = async () => {
    owner = `x${Number(owner.slice(1)) + 1}`;
    assert.equal((await h.queue.claim(owner, LEASE))?.id, id);
  };
  // Five deaths, each after the taker archived a chunk: five takeovers.
  for (let n = 1; n <= 5; n++) {
    await append();
    await dies();
    const r = await record(id);
    assert.equal(r.status, 'streaming');
    assert.equal(r.resumes, n);
    await takeOver();
  }
  // Then takers that die before their first chunk: the last one's takeover counts as the first of the streak,
  // and after MAX_RESUMES in a row the next expiry fails the task.
  for (let n = 2; n <= MAX_RESUMES + 1; n++) {
    await dies();
    const r = await record(id);
    if (n <= MAX_RESUMES) {
      assert.equal(r.status, 'streaming', `takeover ${n} in a row`);
      await takeOver();
    } else {
      assert.equal(r.status, 'failed');
      assert.equal(r.error.code, 'worker_lost');
      assert.equal(r.resumes, 5 + MAX_RESUMES - 1);
    }
  }
  assert.equal(chunksOf((await readStream(h.t, id)).bytes).at(-1).finish_reason, 'error');
});

test('a cancel while the task waits for a worker ends it cancelled at once', async () => {
  const id = await createTask(h.t);
  await claimTask(id, 'c1');
  const f = liveFrame(0, 1);
  await h.archive.appendFrame(id, 'c1', f, LEASE, checkpoint(1, f, 2));
  await expire();
  await h.reaper.reapOnce();
  assert.equal((await record(id)).status, 'streaming');
  const r = await api(h.t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
  assert.equal(r.body.status, 'cancelled');
  const bytes = (await readStream(h.t, id)).bytes;
  assert.equal(chunksOf(bytes).at(-1).finish_reason, 'cancelled');
  assert.equal(parseEvents(bytes).at(-1)!.kind, 'done');
  assert.equal(await h.queue.claim('c2', LEASE), null, 'nothing left to claim');
});

test('a task without a checkpoint (a file) still fails worker_lost mid-stream', async () => {
  const id = await createTask(h.t);
  await claimTask(id, 'f1');
  const f = { ...liveFrame(0, 1), stream_info: { ...liveFrame(0, 1).stream_info, live: false, total_frames: 10 } };
  assert.equal(await h.archive.appendFrame(id, 'f1', f, LEASE), 'appended');
  await expire();
  assert.equal(await h.reaper.reapOnce(), 1);
  const r = await record(id);
  assert.equal(r.status, 'failed');
  assert.equal(r.error.code, 'worker_lost');
  assert.equal(r.resumes, 0);
});

test('a task that continues never starts again from its first frame on a provider that cannot continue it', async () => {
  const id = await createTask(h.t);
  await claimTask(id, 'g1');
  const f = liveFrame(0, 1);
  await h.archive.appendFrame(id, 'g1', f, LEASE, checkpoint(1, f, 2));
  await expire();
  await h.reaper.reapOnce();
  // The synthetic provider (as a remote node) would run the whole video again: the worker fails the task instead.
  const w = startWorker(h.t, () => [new SyntheticProvider()]);
  try {
    const r = await waitStatus(h.t, id, ['failed', 'succeeded', 'cancelled']);
    assert.equal(r.status, 'failed');
    assert.equal(r.error.code, 'worker_lost');
    const chunks = chunksOf((await readStream(h.t, id)).bytes);
    assert.deepEqual(
      chunks.map((c) => c.finish_reason),
      [null, 'error'],
    );
  } finally {
    await w.stop();
  }
});

test("the last archived chunk's webhook events are queued again by the worker that continues the task, once", async () => {
  // The dead worker archived chunks 0 and 1 and died before queuing chunk 1's events (it had queued chunk 0's).
  const id = await createTask(h.t, {
    input: [{ type: 'video_url', url: 'rtsp://127.0.0.1:9/cam' }],
    steps: [{ model: 'detect' }, { model: 'analytics', parameters: walkerRules() }],
    webhook: { url: 'http://127.0.0.1:9/hook', events: ['line.crossed'] },
  });
  await claimTask(id, 'v1');
  const crossing = (n: number) => ({ id: `ev_${id}_${n}`, type: 'line.crossed', rule: 'door', track_id: 1 });
  const f0 = { ...liveFrame(0, 1), analytics: { events: [crossing(0)], totals: {} } };
  const f1 = { ...liveFrame(1, 1), analytics: { events: [crossing(1)], totals: {} } };
  await h.archive.appendFrame(id, 'v1', f0, LEASE, checkpoint(1, f0, 2));
  await h.archive.appendFrame(id, 'v1', f1, LEASE, checkpoint(2, f1, 2));
  await expire();
  await h.reaper.reapOnce();
  // A provider that continues the task and finds it at its end (the frames it may have are archived).
  const ends: VideoProvider = {
    name: 'ends',
    resumes: true,
    run: async (_req, _src, ctx) => {
      assert.equal(ctx.resume?.frames, 2);
      return {
        finish_reason: 'max_frames',
        stream_info: f1.stream_info,
        usage: { processed_frames: 0, processing_time_ms: 1, decoded_frames: 2, dropped_frames: 0 },
        tracks: [],
      };
    },
  };
  const w = startWorker(h.t, () => [ends]);
  try {
    assert.equal((await waitStatus(h.t, id, ['failed', 'succeeded', 'cancelled'])).status, 'succeeded');
    const rec = (await api(h.t, `/v1/video/tasks/${id}?include=webhook_deliveries`)).body;
    assert.deepEqual(
      rec.webhook_deliveries
        .map((d: { event: string }) => d.event)
        .filter((e: string) => e.startsWith('line.'))
        .sort(),
      [`line.crossed ${crossing(1).id}`],
      "chunk 1's event queued once; chunk 0's went out before the death",
    );
  } finally {
    await w.stop();
  }
});

test('a continued file task whose input ends before the frames archived after its checkpoint fails resume_mismatch', async () => {
  const id = await createTask(h.t);
  await claimTask(id, 'm1');
  const file = (i: number) => ({ ...liveFrame(i, 1), stream_info: { ...liveFrame(i, 1).stream_info, live: false } });
  // The checkpoint is of chunk 0 (a file's is stored with every few chunks); chunks 1 and 2 came after it.
  const cp = { ...checkpoint(1, file(0), 2), v: 2 as const, live: false, decoder: { v: 1 }, pipeline: { v: 1 } };
  await h.archive.appendFrame(id, 'm1', file(0), LEASE, cp);
  await h.archive.appendFrame(id, 'm1', file(1), LEASE, KEEP_CHECKPOINT);
  await h.archive.appendFrame(id, 'm1', file(2), LEASE, KEEP_CHECKPOINT);
  await expire();
  assert.equal(await h.reaper.reapOnce(), 1);
  // A provider that continues from the checkpoint and finds the input over at once.
  const short: VideoProvider = {
    name: 'short',
    resumes: true,
    run: async (_req, _src, ctx) => {
      assert.deepEqual([ctx.resume?.frames, ctx.resume?.live], [1, false]);
      return {
        finish_reason: 'stop',
        stream_info: file(0).stream_info,
        usage: { processed_frames: 0, processing_time_ms: 1, decoded_frames: 1, dropped_frames: 0 },
        tracks: [],
      };
    },
  };
  const w = startWorker(h.t, () => [short]);
  try {
    const r = await waitStatus(h.t, id, ['failed', 'succeeded', 'cancelled']);
    assert.equal(r.status, 'failed');
    assert.equal(r.error.code, 'resume_mismatch');
    assert.match(r.error.message, /ended 2 frame\(s\) before the archive's last frame/);
  } finally {
    await w.stop();
  }
});
