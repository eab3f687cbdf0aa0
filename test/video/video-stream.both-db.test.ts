// Video task streams end to end with synthetic providers driving the worker deterministically: byte-exact
// replay from any offset (Last-Event-ID and ?offset=), 416 past the end, cancel at a chunk boundary,
// failover before the first chunk and failure after it, restart replay. Runs on PGlite and PostgreSQL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, type TestApp } from '../helpers/app.js';
import {
  SyntheticProvider,
  startVideoApp,
  body,
  chunksOf,
  createTask,
  parseEvents,
  readStream,
  startWorker,
  waitFor,
  waitStatus,
} from '../helpers/video-tasks.js';
import type { VideoWorker } from '../../src/video/worker/worker.js';
import { errors } from '../../src/base/errors.js';

let t: TestApp;
before(async () => {
  t = await startVideoApp();
});
after(async () => {
  await t?.close();
});

async function withWorker<T>(
  providers: SyntheticProvider[],
  fn: (w: VideoWorker) => Promise<T>,
  settings = {},
): Promise<T> {
  const w = startWorker(t, () => providers, settings);
  try {
    return await fn(w);
  } finally {
    await w.stop();
  }
}

test('a task streams every frame, ends with stop + [DONE], and /results appears', async () => {
  await withWorker([new SyntheticProvider({ frames: 12, frameMs: 5 })], async () => {
    const id = await createTask(t, body(undefined, { model: 'my-model' }));
    const r = await readStream(t, id);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /text\/event-stream/);
    assert.equal(r.headers.get('x-stream-offset'), '0');
    const events = parseEvents(r.bytes);
    assert.equal(events.at(-1)!.kind, 'done');
    assert.deepEqual(events[0], { kind: 'comment', text: ': hb' }, 'every archive opens with a heartbeat comment');
    const chunks = chunksOf(r.bytes);
    assert.equal(chunks.length, 13);
    assert.equal(chunks[0].model, 'my-model');
    assert.equal(chunks[0].object, 'mm.pipeline.chunk');
    assert.ok(chunks.slice(1).every((c) => c.model === undefined));
    assert.deepEqual(
      chunks.slice(0, 12).map((c) => c.stream_info.frame_index),
      [...Array(12).keys()],
    );
    assert.ok(chunks.slice(0, 12).every((c) => c.finish_reason === null));
    const last = chunks.at(-1);
    assert.equal(last.finish_reason, 'stop');
    assert.deepEqual(Object.keys(last.usage).sort(), [
      'decoded_frames',
      'dropped_frames',
      'processed_frames',
      'processing_time_ms',
    ]);
    assert.equal(last.usage.processed_frames, 12);
    assert.equal(new Set(chunks.map((c) => c.id)).size, chunks.length, 'chunk ids are unique');
    const rec = await waitStatus(t, id, ['succeeded']);
    assert.equal(rec.usage.processed_frames, 12);
    assert.equal(rec.progress.frame_index, 11);
    assert.ok(rec.started_at && rec.finished_at);
    const res = await api(t, `/v1/video/tasks/${id}/results`);
    assert.equal(res.status, 200);
    assert.equal(res.body.object, 'mm.pipeline.result');
    assert.equal(res.body.id, id);
    assert.equal(res.body.model, 'my-model');
    assert.equal(res.body.usage.processed_frames, 12);
    assert.deepEqual(
      res.body.tracks.map((x: any) => [x.track_id, x.class, x.first_frame, x.last_frame, x.frames_seen]),
      [
        [1, 'person', 0, 10, 6],
        [2, 'car', 1, 11, 6],
      ],
    );
    const usage = (await t.app.services.usage.events(t.projectId)).filter((e) => e.endpoint === '/v1/video/process');
    assert.equal(usage.length, 1, 'one ledger row per task');
    assert.equal(usage[0]!.model, 'my-model');
    assert.equal(usage[0]!.frames, 12);
  });
});

/** Deterministic pseudo-random numbers (a test must not depend on the run). */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

/** A client that drops the connection at `stops` (absolute offsets, ascending) and resumes from what it holds. */
async function resumingRead(
  id: string,
  via: 'header' | 'query',
  stops: number[],
): Promise<{ bytes: Buffer; resumes: number }> {
  let have = Buffer.alloc(0);
  let resumes = 0;
  for (const stop of stops) {
    if (stop <= have.length) continue;
    const r = await readStream(t, id, { offset: have.length, via, stopAfter: stop - have.length });
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('x-stream-offset'), String(have.length));
    have = Buffer.concat([have, r.bytes]);
    resumes++;
    if (have.length < stop) return { bytes: have, resumes }; // the stream ended first
  }
  const rest = await readStream(t, id, { offset: have.length, via });
  return { bytes: Buffer.concat([have, rest.bytes]), resumes: resumes + 1 };
}

function assertWellFormed(bytes: Buffer): any[] {
  const events = parseEvents(bytes);
  assert.equal(events.at(-1)!.kind, 'done');
  const chunks = chunksOf(bytes);
  const idx = chunks.map((c) => c.stream_info.frame_index);
  for (let i = 1; i < idx.length; i++) assert.ok(idx[i] >= idx[i - 1], `frame_index non-decreasing at chunk ${i}`);
  assert.ok(chunks.at(-1).finish_reason !== null);
  return chunks;
}

test('byte-exact replay: 20 random disconnects, resumed by Last-Event-ID and by ?offset=, live and finished', async () => {
  const settings = { sseHeartbeatMs: 80 };
  await withWorker(
    [new SyntheticProvider({ frames: 60, frameMs: 15, startMs: 400 })],
    async () => {
      const id = await createTask(
        t,
        body(undefined, { steps: [{ model: 'detect', parameters: { classes: ['person', 'car'] } }] }),
      );
      const rand = rng(42);
      // While the task is live: stops every 40..440 bytes.
      const liveStops: number[] = [];
      for (let at = 0, i = 0; i < 20; i++) {
        at += 40 + Math.floor(rand() * 400);
        liveStops.push(at);
      }
      const [whole, live] = await Promise.all([readStream(t, id), resumingRead(id, 'header', liveStops)]);
      assert.ok(live.resumes >= 10, `the live reader resumed ${live.resumes} times`);
      assert.equal(live.bytes.length, whole.bytes.length);
      assert.ok(live.bytes.equals(whole.bytes), 'live resumed read is byte-identical');
      const chunks = assertWellFormed(whole.bytes);
      assert.equal(chunks.length, 61);
      assert.ok(
        parseEvents(whole.bytes).some((e) => e.kind === 'comment'),
        'heartbeat comments are archived and replayed',
      );
      await waitStatus(t, id, ['succeeded']);
      // Finished: 20 random offsets anywhere (mid-event included), both ways of asking.
      const total = whole.bytes.length;
      for (const via of ['header', 'query'] as const) {
        const stops = Array.from({ length: 20 }, () => 1 + Math.floor(rand() * (total - 1))).sort((a, b) => a - b);
        const replay = await resumingRead(id, via, stops);
        assert.ok(replay.bytes.equals(whole.bytes), `replay via ${via} is byte-identical`);
      }
      const again = await readStream(t, id);
      assert.ok(again.bytes.equals(whole.bytes), 'a second full read is identical');
      // Every single offset's tail matches.
      for (const off of [0, 1, 7, Math.floor(total / 2), total - 1]) {
        const r = await readStream(t, id, { offset: off, via: 'query' });
        assert.ok(r.bytes.equals(whole.bytes.subarray(off)), `tail from ${off}`);
      }
      const atEnd = await readStream(t, id, { offset: total });
      assert.equal(atEnd.status, 200);
      assert.equal(atEnd.bytes.length, 0);
      assert.equal(atEnd.headers.get('x-stream-offset'), String(total));
      const past = await api(t, `/v1/video/tasks/${id}/stream?offset=${total + 1}`);
      assert.equal(past.status, 416);
      assert.deepEqual(past.body, {
        error: {
          type: 'invalid_request_error',
          code: 'offset_out_of_range',
          message: `Offset ${total + 1} is beyond the ${total} bytes this finished stream emitted`,
          param: 'offset',
        },
      });
      const pastHeader = await api(t, `/v1/video/tasks/${id}/stream`, {
        headers: { 'last-event-id': String(total + 100) },
      });
      assert.equal(pastHeader.status, 416);
      const bad = await api(t, `/v1/video/tasks/${id}/stream?offset=-3`);
      assert.equal(bad.status, 400);
      assert.deepEqual(bad.body, {
        error: {
          type: 'invalid_request_error',
          code: 'invalid_parameter',
          message: 'Expected a byte offset (an integer >= 0) for offset but received "-3"',
          param: 'offset',
        },
      });
    },
    settings,
  );
});

test('an offset beyond what a live task emitted waits for the bytes', async () => {
  await withWorker([new SyntheticProvider({ frames: 30, frameMs: 20, startMs: 300 })], async () => {
    const id = await createTask(t);
    const ahead = readStream(t, id, { offset: 2000, via: 'query' });
    const whole = await readStream(t, id);
    const r = await ahead;
    assert.equal(r.status, 200);
    assert.ok(whole.bytes.length > 2000);
    assert.ok(r.bytes.equals(whole.bytes.subarray(2000)));
  });
});

test('cancel during streaming: cancelled within one chunk, terminal chunk cancelled, archive replayable; cancel twice -> same 202', async () => {
  const p = new SyntheticProvider({ frames: 10_000, frameMs: 25 });
  await withWorker([p], async () => {
    const id = await createTask(t);
    await waitFor(
      'a few chunks',
      async () => ((await api(t, `/v1/video/tasks/${id}`)).body.progress.frame_index ?? -1) >= 3,
    );
    const c1 = await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
    assert.equal(c1.status, 202);
    assert.ok(['cancelling', 'cancelled'].includes(c1.body.status), c1.text);
    assert.equal(c1.body.object, 'video.task');
    const atCancel = c1.body.progress.frame_index as number;
    const c2 = await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
    assert.equal(c2.status, 202);
    assert.ok(['cancelling', 'cancelled'].includes(c2.body.status));
    const rec = await waitStatus(t, id, ['cancelled'], 10_000);
    assert.ok(rec.finished_at);
    const c3 = await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
    assert.equal(c3.status, 202);
    assert.deepEqual(c3.body, rec);
    const whole = await readStream(t, id);
    const chunks = assertWellFormed(whole.bytes);
    const last = chunks.at(-1);
    assert.equal(last.finish_reason, 'cancelled');
    assert.equal(last.usage.processed_frames, chunks.length - 1);
    const lastFrame = chunks.at(-2).stream_info.frame_index;
    assert.ok(lastFrame <= atCancel + 1, `last frame ${lastFrame} within one chunk of the cancel at ${atCancel}`);
    const mid = Math.floor(whole.bytes.length / 2);
    assert.ok((await readStream(t, id, { offset: mid })).bytes.equals(whole.bytes.subarray(mid)));
    assert.equal((await api(t, `/v1/video/tasks/${id}/results`)).status, 404);
    await waitFor(
      'the provider to stop',
      async () => p.runs === 1 && (await new Promise<boolean>((r) => setTimeout(() => r(true), 100))),
    );
  });
});

test('cancel: pending -> cancelled at once with a complete stream; succeeded -> 409; unknown -> 404', async () => {
  const pending = await createTask(t);
  const c = await api(t, `/v1/video/tasks/${pending}/cancel`, { method: 'POST' });
  assert.equal(c.status, 202);
  assert.equal(c.body.status, 'cancelled');
  const s = await readStream(t, pending);
  const ev = parseEvents(s.bytes);
  assert.deepEqual(
    ev.map((e) => e.kind),
    ['comment', 'chunk', 'done'],
    'the opening comment, the terminal chunk, [DONE]',
  );
  assert.equal((ev[1] as any).chunk.finish_reason, 'cancelled');
  await withWorker([new SyntheticProvider({ frames: 3, frameMs: 1 })], async () => {
    const id = await createTask(t);
    await waitStatus(t, id, ['succeeded']);
    const r = await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
    assert.equal(r.status, 409);
    assert.deepEqual(r.body, {
      error: {
        type: 'conflict_error',
        code: 'task_finished',
        message: `Video task ${id} already succeeded; only pending, running or streaming tasks can be cancelled`,
        param: null,
      },
    });
  });
  const missing = await api(t, '/v1/video/tasks/vt_nope/cancel', { method: 'POST' });
  assert.equal(missing.status, 404);
  assert.deepEqual(missing.body, {
    error: { type: 'not_found_error', code: 'not_found', message: 'No such video task: vt_nope', param: null },
  });
});

test('failover: provider 1 answers 500 before the first chunk -> succeeds on provider 2, no duplicate chunks', async () => {
  const p1 = new SyntheticProvider({ name: 'p1', failBefore: 500, startMs: 50 });
  const p2 = new SyntheticProvider({ name: 'p2', frames: 8, frameMs: 2 });
  await withWorker([p1, p2], async () => {
    const id = await createTask(t);
    await waitStatus(t, id, ['succeeded']);
    assert.equal(p1.runs, 1);
    assert.equal(p2.runs, 1);
    const chunks = assertWellFormed((await readStream(t, id)).bytes);
    assert.deepEqual(
      chunks.map((c) => c.stream_info.frame_index),
      [0, 1, 2, 3, 4, 5, 6, 7, 7],
    );
    assert.equal(new Set(chunks.map((c) => c.id)).size, 9);
    assert.equal(chunks.at(-1).finish_reason, 'stop');
  });
});

test("a node that cannot start the task's model on its required GPU hands the task on; alone, the task fails with that code", async () => {
  const noGpu = () => errors.gpuUnavailable('centernet-coco', 'cuda (device 0)', 'no CUDA-capable device is detected');
  const p1 = new SyntheticProvider({ name: 'p1', failWith: noGpu() });
  const p2 = new SyntheticProvider({ name: 'p2', frames: 4, frameMs: 2 });
  await withWorker([p1, p2], async () => {
    const id = await createTask(t);
    await waitStatus(t, id, ['succeeded']);
    assert.deepEqual([p1.runs, p2.runs], [1, 1]);
  });
  const only = new SyntheticProvider({ name: 'only', failWith: noGpu() });
  await withWorker([only], async () => {
    const id = await createTask(t);
    const rec = await waitStatus(t, id, ['failed']);
    assert.equal(rec.error.code, 'gpu_unavailable');
    assert.match(rec.error.message, /SIGHTFLOW_GPU_REQUIRED forbids running it on the CPU/);
  });
});

test('three failing providers -> failed with a clear error; a fourth is never tried', async () => {
  const ps = [1, 2, 3, 4].map((i) => new SyntheticProvider({ name: `p${i}`, failBefore: 500 + i }));
  await withWorker(ps, async () => {
    const id = await createTask(t);
    const rec = await waitStatus(t, id, ['failed']);
    assert.equal(rec.progress.frame_index, null, 'no frame was processed');
    assert.deepEqual(rec.error, {
      code: 'providers_failed',
      message:
        'All 3 provider(s) failed before the first chunk: p1: synthetic failure before the first frame (HTTP 501); p2: synthetic failure before the first frame (HTTP 502); p3: synthetic failure before the first frame (HTTP 503)',
    });
    assert.deepEqual(
      ps.map((p) => p.runs),
      [1, 1, 1, 0],
    );
    const ev = parseEvents((await readStream(t, id)).bytes).filter((e) => e.kind !== 'comment');
    assert.equal(ev.length, 2);
    const terminal = (ev[0] as any).chunk;
    assert.equal(terminal.finish_reason, 'error');
    assert.deepEqual(terminal.error, rec.error);
    assert.equal((await api(t, `/v1/video/tasks/${id}/results`)).status, 404);
  });
});

test('a provider failing after the first chunk -> failed, finish_reason error, partial archive kept, no failover', async () => {
  const p1 = new SyntheticProvider({ name: 'p1', frames: 10, frameMs: 2, failAfterFrames: 3 });
  const p2 = new SyntheticProvider({ name: 'p2', frames: 10 });
  await withWorker([p1, p2], async () => {
    const id = await createTask(t);
    const rec = await waitStatus(t, id, ['failed']);
    assert.deepEqual(rec.error, {
      code: 'provider_error',
      message: 'Provider p1 failed after 3 chunk(s): synthetic failure after 3 frame(s)',
    });
    assert.equal(p2.runs, 0);
    const chunks = assertWellFormed((await readStream(t, id)).bytes);
    assert.deepEqual(
      chunks.map((c) => c.finish_reason),
      [null, null, null, 'error'],
    );
    assert.equal(chunks.at(-1).usage.processed_frames, 3);
    assert.equal(rec.usage.processed_frames, 3);
  });
});

test('a bad input (ApiError from the provider) fails at once and is never retried', async () => {
  const { ApiError } = await import('../../src/base/errors.js');
  let runs = 0;
  const corrupt = {
    name: 'local',
    async run(): Promise<never> {
      runs++;
      throw new ApiError(
        400,
        'invalid_request_error',
        'invalid_video',
        'The video could not be decoded: moov atom not found',
      );
    },
  };
  const spare = new SyntheticProvider({ name: 'spare' });
  const w = startWorker(t, () => [corrupt, spare]);
  try {
    const id = await createTask(t);
    const rec = await waitStatus(t, id, ['failed']);
    assert.deepEqual(rec.error, {
      code: 'invalid_video',
      message: 'The video could not be decoded: moov atom not found',
    });
    assert.equal(runs, 1);
    assert.equal(spare.runs, 0);
    assert.equal((await api(t, '/v1/project')).status, 200, 'server unaffected');
  } finally {
    await w.stop();
  }
});

test('no provider configured -> failed with no_provider', async () => {
  const w = startWorker(t, () => []);
  try {
    const id = await createTask(t);
    const rec = await waitStatus(t, id, ['failed']);
    assert.equal(rec.error.code, 'no_provider');
    assert.match(rec.error.message, /No video provider is available/);
  } finally {
    await w.stop();
  }
});

test('max_frames: finish_reason max_frames', async () => {
  await withWorker([new SyntheticProvider({ frames: 50, frameMs: 1 })], async () => {
    const id = await createTask(t, {
      input: [{ type: 'video_url', url: 'http://127.0.0.1:9/a.mp4', max_frames: 5 }],
      steps: [{ model: 'detect' }],
    });
    await waitStatus(t, id, ['succeeded']);
    const chunks = assertWellFormed((await readStream(t, id)).bytes);
    assert.equal(chunks.length, 6);
    assert.equal(chunks.at(-1).finish_reason, 'max_frames');
  });
});

test('server restart: finished streams replay byte-identically', async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { freshDatabaseUrl } = await import('../helpers/app.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-video-restart-'));
  const databaseUrl = await freshDatabaseUrl();
  try {
    const a = await startVideoApp({}, { dataDir, databaseUrl });
    const ids: string[] = [];
    const before: Buffer[] = [];
    const w = startWorker(a, () => [new SyntheticProvider({ frames: 15, frameMs: 2 })]);
    try {
      ids.push(await createTask(a), await createTask(a));
      for (const id of ids) before.push((await readStream(a, id)).bytes);
      const cancelled = await createTask(a, body('http://127.0.0.1:9/never.mp4'));
      await api(a, `/v1/video/tasks/${cancelled}/cancel`, { method: 'POST' });
      ids.push(cancelled);
      before.push((await readStream(a, cancelled)).bytes);
    } finally {
      await w.stop();
    }
    const projectId = a.projectId;
    await a.close();
    const b = await startVideoApp({}, { dataDir, databaseUrl });
    try {
      assert.equal(b.projectId, projectId);
      for (let i = 0; i < ids.length; i++) {
        const after = await readStream(b, ids[i]!);
        assert.ok(
          after.bytes.length > 0 && after.bytes.equals(before[i]!),
          `task ${i} replays identically after restart`,
        );
        const tail = await readStream(b, ids[i]!, { offset: 100, via: 'query' });
        assert.ok(tail.bytes.equals(before[i]!.subarray(100)));
      }
    } finally {
      await b.close();
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
