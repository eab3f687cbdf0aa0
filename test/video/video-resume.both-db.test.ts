// A task outlives its worker (docs/video.md, "When a worker dies"), on one real PostgreSQL
// (SIGHTFLOW_TEST_DB=postgres only; skipped on PGlite, which one process owns): an API node in this process
// (its reaper looks often) and separate worker processes (./live-worker.ts: `sightflow worker` with the real
// LocalProvider and models) on a real RTSP camera (test/helpers/rtsp_server.py looping TUD-Campus). A live
// task survives three SIGKILLs of its worker, each restarted: status never terminal in between, each gap
// marked, track ids never reused, line totals never going backwards, chunk ids contiguous and one terminal
// chunk and [DONE] at the end; a worker frozen (SIGSTOP) past its lease appends nothing once it wakes, and a
// task that moves on between deaths survives a fourth; a worker shut down cleanly hands its live task on without a resume; a camera
// down at the takeover is waited for within the reconnect policy. A staged file task killed twice gives the
// stream, results and usage of an undisturbed run, and so does one read from a URL whose server sends ETag and
// Last-Modified; a URL whose file changed (or whose validators went away) by the takeover fails source_changed,
// and one whose server never sent validators still fails worker_lost as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, backend, freshDatabaseUrl, type TestApp } from '../helpers/app.js';
import { evalDataSkip } from '../../eval/dir.js';
import { TUD_CAMPUS } from '../helpers/eval-data.js';
import { liveClip, startRtspServer, synthetic720p, type RtspSource } from '../helpers/live-sources.js';
import { serveFile } from '../helpers/media-server.js';
import { parseExposition, sampleSum, scrape } from '../helpers/metrics-text.js';
import {
  chunksOf,
  createTask,
  parseEvents,
  readStream,
  startVideoApp,
  waitFor,
  waitStatus,
} from '../helpers/video-tasks.js';
import { spawnWorker } from '../helpers/worker-process.js';
import { sql as cpSql } from '../helpers/task-checkpoint.sql.js';

const skip =
  backend !== 'postgres'
    ? 'PostgreSQL only (SIGHTFLOW_TEST_DB=postgres)'
    : evalDataSkip('tracking/TUD-Campus/TUD-Campus.mp4');
// Long enough that loading the models on two busy cores never outlasts a lease; short enough for a test.
const LEASE_MS = 5000;
const WORKER = fileURLToPath(new URL('./live-worker.ts', import.meta.url));
/** Waits on the loaded 2-core machine: generous, always bounded. */
const WAIT_MS = 90_000;
const CHECKPOINT_CHUNKS = 5;

let a: TestApp;
let rtsp: RtspSource;
let dataDir: string;
let databaseUrl: string;
const workers = new Set<ChildProcess>();

function startWorker(): Promise<ChildProcess> {
  return spawnWorker(WORKER, {
    databaseUrl,
    dataDir,
    env: {
      SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
      SIGHTFLOW_NO_WORKER: 'false',
      SIGHTFLOW_VIDEO_LEASE_MS: String(LEASE_MS),
      SIGHTFLOW_VIDEO_HEARTBEAT_MS: '250',
      SIGHTFLOW_VIDEO_POLL_MS: '200',
      SIGHTFLOW_WORKER_CONCURRENCY: '1',
      // A file's checkpoint with every 5th chunk only (never sooner by time), so a kill can be placed where
      // the next worker must process the frames after it again.
      SIGHTFLOW_VIDEO_CHECKPOINT_CHUNKS: String(CHECKPOINT_CHUNKS),
      SIGHTFLOW_VIDEO_CHECKPOINT_MS: '3600000',
    },
    spawned: (child) => {
      workers.add(child);
      child.on('close', () => workers.delete(child));
    },
  });
}

function kill(w: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (signal !== 'SIGKILL') {
    w.kill(signal);
    return Promise.resolve();
  }
  if (w.exitCode !== null || w.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    w.once('exit', () => resolve());
    w.kill('SIGKILL');
  });
}

const record = async (id: string) => (await api(a, `/v1/video/tasks/${id}`)).body;
const processed = async (id: string) => Number((await record(id)).progress.processed_frames);

/** Waits until the task archived `n` frames (a chunk more than it had, at least). */
const framesReach = (id: string, n: number) =>
  waitFor(`task ${id} to reach ${n} frames`, async () => (await processed(id)) >= n, WAIT_MS);

/** Every status the task record shows while `run` runs (polled), for "never terminal in between". */
async function statusesDuring<T>(id: string, run: () => Promise<T>): Promise<{ result: T; seen: Set<string> }> {
  const seen = new Set<string>();
  let on = true;
  const poll = (async () => {
    while (on) {
      seen.add(String((await record(id)).status));
      await new Promise((r) => setTimeout(r, 150));
    }
  })();
  try {
    return { result: await run(), seen };
  } finally {
    on = false;
    await poll;
  }
}

// People walk across TUD-Campus (640x480) from side to side: a line down the middle is crossed.
const MIDDLE = {
  id: 'middle',
  points: [
    [320, 0],
    [320, 480],
  ],
};
const liveTask = (maxFrames: number) => ({
  input: [{ type: 'video_url', url: rtsp.url, sampling: { mode: 'fps', value: 2 }, max_frames: maxFrames }],
  steps: [
    { model: 'detect', parameters: { classes: ['person'] } },
    {
      model: 'analytics',
      parameters: {
        lines: [MIDDLE],
      },
    },
  ],
});

/** The archive's frame chunks split where a worker took over (the chunk that carries gap_ms starts a part). */
function parts(frames: any[]): any[][] {
  const out: any[][] = [[]];
  for (const c of frames) {
    if (c.stream_info.gap_ms !== undefined) out.push([]);
    out.at(-1)!.push(c);
  }
  return out;
}

/** The checks every continued task's archive passes, whatever its end. */
function assertContinued(id: string, bytes: Buffer, gaps: number): any[] {
  const chunks = chunksOf(bytes);
  assert.deepEqual(
    chunks.map((c) => c.id),
    chunks.map((_, i) => `${id}.${i}`),
    'chunk ids 0..N-1, each once',
  );
  assert.equal(chunks.filter((c) => c.finish_reason !== null).length, 1, 'one terminal chunk');
  assert.notEqual(chunks.at(-1).finish_reason, null, 'the terminal chunk is the last');
  assert.equal(parseEvents(bytes).at(-1)!.kind, 'done');
  const frames = chunks.slice(0, -1);
  const split = parts(frames);
  assert.equal(
    split.length,
    gaps + 1,
    `${gaps} gaps marked: ${JSON.stringify(frames.map((c) => c.stream_info.gap_ms ?? null))}`,
  );
  for (const c of frames.filter((f) => f.stream_info.gap_ms !== undefined)) assert.ok(c.stream_info.gap_ms >= 0);
  for (let i = 1; i < frames.length; i++) {
    assert.ok(
      frames[i].stream_info.frame_index > frames[i - 1].stream_info.frame_index,
      'frame indices continue after the stored one',
    );
    assert.ok(frames[i].stream_info.stream_time_ms > frames[i - 1].stream_info.stream_time_ms, 'stream time goes on');
  }
  // Track ids: each worker's ids start above every id before it.
  let highest = 0;
  for (const part of split) {
    const ids = part.flatMap((c) => c.delta.results[0].targets.map((t: any) => t.track_id as number));
    if (ids.length > 0)
      assert.ok(Math.min(...ids) > highest, `ids ${[...new Set(ids)]} after ${highest}: no id reused`);
    highest = Math.max(highest, ...ids);
  }
  // Line totals never go backwards.
  let last = { in: 0, out: 0 };
  for (const c of frames) {
    const now = c.analytics.totals.lines.middle;
    assert.ok(now.in >= last.in && now.out >= last.out, `totals ${JSON.stringify(now)} after ${JSON.stringify(last)}`);
    last = now;
  }
  return frames;
}

before(async () => {
  if (skip) return;
  dataDir = mkdtempSync(join(tmpdir(), 'sightflow-video-resume-'));
  databaseUrl = (await freshDatabaseUrl())!;
  // Its reaper looks often, so a dead worker's task moves on soon after its lease.
  a = await startVideoApp(
    { SIGHTFLOW_VIDEO_REAPER_MS: '250', SIGHTFLOW_VIDEO_LEASE_MS: String(LEASE_MS), SIGHTFLOW_METRICS_PORT: '0' },
    { dataDir, databaseUrl },
  );
  rtsp = await startRtspServer(await liveClip(TUD_CAMPUS()));
});

after(async () => {
  for (const w of workers) await kill(w);
  await rtsp?.close();
  await a?.close();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

test('a live RTSP task survives three SIGKILLs of its worker: gaps marked, ids never reused, totals carried over', {
  skip,
  timeout: 420_000,
}, async (t) => {
  let w = await startWorker();
  const id = await createTask(a, liveTask(16));
  // A subscriber that stays connected through every takeover receives exactly the archive.
  const watching = readStream(a, id, { timeoutMs: 6 * WAIT_MS });
  const outage: number[] = [];
  // From its first chunk on (before it, pending is right).
  await framesReach(id, 1);
  const { seen } = await statusesDuring(id, async () => {
    for (const at of [3, 7, 11]) {
      await framesReach(id, at);
      await kill(w);
      const killedAt = Date.now();
      const left = await processed(id);
      w = await startWorker();
      await framesReach(id, left + 1);
      outage.push(Date.now() - killedAt);
    }
    await framesReach(id, 16);
  });
  // For docs/video.md: from the kill to the next archived chunk (the lease, the reaper, a cold worker's start).
  t.diagnostic(`kill -> next chunk (lease ${LEASE_MS} ms, worker restarted cold): ${outage.join(', ')} ms`);
  const done = await waitStatus(a, id, ['succeeded', 'failed', 'cancelled'], WAIT_MS);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.ok(
    [...seen].every((s) => ['running', 'streaming', 'succeeded'].includes(s)),
    `statuses seen: ${[...seen]}`,
  );
  assert.equal(done.resumes, 3);
  assert.equal(done.attempts, 4);
  // This process's reaper queued each takeover.
  const samples = parseExposition((await scrape(a.app.metricsPort!)).text);
  assert.equal(sampleSum(samples, 'sightflow_video_task_resumes_total', { stage: 'queued' }), 3);
  const bytes = (await watching).bytes;
  assert.ok(bytes.equals((await readStream(a, id)).bytes), 'the connected subscriber got exactly the archive');
  const frames = assertContinued(id, bytes, 3);
  assert.equal(frames.length, 16);
  const end = chunksOf(bytes).at(-1);
  assert.equal(end.finish_reason, 'max_frames');
  // Usage bills every frame once (one ledger row, by the worker that ended it), and the results cover every
  // worker's frames.
  assert.equal(done.usage.processed_frames, 16);
  const billed = (await a.app.services.usage.events(a.projectId)).filter((e) => e.endpoint === '/v1/video/process');
  assert.deepEqual(
    billed.map((e) => e.frames),
    [16],
  );
  const results = (await api(a, `/v1/video/tasks/${id}/results`)).body;
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
  let w = [...workers][0] ?? (await startWorker());
  const id = await createTask(a, liveTask(100_000));
  await framesReach(id, 2);
  // Frozen: its lease runs out and another worker continues the task.
  kill(w, 'SIGSTOP');
  const frozen = w;
  w = await startWorker();
  await waitFor('another worker to continue the task', async () => (await record(id)).resumes === 1, WAIT_MS);
  const before = await processed(id);
  await framesReach(id, before + 2);
  kill(frozen, 'SIGCONT');
  // Woken: its next append and heartbeat find the task taken, so it appends nothing; the task goes on.
  const woke = await processed(id);
  await framesReach(id, woke + 3);
  await kill(frozen);
  // The resume limit counts takeovers in a row that archived nothing: each of these archives a frame first.
  for (let n = 2; n <= 4; n++) {
    await kill(w);
    w = await startWorker();
    await waitFor(`takeover ${n}`, async () => (await record(id)).resumes === n, WAIT_MS);
    const at = await processed(id);
    await framesReach(id, at + 1);
  }
  assert.equal((await api(a, `/v1/video/tasks/${id}/cancel`, { method: 'POST' })).status, 202);
  const ended = await waitStatus(a, id, ['failed', 'succeeded', 'cancelled'], WAIT_MS);
  assert.equal(ended.status, 'cancelled');
  assert.equal(ended.resumes, 4);
  const bytes = (await readStream(a, id)).bytes;
  assert.equal(chunksOf(bytes).at(-1).finish_reason, 'cancelled');
  // Had the woken worker appended, its chunk would repeat a frame index or break the ids: none did.
  assertContinued(id, bytes, 4);
});

test('a worker shut down cleanly (SIGTERM, a drained node) hands its live task on at once, no resume counted', {
  skip,
  timeout: 300_000,
}, async () => {
  for (const w of workers) await kill(w);
  const w1 = await startWorker();
  const id = await createTask(a, liveTask(30));
  await framesReach(id, 3);
  const w2 = await startWorker();
  const { seen } = await statusesDuring(id, async () => {
    const stopped = new Promise((resolve) => w1.once('exit', resolve));
    kill(w1, 'SIGTERM');
    await stopped;
    const handedAt = Date.now();
    const at = await processed(id);
    await framesReach(id, at + 2);
    // No lease to wait out: the next worker takes it as soon as it is told.
    assert.ok(Date.now() - handedAt < LEASE_MS + 30_000);
  });
  const done = await waitStatus(a, id, ['succeeded', 'failed', 'cancelled'], WAIT_MS);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.ok(
    [...seen].every((s) => ['running', 'streaming', 'succeeded'].includes(s)),
    `statuses seen: ${[...seen]}`,
  );
  assert.equal(done.resumes, 0);
  assert.equal(done.attempts, 2);
  assert.equal(assertContinued(id, (await readStream(a, id)).bytes, 1).length, 30);
  await kill(w2);
});

test('a camera that is down when its task is taken over gets the reconnect policy: the task goes on once it is back', {
  skip,
  timeout: 300_000,
}, async () => {
  for (const w of workers) await kill(w);
  const w1 = await startWorker();
  const id = await createTask(a, liveTask(12));
  await framesReach(id, 3);
  await kill(w1);
  await rtsp.kill();
  const w2 = await startWorker();
  // Taken over (a second claim) while the camera is down: its first opens fail and are retried.
  await waitFor('another worker to take the task over', async () => (await record(id)).attempts === 2, WAIT_MS);
  await new Promise((r) => setTimeout(r, 1500));
  await rtsp.restart();
  const done = await waitStatus(a, id, ['succeeded', 'failed', 'cancelled'], WAIT_MS);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.resumes, 1);
  assert.equal(assertContinued(id, (await readStream(a, id)).bytes, 1).length, 12);
  await kill(w2);
});

// Fields that say when, not what: blanked before a continued file task's stream is compared with an
// undisturbed run's.
const WALL_CLOCK = ['elapsed_ms', 'received_at_ms'] as const;
function blankWallClock(chunk: any, taskId: string): any {
  const c = JSON.parse(JSON.stringify(chunk).replaceAll(taskId, 'task'));
  delete c.created;
  for (const k of WALL_CLOCK) if (c.stream_info) delete c.stream_info[k];
  if (c.usage) delete c.usage.processing_time_ms;
  return c;
}

// TUD-Campus uploaded (a staged file) or by URL: detect, a line down the middle and a zone on the left half.
const fileTask = (data: string) => tudTask({ type: 'video_base64', data });
const urlTask = (url: string) => tudTask({ type: 'video_url', url });
const tudTask = (input: { type: string; data?: string; url?: string }) => ({
  input: [{ ...input, sampling: { mode: 'fps', value: 25 } }],
  steps: [
    { model: 'detect', parameters: { classes: ['person'] } },
    {
      model: 'analytics',
      parameters: {
        lines: [MIDDLE],
        zones: [
          {
            id: 'left',
            polygon: [
              [0, 0],
              [320, 0],
              [320, 480],
              [0, 480],
            ],
          },
        ],
      },
    },
  ],
});

/** A continued file task's stream, results, usage and analytics are those of the undisturbed run `whole`. */
async function assertSameAsUndisturbed(id: string, bytes: Buffer, done: any, whole: string, undisturbed: any) {
  const chunks = chunksOf(bytes);
  assert.deepEqual(
    chunks.map((c) => c.id),
    chunks.map((_, i) => `${id}.${i}`),
    'chunk ids 0..N-1, each once',
  );
  const expected = chunksOf((await readStream(a, whole)).bytes);
  assert.equal(chunks.length, expected.length);
  for (let i = 0; i < chunks.length; i++)
    assert.deepEqual(blankWallClock(chunks[i], id), blankWallClock(expected[i], whole), `chunk ${i}`);
  assert.deepEqual(done.usage.processed_frames, undisturbed.usage.processed_frames);
  const results = async (t: string) => {
    const r = (await api(a, `/v1/video/tasks/${t}/results`)).body;
    return blankWallClock({ ...r, usage: { ...r.usage, processing_time_ms: 0 } }, t);
  };
  assert.deepEqual(await results(id), await results(whole));
  const analytics = async (t: string) => (await api(a, `/v1/video/tasks/${t}/analytics`)).body.totals;
  assert.deepEqual(await analytics(id), await analytics(whole));
}

/**
 * Runs `body` undisturbed, then again with its worker SIGKILLed once the task reached each of `killAt` frames
 * (restarted each time), and checks the disturbed run against the undisturbed one. Returns the live worker.
 */
/** Where a task's archive and its stored checkpoint stand: chunks archived after the checkpoint's chunk. */
async function behindCheckpoint(id: string): Promise<{ chunks: number; behind: number }> {
  const [r] = await a.app.services.db.query<{ chunk_count: number; behind: number }>(cpSql.behindCheckpoint, [id]);
  return { chunks: Number(r!.chunk_count), behind: Number(r!.behind) };
}

/**
 * SIGKILLs `w` once its task's last archived chunk stores no checkpoint of its own (the stored one is of an
 * earlier chunk), so the next worker processes frames again: the worker is frozen to read where the task
 * stands, and let go on for another chunk while the checkpoint is the last chunk's. Returns the frames behind.
 */
async function killBehindCheckpoint(id: string, w: ChildProcess): Promise<number> {
  for (;;) {
    w.kill('SIGSTOP');
    // An append sent before the freeze commits meanwhile.
    await new Promise((r) => setTimeout(r, 200));
    const at = await behindCheckpoint(id);
    if (at.behind > 0) {
      await kill(w);
      return at.behind;
    }
    w.kill('SIGCONT');
    await framesReach(id, at.chunks + 1);
  }
}

async function killedEqualsUndisturbed(body: unknown, killAt: number[], w: ChildProcess): Promise<ChildProcess> {
  const whole = await createTask(a, body);
  const undisturbed = await waitStatus(a, whole, ['succeeded', 'failed'], WAIT_MS);
  assert.equal(undisturbed.status, 'succeeded', JSON.stringify(undisturbed.error));

  const id = await createTask(a, body);
  const watching = readStream(a, id, { timeoutMs: 6 * WAIT_MS });
  for (const at of killAt) {
    await framesReach(id, at);
    const behind = await killBehindCheckpoint(id, w);
    // The checkpoint is at most the cadence behind: the next worker processes those frames again.
    assert.ok(behind > 0 && behind < CHECKPOINT_CHUNKS, `${behind} chunks behind the checkpoint`);
    const left = await processed(id);
    w = await startWorker();
    await framesReach(id, left + 1);
  }
  const done = await waitStatus(a, id, ['succeeded', 'failed', 'cancelled'], WAIT_MS);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.resumes, killAt.length);
  const bytes = (await watching).bytes;
  assert.ok(bytes.equals((await readStream(a, id)).bytes), 'the connected subscriber got exactly the archive');
  await assertSameAsUndisturbed(id, bytes, done, whole, undisturbed);
  return w;
}

test('a file task continues after two SIGKILLs of its worker: the stream, results and usage of an undisturbed run', {
  skip,
  timeout: 420_000,
}, async () => {
  for (const w of workers) await kill(w);
  const data = readFileSync(TUD_CAMPUS()).toString('base64');
  await kill(await killedEqualsUndisturbed(fileTask(data), [15, 40], await startWorker()));
});

test('a file task read from a URL with ETag and Last-Modified continues after a SIGKILL: the undisturbed run', {
  skip,
  timeout: 300_000,
}, async () => {
  const file = await serveFile(TUD_CAMPUS(), 'video/mp4');
  try {
    for (const w of workers) await kill(w);
    await kill(await killedEqualsUndisturbed(urlTask(`${file.url}/campus.mp4`), [20], await startWorker()));
  } finally {
    await file.close();
  }
});

test('a URL whose file changes, or whose server stops sending validators, before the takeover fails source_changed', {
  skip,
  timeout: 300_000,
}, async () => {
  const original = readFileSync(TUD_CAMPUS());
  // The same length, other bytes: only the validators tell them apart.
  const changed = Buffer.from(original).fill(0, original.length >> 1, (original.length >> 1) + 64);
  for (const change of ['changed', 'no validators'] as const) {
    const file = await serveFile(TUD_CAMPUS(), 'video/mp4');
    try {
      for (const w of workers) await kill(w);
      const w = await startWorker();
      const id = await createTask(a, urlTask(`${file.url}/campus.mp4`));
      await framesReach(id, 3);
      await kill(w);
      const left = await processed(id);
      if (change === 'changed') file.replace(changed);
      else file.validators(false);
      const w2 = await startWorker();
      const rec = await waitStatus(a, id, ['failed', 'succeeded'], WAIT_MS);
      assert.equal(rec.status, 'failed', change);
      assert.equal(rec.error.code, 'source_changed', `${change}: ${JSON.stringify(rec.error)}`);
      assert.match(rec.error.message, change === 'changed' ? /changed since the checkpoint/ : /no longer says/);
      assert.equal(rec.resumes, 1);
      const chunks = chunksOf((await readStream(a, id)).bytes);
      assert.equal(chunks.at(-1).finish_reason, 'error');
      // Nothing of the other bytes was archived: the frames are those before the kill.
      assert.equal(chunks.length - 1, left);
      await kill(w2);
    } finally {
      await file.close();
    }
  }
});

test('a file task read from a URL without ETag or Last-Modified writes no checkpoint: its worker dying still fails it worker_lost', {
  skip,
  timeout: 240_000,
}, async () => {
  // Long enough (every frame of a 720p clip) that the worker is always killed mid-file.
  const file = await serveFile(await synthetic720p(30), 'video/mp4', { validators: false });
  try {
    for (const w of workers) await kill(w);
    const w = await startWorker();
    const id = await createTask(a, {
      input: [{ type: 'video_url', url: `${file.url}/clip.mp4`, sampling: { mode: 'fps', value: 25 } }],
      steps: [{ model: 'detect' }],
    });
    await framesReach(id, 1);
    await kill(w);
    const killedAt = Date.now();
    const rec = await waitStatus(a, id, ['failed', 'succeeded'], WAIT_MS);
    assert.equal(rec.status, 'failed');
    assert.equal(rec.error.code, 'worker_lost');
    assert.equal(rec.resumes, 0);
    assert.ok(Date.now() - killedAt < LEASE_MS + 15_000);
    assert.equal(chunksOf((await readStream(a, id)).bytes).at(-1).finish_reason, 'error');
  } finally {
    await file.close();
  }
});
