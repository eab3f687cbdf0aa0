// A live task outlives its worker (docs/video.md, "When a worker dies"; the harness: test/helpers/video-resume.ts,
// on PostgreSQL only): a live RTSP task survives three SIGKILLs of its worker, each restarted: status never
// terminal in between, each gap marked, track ids never reused, line totals never going backwards, chunk ids
// contiguous and one terminal chunk and [DONE] at the end; a worker frozen (SIGSTOP) past its lease appends
// nothing once it wakes, and a task that moves on between deaths survives a fourth.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api } from '../helpers/app.js';
import { parseExposition, sampleSum, scrape } from '../helpers/metrics-text.js';
import { chunksOf, createTask, readStream, waitFor, waitStatus } from '../helpers/video-tasks.js';
import { assertContinued, kill, LEASE_MS, ResumeHarness, skip, WAIT_MS } from '../helpers/video-resume.js';

const h = new ResumeHarness();
before(() => h.start(true));
after(() => h.stop());

test('a live RTSP task survives three SIGKILLs of its worker: gaps marked, ids never reused, totals carried over', {
  skip,
  timeout: 420_000,
}, async (t) => {
  let w = await h.startWorker();
  const id = await createTask(h.a, h.liveTask(16));
  // A subscriber that stays connected through every takeover receives exactly the archive.
  const watching = readStream(h.a, id, { timeoutMs: 6 * WAIT_MS });
  const outage: number[] = [];
  // From its first chunk on (before it, pending is right).
  await h.framesReach(id, 1);
  const { seen } = await h.statusesDuring(id, async () => {
    for (const at of [3, 7, 11]) {
      await h.framesReach(id, at);
      await kill(w);
      const killedAt = Date.now();
      const left = await h.processed(id);
      w = await h.startWorker();
      await h.framesReach(id, left + 1);
      outage.push(Date.now() - killedAt);
    }
    await h.framesReach(id, 16);
  });
  // For docs/video.md: from the kill to the next archived chunk (the lease, the reaper, a cold worker's start).
  t.diagnostic(`kill -> next chunk (lease ${LEASE_MS} ms, worker restarted cold): ${outage.join(', ')} ms`);
  const done = await waitStatus(h.a, id, ['succeeded', 'failed', 'cancelled'], WAIT_MS);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.ok(
    [...seen].every((s) => ['running', 'streaming', 'succeeded'].includes(s)),
    `statuses seen: ${[...seen]}`,
  );
  assert.equal(done.resumes, 3);
  assert.equal(done.attempts, 4);
  // This process's reaper queued each takeover.
  const samples = parseExposition((await scrape(h.a.app.metricsPort!)).text);
  assert.equal(sampleSum(samples, 'sightflow_video_task_resumes_total', { stage: 'queued' }), 3);
  const bytes = (await watching).bytes;
  assert.ok(bytes.equals((await readStream(h.a, id)).bytes), 'the connected subscriber got exactly the archive');
  const frames = assertContinued(id, bytes, 3);
  assert.equal(frames.length, 16);
  const end = chunksOf(bytes).at(-1);
  assert.equal(end.finish_reason, 'max_frames');
  // Usage bills every frame once (one ledger row, by the worker that ended it), and the results cover every
  // worker's frames.
  assert.equal(done.usage.processed_frames, 16);
  const billed = (await h.a.app.services.usage.events(h.a.projectId)).filter((e) => e.endpoint === '/v1/video/process');
  assert.deepEqual(
    billed.map((e) => e.frames),
    [16],
  );
  const results = (await api(h.a, `/v1/video/tasks/${id}/results`)).body;
  const targets = frames.reduce((n, c) => n + c.delta.results[0].targets.length, 0);
  assert.equal(
    results.tracks.reduce((n: number, t: any) => n + t.frames_seen, 0),
    targets,
  );
  // The analytics summary carries the whole task: its line totals are the last chunk's or more.
  const lastTotals = frames.at(-1).analytics.totals.lines.middle;
  assert.ok(
    end.analytics.totals.lines.middle.in >= lastTotals.in && end.analytics.totals.lines.middle.out >= lastTotals.out,
  );
});

test('a worker frozen past its lease appends nothing after it wakes; a task that moves on survives a fourth death', {
  skip,
  timeout: 420_000,
}, async () => {
  let w = [...h.workers][0] ?? (await h.startWorker());
  const id = await createTask(h.a, h.liveTask(100_000));
  await h.framesReach(id, 2);
  // Frozen: its lease runs out and another worker continues the task.
  kill(w, 'SIGSTOP');
  const frozen = w;
  w = await h.startWorker();
  await waitFor('another worker to continue the task', async () => (await h.record(id)).resumes === 1, WAIT_MS);
  const before = await h.processed(id);
  await h.framesReach(id, before + 2);
  kill(frozen, 'SIGCONT');
  // Woken: its next append and heartbeat find the task taken, so it appends nothing; the task goes on.
  const woke = await h.processed(id);
  await h.framesReach(id, woke + 3);
  await kill(frozen);
  // The resume limit counts takeovers in a row that archived nothing: each of these archives a frame first.
  for (let n = 2; n <= 4; n++) {
    await kill(w);
    w = await h.startWorker();
    await waitFor(`takeover ${n}`, async () => (await h.record(id)).resumes === n, WAIT_MS);
    const at = await h.processed(id);
    await h.framesReach(id, at + 1);
  }
  assert.equal((await api(h.a, `/v1/video/tasks/${id}/cancel`, { method: 'POST' })).status, 202);
  const ended = await waitStatus(h.a, id, ['failed', 'succeeded', 'cancelled'], WAIT_MS);
  assert.equal(ended.status, 'cancelled');
  assert.equal(ended.resumes, 4);
  const bytes = (await readStream(h.a, id)).bytes;
  assert.equal(chunksOf(bytes).at(-1).finish_reason, 'cancelled');
  // Had the woken worker appended, its chunk would repeat a frame index or break the ids: none did.
  assertContinued(id, bytes, 4);
});
