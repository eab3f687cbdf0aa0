// Live sources over HTTP through the real task API: a live HLS playlist that FFmpeg keeps writing (-re, a
// window of 4 one-second segments, old ones deleted) served from a folder, and an endless MPEG-TS response,
// both looping a clip of people walking (TUD-Campus). Chunks arrive while the source plays, total_frames is
// null, people keep their track ids, max_frames and cancel end the task.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { TUD_CAMPUS } from '../helpers/eval-data.js';
import { evalDataSkip } from '../../eval/dir.js';
import { liveClip, startLiveHls, startTsStream, type HttpLiveSource } from '../helpers/live-sources.js';
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
let hls: HttpLiveSource;
let ts: HttpLiveSource;
before(async () => {
  if (skip) return;
  t = await startTestApp({ SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true' });
  const clip = await liveClip(TUD_CAMPUS());
  [hls, ts] = await Promise.all([startLiveHls(clip), startTsStream(clip)]);
});
after(async () => {
  await hls?.close();
  await ts?.close();
  await t?.close();
});

const create = (json: unknown) => createTask(t, json);

for (const [name, source] of [
  ['live HLS playlist', () => hls],
  ['endless MPEG-TS over HTTP', () => ts],
] as const) {
  test(`${name}: chunks while it plays, total_frames null, tracks stable, max_frames ends it`, {
    skip,
    timeout: 120_000,
  }, async () => {
    const id = await create(peopleTask(source().url, { max_frames: 15 }));
    assert.ok((await liveFrames(t, id, 2)).length >= 2);
    const done = await waitStatus(t, id, ['succeeded', 'failed'], 90_000);
    assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
    const chunks = chunksOf((await readStream(t, id)).bytes);
    const frames = chunks.filter((c) => c.finish_reason === null);
    assert.equal(frames.length, 15);
    assert.equal(chunks.at(-1).finish_reason, 'max_frames');
    for (const c of frames) {
      assert.equal(c.stream_info.total_frames, null);
      assert.equal(c.stream_info.live, true);
    }
    assertTracksContinue(frames);
  });

  test(`${name}: cancel ends it within one chunk window`, { skip, timeout: 120_000 }, async () => {
    const id = await create(peopleTask(source().url));
    const before = await liveFrames(t, id, 2);
    const r = await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
    const cancelled = Date.now();
    assert.ok([200, 202].includes(r.status), r.text);
    const done = await waitStatus(t, id, ['cancelled', 'failed', 'succeeded'], 30_000);
    assert.equal(done.status, 'cancelled');
    const frames = chunksOf((await readStream(t, id)).bytes).filter((c) => c.finish_reason === null);
    // Within one chunk window: at most the frame already taken when the cancel was accepted is processed.
    const late = frames.filter((c) => c.stream_info.received_at_ms > cancelled);
    assert.ok(
      late.length <= 1,
      `${late.length} frames received after the cancel were processed (${before.length} before it)`,
    );
  });
}
