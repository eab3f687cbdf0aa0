// Live RTSP through the real task API: a real RTSP server on loopback (GStreamer's, test/helpers/
// rtsp_server.py) loops a clip of people walking (TUD-Campus from the evaluation data), and the server's
// in-process worker runs the default LocalProvider. Chunks arrive while the source plays, with
// total_frames null and the live fields in stream_info; max_frames, cancel, an analytics rule change, a server restart (reconnect
// with the gap counted), a stalled server and hostile servers each end the way docs/video.md says, and the
// worker keeps serving other tasks. Every wait is for an event (a chunk, a status), never a fixed sleep.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { TUD_CAMPUS } from '../helpers/eval-data.js';
import { evalDataSkip } from '../../eval/dir.js';
import { liveClip, startRtspServer, type RtspSource } from '../helpers/live-sources.js';
import {
  assertTracksContinue,
  chunksOf,
  createTask,
  liveFrames,
  peopleTask,
  readStream,
  waitStatus,
} from '../helpers/video-tasks.js';

const skip = evalDataSkip('tracking/TUD-Campus/TUD-Campus.mp4');

let t: TestApp;
let rtsp: RtspSource;
before(async () => {
  if (skip) return;
  t = await startTestApp({ SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true' });
  rtsp = await startRtspServer(await liveClip(TUD_CAMPUS()));
});
after(async () => {
  await rtsp?.close();
  await t?.close();
});

const create = (json: unknown) => createTask(t, json);

async function frameChunks(id: string): Promise<any[]> {
  return chunksOf((await readStream(t, id, { stopAfter: undefined })).bytes);
}

test('RTSP: chunks arrive while it plays, total_frames null, people tracked, max_frames ends it', {
  skip,
  timeout: 120_000,
}, async () => {
  const id = await create(peopleTask(rtsp.url, { max_frames: 15 }));
  // Chunks while the source plays: the task streams before it finishes.
  const early = await liveFrames(t, id, 2);
  assert.ok(early.length >= 2);
  const done = await waitStatus(t, id, ['succeeded', 'failed'], 90_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  // The task record shows the camera's real rate: frames processed over the time it ran.
  assert.equal(done.progress.processed_frames, 15);
  assert.ok(done.progress.processed_fps > 0 && done.progress.processed_fps <= 5.5, JSON.stringify(done.progress));
  const chunks = await frameChunks(id);
  const frames = chunks.filter((c) => c.finish_reason === null);
  assert.equal(frames.length, 15);
  assert.equal(chunks.at(-1).finish_reason, 'max_frames');
  for (const c of frames) {
    assert.equal(c.stream_info.total_frames, null);
    assert.equal(c.stream_info.live, true);
    assert.ok(
      Number.isInteger(c.stream_info.stream_time_ms) && Number.isInteger(c.stream_info.received_at_ms),
      JSON.stringify(c.stream_info),
    );
  }
  // Stream time moves forward at about the sampling step (0.2 s) or more (frames dropped while behind).
  const times = frames.map((c) => c.stream_info.stream_time_ms);
  for (let i = 1; i < times.length; i++) assert.ok(times[i] > times[i - 1], `stream time rises: ${times}`);
  const seen = assertTracksContinue(frames, 'person');
  const results = await api(t, `/v1/video/tasks/${id}/results`);
  // The results' track summaries agree with the chunks.
  for (const [id, n] of seen)
    assert.equal(results.body.tracks.find((tr: any) => tr.track_id === id)?.frames_seen, n, results.text);
});

test('RTSP: cancel ends a live task within one chunk window', { skip, timeout: 120_000 }, async () => {
  const id = await create(peopleTask(rtsp.url));
  const before = await liveFrames(t, id, 2);
  const r = await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
  const cancelled = Date.now();
  assert.ok([200, 202].includes(r.status), r.text);
  const done = await waitStatus(t, id, ['cancelled', 'failed', 'succeeded'], 30_000);
  assert.equal(done.status, 'cancelled');
  const chunks = await frameChunks(id);
  assert.equal(chunks.at(-1).finish_reason, 'cancelled');
  // At most the frame in progress when the cancel came is archived after it.
  const frames = chunksOf((await readStream(t, id)).bytes).filter((c) => c.finish_reason === null);
  // Within one chunk window: at most the frame already taken when the cancel was accepted is processed.
  const late = frames.filter((c) => c.stream_info.received_at_ms > cancelled);
  assert.ok(
    late.length <= 1,
    `${late.length} frames received after the cancel were processed (${before.length} before it)`,
  );
});

test('RTSP: analytics rules changed on the running task apply within two sampled frames; no frame is lost', {
  skip,
  timeout: 120_000,
}, async () => {
  const door = {
    units: 'relative',
    lines: [
      {
        id: 'door',
        points: [
          [0.5, 0],
          [0.5, 1],
        ],
      },
    ],
  };
  const json = peopleTask(rtsp.url, { max_frames: 16 });
  json.steps.push({ model: 'analytics', parameters: door } as never);
  const id = await create(json);
  await liveFrames(t, id, 4);
  const before = await api(t, `/v1/video/tasks/${id}`);
  const atPut = before.body.progress.frame_index as number;
  const put = await api(t, `/v1/video/tasks/${id}/analytics`, {
    method: 'PUT',
    json: {
      parameters: {
        units: 'relative',
        zones: [
          {
            id: 'left',
            polygon: [
              [0, 0],
              [0.5, 0],
              [0.5, 1],
              [0, 1],
            ],
          },
        ],
      },
    },
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.body.version, 2);
  const done = await waitStatus(t, id, ['succeeded', 'failed'], 90_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  const frames = (await frameChunks(id)).filter((c) => c.finish_reason === null);
  assert.equal(frames.length, 16, 'no frame lost to the change');
  const k = frames.findIndex((c) => c.stream_info.frame_index > atPut);
  const first2 = frames.findIndex((c) => c.analytics.totals.version === 2);
  // The PUT came after the chunk of frame atPut; one more chunk may have been in flight when it answered.
  assert.ok(k >= 0 && first2 >= 0 && first2 - k <= 2, `version 2 from chunk ${first2}; the PUT came before chunk ${k}`);
  assert.ok(frames.slice(0, first2).every((c) => c.analytics.totals.version === 1));
  const summary = (await api(t, `/v1/video/tasks/${id}/results`)).body.analytics;
  assert.equal(summary.lines.door.active, false, 'the removed line keeps its totals');
  assert.equal(summary.zones.left.active, true);
});

test('RTSP: the server is killed for 3 s and restarted; the task goes on with the gap counted', {
  skip,
  timeout: 120_000,
}, async () => {
  const id = await create(
    peopleTask(rtsp.url, {
      max_frames: 40,
      reconnect: { max_attempts: 20, max_seconds: 30 },
      stall_timeout_seconds: 2,
    }),
  );
  const before = await liveFrames(t, id, 3);
  await rtsp.kill();
  const killedAt = Date.now();
  await new Promise((r) => setTimeout(r, 3000)); // the outage itself is what is being tested
  await rtsp.restart();
  const restartedAt = Date.now();
  const done = await waitStatus(t, id, ['succeeded', 'failed'], 90_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  const frames = (await frameChunks(id)).filter((c) => c.finish_reason === null);
  assert.equal(frames.length, 40);
  const after = frames.filter((c) => c.stream_info.reconnects >= 1);
  assert.ok(after.length > 0, 'frames after the reconnect');
  const lastBefore = frames[frames.indexOf(after[0]) - 1];
  assert.ok(lastBefore.stream_info.received_at_ms <= restartedAt && after[0].stream_info.received_at_ms >= killedAt);
  // The gap shows in stream time and in the counts: about 3 s of 25 fps frames dropped.
  const gapMs = after[0].stream_info.stream_time_ms - lastBefore.stream_info.stream_time_ms;
  assert.ok(gapMs >= 2500, `stream time jumps over the gap: ${gapMs} ms`);
  assert.ok(
    after[0].stream_info.frame_index - lastBefore.stream_info.frame_index >= 60,
    'indices skip the frames lost in the gap',
  );
  assert.ok(
    after[0].stream_info.dropped_frames - lastBefore.stream_info.dropped_frames >= 60,
    'the lost frames count as dropped',
  );
  assert.ok(before.length >= 3);
});

test('RTSP: a stalled server ends the task with source_lost in bounded time; other tasks carry on', {
  skip,
  timeout: 120_000,
}, async () => {
  const id = await create(
    peopleTask(rtsp.url, { stall_timeout_seconds: 1, reconnect: { max_attempts: 2, max_seconds: 4 } }),
  );
  await liveFrames(t, id, 2);
  rtsp.stall();
  const stalledAt = Date.now();
  try {
    const done = await waitStatus(t, id, ['failed', 'succeeded', 'cancelled'], 60_000);
    assert.equal(done.status, 'failed');
    assert.equal(done.error.code, 'source_lost', JSON.stringify(done.error));
    // stall timeout + the reconnect budget + one more stall timeout, with room for a loaded machine.
    assert.ok(Date.now() - stalledAt < 20_000, `ended ${Date.now() - stalledAt} ms after the stall`);
    const last = (await frameChunks(id)).at(-1);
    assert.equal(last.finish_reason, 'error');
    assert.equal(last.error.code, 'source_lost');
  } finally {
    rtsp.resume();
  }
  // The worker is healthy: the same source serves a new task.
  const next = await create(peopleTask(rtsp.url, { max_frames: 3 }));
  const ok = await waitStatus(t, next, ['succeeded', 'failed'], 60_000);
  assert.equal(ok.status, 'succeeded', JSON.stringify(ok.error));
});

/** A TCP server on loopback that answers every connection with `answer` (or nothing at all). */
async function hostile(answer: ((s: Socket) => void) | null): Promise<{ url: string; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
    answer?.(s);
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as AddressInfo;
  return {
    url: `rtsp://127.0.0.1:${port}/live`,
    close: () =>
      new Promise((ok) => {
        for (const s of sockets) s.destroy();
        server.close(() => ok());
      }),
  };
}

test('hostile RTSP servers: one that never answers and one that sends garbage end with clear codes; a good task beside them is unaffected', {
  skip,
  timeout: 120_000,
}, async () => {
  const silent = await hostile(null);
  const garbage = await hostile((s) => {
    const junk = Buffer.alloc(64 * 1024);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 2654435761) >>> 24;
    s.on('data', () => {
      s.write('RTSP/1.0 200 OK\r\nCSeq: 1\r\nContent-Length: 5000\r\n\r\n');
      s.write(junk);
    });
  });
  try {
    const good = await create(peopleTask(rtsp.url, { max_frames: 10 }));
    const started = Date.now();
    const a = await create(peopleTask(silent.url, { stall_timeout_seconds: 1 }));
    const b = await create(peopleTask(garbage.url, { stall_timeout_seconds: 1 }));
    const ra = await waitStatus(t, a, ['failed', 'succeeded'], 60_000);
    const rb = await waitStatus(t, b, ['failed', 'succeeded'], 60_000);
    assert.equal(ra.status, 'failed');
    // Before the first chunk a failing source goes through provider failover, as a file does.
    assert.equal(ra.error.code, 'providers_failed', JSON.stringify(ra.error));
    assert.match(ra.error.message, /timeout/);
    assert.equal(rb.status, 'failed');
    assert.ok(['invalid_video', 'providers_failed'].includes(rb.error.code), JSON.stringify(rb.error));
    assert.ok(Date.now() - started < 30_000, 'both ended in bounded time');
    const g = await waitStatus(t, good, ['succeeded', 'failed'], 60_000);
    assert.equal(g.status, 'succeeded', JSON.stringify(g.error));
  } finally {
    await silent.close();
    await garbage.close();
  }
});
