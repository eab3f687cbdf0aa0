// A live task handed on (docs/video.md, "When a worker dies"; the harness: test/helpers/video-resume.ts, on
// PostgreSQL only): a worker shut down cleanly hands its live task on without a resume; a camera down at the
// takeover is waited for within the reconnect policy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createTask, readStream, waitFor, waitStatus } from '../helpers/video-tasks.js';
import { assertContinued, kill, LEASE_MS, ResumeHarness, skip, WAIT_MS } from '../helpers/video-resume.js';

const h = new ResumeHarness();
before(() => h.start(true));
after(() => h.stop());

test('a worker shut down cleanly (SIGTERM, a drained node) hands its live task on at once, no resume counted', {
  skip,
  timeout: 300_000,
}, async () => {
  await h.killAll();
  const w1 = await h.startWorker();
  const id = await createTask(h.a, h.liveTask(30));
  await h.framesReach(id, 3);
  const w2 = await h.startWorker();
  const { seen } = await h.statusesDuring(id, async () => {
    const stopped = new Promise((resolve) => w1.once('exit', resolve));
    kill(w1, 'SIGTERM');
    await stopped;
    const handedAt = Date.now();
    const at = await h.processed(id);
    await h.framesReach(id, at + 2);
    // No lease to wait out: the next worker takes it as soon as it is told.
    assert.ok(Date.now() - handedAt < LEASE_MS + 30_000);
  });
  const done = await waitStatus(h.a, id, ['succeeded', 'failed', 'cancelled'], WAIT_MS);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.ok(
    [...seen].every((s) => ['running', 'streaming', 'succeeded'].includes(s)),
    `statuses seen: ${[...seen]}`,
  );
  assert.equal(done.resumes, 0);
  assert.equal(done.attempts, 2);
  assert.equal(assertContinued(id, (await readStream(h.a, id)).bytes, 1).length, 30);
  await kill(w2);
});

test('a camera that is down when its task is taken over gets the reconnect policy: the task goes on once it is back', {
  skip,
  timeout: 300_000,
}, async () => {
  await h.killAll();
  const w1 = await h.startWorker();
  const id = await createTask(h.a, h.liveTask(12));
  await h.framesReach(id, 3);
  await kill(w1);
  await h.rtsp.kill();
  const w2 = await h.startWorker();
  // Taken over (a second claim) while the camera is down: its first opens fail and are retried.
  await waitFor('another worker to take the task over', async () => (await h.record(id)).attempts === 2, WAIT_MS);
  await new Promise((r) => setTimeout(r, 1500));
  await h.rtsp.restart();
  const done = await waitStatus(h.a, id, ['succeeded', 'failed', 'cancelled'], WAIT_MS);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.resumes, 1);
  assert.equal(assertContinued(id, (await readStream(h.a, id)).bytes, 1).length, 12);
  await kill(w2);
});

// Fields that say when, not what: blanked before a continued file task's stream is compared with an
