// The pipeline behind the real task API: a server (test harness) whose in-process worker runs the default
// provider list (src/video/worker/provider-lists.ts -> LocalProvider). A base64 upload streams frame chunks, ends with
// max_frames then [DONE], and /results lists the tracks with their feature digests.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { textClip } from '../helpers/videos.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

async function waitFor(id: string, states: string[], ms = 120_000): Promise<any> {
  const end = Date.now() + ms;
  for (;;) {
    const r = await api(t, `/v1/video/tasks/${id}`);
    if (states.includes(r.body?.status)) return r.body;
    if (Date.now() > end) throw new Error(`task ${id} still ${r.body?.status}: ${r.text}`);
    await new Promise((res) => setTimeout(res, 200));
  }
}

test('video_base64 -> ocr + feature through the worker: chunks, max_frames, [DONE], results with digests', {
  timeout: 180_000,
}, async () => {
  const data = readFileSync(await textClip()).toString('base64');
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_base64', data, sampling: { mode: 'fps', value: 2 }, max_frames: 3 }],
      steps: [{ model: 'ocr' }, { model: 'feature' }],
      model: 'pipeline-test',
    },
  });
  assert.equal(created.status, 202, created.text);
  const task = await waitFor(created.body.id, ['succeeded', 'failed', 'cancelled']);
  assert.equal(task.status, 'succeeded', JSON.stringify(task.error));
  const stream = await api(t, created.body.stream_url);
  const events = stream.text
    .split('\n\n')
    .filter((e) => e.startsWith('data: '))
    .map((e) => e.slice(6));
  assert.equal(events.at(-1), '[DONE]');
  const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
  const frames = chunks.filter((c) => c.finish_reason === null);
  assert.deepEqual(
    frames.map((c) => c.stream_info.frame_index),
    [0, 3, 5],
  );
  assert.equal(chunks[0].model, 'pipeline-test');
  assert.equal(chunks.at(-1).finish_reason, 'max_frames');
  for (const c of frames) {
    const targets = c.delta.results[0].targets;
    assert.ok(
      targets.length >= 1 &&
        targets.every((x: any) => x.class === 'text' && x.track_id > 0 && /^dim=160;/.test(x.feature_digest)),
      JSON.stringify(targets),
    );
  }
  const results = await api(t, `/v1/video/tasks/${created.body.id}/results`);
  assert.equal(results.status, 200, results.text);
  assert.ok(results.body.tracks.length >= 1);
  for (const tr of results.body.tracks) {
    assert.equal(tr.class, 'text');
    assert.equal(tr.first_frame, 0);
    assert.equal(tr.last_frame, 5);
    assert.equal(tr.frames_seen, 3);
    assert.match(tr.feature_digest, /^dim=160;norm=(0|1)\.\d{4}$/);
  }
});

test('a corrupt upload fails the task with a clear error; the server carries on', { timeout: 120_000 }, async () => {
  const bad = Buffer.alloc(20_000, 7).toString('base64');
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    json: { input: [{ type: 'video_base64', data: bad }], steps: [{ model: 'feature' }] },
  });
  assert.equal(created.status, 202, created.text);
  const task = await waitFor(created.body.id, ['succeeded', 'failed', 'cancelled']);
  assert.equal(task.status, 'failed');
  assert.ok(task.error?.code && task.error.message, JSON.stringify(task.error));
  assert.equal((await api(t, '/v1/video/tasks?limit=1')).status, 200);
});
