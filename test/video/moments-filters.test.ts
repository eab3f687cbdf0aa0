// Track and segment items of the index step under the collection's filters (docs/moments.md): the real
// index step (planned through the step registry, writing through the server's collections port) is fed
// chunks as the frame pipeline hands them on, with
// targets of two tracks and the `analytics` events an analytics step adds (a zone entered, a line crossed).
// Filters on kind, class, zone:<rule> and line:<rule> then select exactly the matching items.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { checkSteps } from '../../src/video/steps/plan.js';
import type { StepRun } from '../../src/video/pipeline/frame-step.js';
import { trackerSettings, TrackIds } from '../../src/video/pipeline/target-tracker.js';
import type { FrameOutput, VideoTaskRequest } from '../../src/video/task-contract.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

function frame(rgb: [number, number, number]) {
  const data = new Uint8Array(320 * 240 * 3);
  for (let i = 0; i < data.length; i += 3) {
    data[i] = rgb[0];
    data[i + 1] = rgb[1];
    data[i + 2] = rgb[2];
  }
  return { width: 320, height: 240, data };
}

test('track and segment items carry class, colour, lines and zones, and filters select them', {
  timeout: 120_000,
}, async () => {
  const col = (await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'filters' } })).body.id;
  // A real task row (its worker fails it on the unreachable URL; the items only need its id).
  const task = await api(t, '/v1/video/process', {
    method: 'POST',
    json: { input: [{ type: 'video_url', url: 'http://127.0.0.1:9/x.mp4' }], steps: [{ model: 'detect' }] },
  });
  assert.equal(task.status, 202, task.text);
  const request: VideoTaskRequest = {
    input: [{ type: 'video_url', url: 'rtsp://gate.example/cam' }],
    steps: [
      { model: 'detect' },
      { model: 'index', parameters: { collection: col, per: ['segment', 'track'], segment_ms: 2000 } },
    ],
  };
  const s = t.app.services;
  // The step services the video part hands its steps: the vectors part's collections among them.
  const stepTask = {
    id: task.body.id,
    projectId: t.projectId,
    request,
    services: { db: s.db, log: s.log, collections: t.app.collections },
  };
  const plan = await checkSteps(request, s.taskModels, stepTask);
  const run = plan
    .find((p) => p.kind === 'index')!
    .open({
      models: s.taskModels,
      priority: 'background',
      tracking: trackerSettings(undefined),
      ids: new TrackIds(),
      task: stepTask,
    }) as StepRun;
  for (let i = 0; i < 8; i++) {
    const f = frame(i < 4 ? [200, 20, 20] : [20, 20, 200]);
    const targets = [
      { track_id: 1, class: 'car', confidence: 0.9 - i / 100, roi: { left: 20, top: 20, width: 100, height: 80 } },
      ...(i >= 2
        ? [{ track_id: 2, class: 'person', confidence: 0.8, roi: { left: 200, top: 40, width: 40, height: 120 } }]
        : []),
    ];
    const events = [
      ...(i === 1 ? [{ type: 'zone.entered', rule: 'gate', track_id: 1 }] : []),
      ...(i === 5 ? [{ type: 'line.crossed', rule: 'door', track_id: 2, direction: 'in' }] : []),
      ...(i === 6 ? [{ type: 'mystery', rule: 7 }, null] : []),
    ];
    const out = {
      stream_info: {
        frame_index: i,
        total_frames: 8,
        decoded_frames: i + 1,
        dropped_frames: 0,
        fps: 2,
        elapsed_ms: 0,
        stream_time_ms: i * 500,
      },
      delta: { results: [{ index: 0, targets }] },
      analytics: { events, totals: {} },
    } as FrameOutput;
    await run.chunk!(out, { index: i, width: f.width, height: f.height, image: { ...f, channels: 3 } });
  }
  await run.finish!();
  const id = task.body.id;
  assert.deepEqual((await api(t, `/v1/video/tasks/${id}`)).body.index, {
    collection: col,
    items_added: 4,
    segments: 2,
    tracks: 2,
  });

  const find = async (filter: object) => {
    const r = await api(t, `/v1/vectors/collections/${col}/search`, {
      method: 'POST',
      json: { text: 'car', filter, top_k: 100 },
    });
    assert.equal(r.status, 200, r.text);
    return r.body.results.map((x: any) => x.id).sort();
  };
  assert.deepEqual(await find({ kind: 'track', class: 'car' }), [`${id}.t1`]);
  assert.deepEqual(await find({ kind: 'track', 'zone:gate': true }), [`${id}.t1`]);
  assert.deepEqual(await find({ kind: 'track', 'line:door': true }), [`${id}.t2`]);
  // Two segments (0-2 s red, 2-4 s blue): the first holds the zone event, the second the line crossing.
  assert.deepEqual(await find({ kind: 'segment', 'zone:gate': true }), [`${id}.s0`]);
  assert.deepEqual(await find({ kind: 'segment', 'line:door': true }), [`${id}.s4`]);
  const car = (await api(t, `/v1/vectors/collections/${col}/items/${id}.t1`)).body;
  assert.equal(car.metadata.colour, 'red');
  assert.deepEqual(
    [car.metadata.zones, car.metadata.video, car.metadata.start_ms, car.metadata.end_ms],
    [['gate'], 'rtsp://gate.example/cam', 0, 4000],
  );
  const person = (await api(t, `/v1/vectors/collections/${col}/items/${id}.t2`)).body;
  assert.deepEqual(
    [person.metadata.lines, person.metadata.class, person.metadata.start_ms],
    [['door'], 'person', 1000],
  );
  assert.ok(car.content_url, "the best crop is the item's content");
});
