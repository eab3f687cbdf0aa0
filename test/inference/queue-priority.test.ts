// The model queue's two lanes: an image request never waits behind a camera's backlog, a flood of image
// requests never stalls a camera (at least one batch in four is the camera's), and each lane has its own bound.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../src/base/errors.js';
import { ModelQueue, type RunPriority } from '../../src/inference/model-queue.js';
import { enableMetrics, renderMetrics } from '../../src/metrics/registry.js';
import { parseExposition, sampleSum } from '../helpers/metrics-text.js';

/** A queue whose runs take `ms` each and record the order in which inputs ran. */
function recordingQueue(depth: number, ms = 5) {
  const ran: string[] = [];
  const q = new ModelQueue<string, string>({ name: 'm', depth }, async (inputs) => {
    await new Promise((r) => setTimeout(r, ms));
    ran.push(...inputs);
    return inputs;
  });
  return { q, ran };
}

test('an interactive run goes before every waiting background run', async () => {
  const { q, ran } = recordingQueue(32);
  const camera = Array.from({ length: 10 }, (_, i) => q.submit(`cam${i}`, undefined, 'background'));
  const image = q.submit('image', undefined, 'interactive');
  await Promise.all([...camera, image]);
  // cam0 was already running when the image arrived; the image is next.
  assert.deepEqual(ran.slice(0, 2), ['cam0', 'image']);
  assert.equal(ran.length, 11);
});

test('while both lanes wait, the background lane gets at least one batch in four', async () => {
  const { q, ran } = recordingQueue(64, 2);
  const all: Promise<string>[] = [];
  for (let i = 0; i < 40; i++) all.push(q.submit(`img${i}`, undefined, 'interactive'));
  for (let i = 0; i < 10; i++) all.push(q.submit(`cam${i}`, undefined, 'background'));
  await Promise.all(all);
  const firstCams = ran.slice(0, 20).filter((x) => x.startsWith('cam')).length;
  assert.ok(firstCams >= 4, `cameras ran ${firstCams} of the first 20 runs: ${ran.slice(0, 20).join(',')}`);
  // Order within each lane is kept.
  const cams = ran.filter((x) => x.startsWith('cam'));
  assert.deepEqual(
    cams,
    Array.from({ length: 10 }, (_, i) => `cam${i}`),
  );
});

test('each lane has its own bound: a full camera lane does not refuse image requests', async () => {
  const { q } = recordingQueue(2, 20);
  const submit = (p: RunPriority, n: number) => Array.from({ length: n }, (_, i) => q.submit(`${p}${i}`, undefined, p));
  const bg = submit('background', 4); // one running, two waiting, one refused
  const fg = submit('interactive', 2); // both wait in their own lane
  const bgResults = await Promise.allSettled(bg);
  const refused = bgResults.filter((r) => r.status === 'rejected');
  assert.equal(refused.length, 1);
  assert.ok((refused[0] as PromiseRejectedResult).reason instanceof ApiError);
  assert.equal((await Promise.allSettled(fg)).filter((r) => r.status === 'fulfilled').length, 2);
});

test('checkRoom refuses as submit would, per lane, before anything is prepared', async () => {
  const { q } = recordingQueue(1, 20);
  const running = q.submit('img0'); // runs at once: the lane is empty again
  assert.doesNotThrow(() => q.checkRoom('interactive'));
  const waiting = q.submit('img1');
  assert.throws(
    () => q.checkRoom('interactive'),
    (e: unknown) => e instanceof ApiError && e.status === 503,
  );
  assert.doesNotThrow(() => q.checkRoom('background'));
  await Promise.all([running, waiting]);
  assert.doesNotThrow(() => q.checkRoom());
});

test('metrics count each lane: queue waits by lane, a refusal in the lane that refused, pending per lane', async () => {
  enableMetrics({ projectLabel: false });
  const ran: string[] = [];
  const q = new ModelQueue<string, string>({ name: 'lanes-metrics', depth: 1 }, async (inputs) => {
    await new Promise((r) => setTimeout(r, 20));
    ran.push(...inputs);
    return inputs;
  });
  const first = q.submit('cam0', undefined, 'background'); // runs at once
  const waiting = [q.submit('cam1', undefined, 'background'), q.submit('img0', undefined, 'interactive')];
  assert.equal(q.pendingIn('background'), 1);
  assert.equal(q.pendingIn('interactive'), 1);
  await assert.rejects(q.submit('cam2', undefined, 'background'), ApiError);
  await Promise.all([first, ...waiting]);
  const m = parseExposition((await renderMetrics(undefined)).body);
  const model = { model: 'lanes-metrics' };
  assert.equal(sampleSum(m, 'sightflow_model_rejected_total', { ...model, lane: 'background' }), 1);
  assert.equal(sampleSum(m, 'sightflow_model_rejected_total', { ...model, lane: 'interactive' }), 0);
  assert.equal(sampleSum(m, 'sightflow_model_queue_wait_seconds_count', { ...model, lane: 'background' }), 2);
  assert.equal(sampleSum(m, 'sightflow_model_queue_wait_seconds_count', { ...model, lane: 'interactive' }), 1);
  assert.deepEqual(ran, ['cam0', 'img0', 'cam1']);
});
