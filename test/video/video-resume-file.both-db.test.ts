// A file task outlives its worker (docs/video.md, "When a worker dies"; the harness: test/helpers/video-resume.ts,
// on PostgreSQL only): a staged file task killed twice gives the stream, results and usage of an undisturbed
// run, and so does one read from a URL whose server sends ETag and Last-Modified; a URL whose file changed (or
// whose validators went away) by the takeover fails source_changed, and one whose server never sent validators
// still fails worker_lost as before.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { api } from '../helpers/app.js';
import { TUD_CAMPUS } from '../helpers/eval-data.js';
import { synthetic720p } from '../helpers/live-sources.js';
import { serveFile } from '../helpers/media-server.js';
import { chunksOf, createTask, readStream, waitStatus } from '../helpers/video-tasks.js';
import { sql as cpSql } from '../helpers/task-checkpoint.sql.js';
import { CHECKPOINT_CHUNKS, kill, LEASE_MS, MIDDLE, ResumeHarness, skip, WAIT_MS } from '../helpers/video-resume.js';

const h = new ResumeHarness();
before(() => h.start(false));
after(() => h.stop());

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
  const expected = chunksOf((await readStream(h.a, whole)).bytes);
  assert.equal(chunks.length, expected.length);
  for (let i = 0; i < chunks.length; i++)
    assert.deepEqual(blankWallClock(chunks[i], id), blankWallClock(expected[i], whole), `chunk ${i}`);
  assert.deepEqual(done.usage.processed_frames, undisturbed.usage.processed_frames);
  const results = async (t: string) => {
    const r = (await api(h.a, `/v1/video/tasks/${t}/results`)).body;
    return blankWallClock({ ...r, usage: { ...r.usage, processing_time_ms: 0 } }, t);
  };
  assert.deepEqual(await results(id), await results(whole));
  const analytics = async (t: string) => (await api(h.a, `/v1/video/tasks/${t}/analytics`)).body.totals;
  assert.deepEqual(await analytics(id), await analytics(whole));
}

/**
 * Runs `body` undisturbed, then again with its worker SIGKILLed once the task reached each of `killAt` frames
 * (restarted each time), and checks the disturbed run against the undisturbed one. Returns the live worker.
 */
/** Where a task's archive and its stored checkpoint stand: chunks archived after the checkpoint's chunk. */
async function behindCheckpoint(id: string): Promise<{ chunks: number; behind: number }> {
  const [r] = await h.a.app.services.db.query<{ chunk_count: number; behind: number }>(cpSql.behindCheckpoint, [id]);
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
    await h.framesReach(id, at.chunks + 1);
  }
}

async function killedEqualsUndisturbed(body: unknown, killAt: number[], w: ChildProcess): Promise<ChildProcess> {
  const whole = await createTask(h.a, body);
  const undisturbed = await waitStatus(h.a, whole, ['succeeded', 'failed'], WAIT_MS);
  assert.equal(undisturbed.status, 'succeeded', JSON.stringify(undisturbed.error));

  const id = await createTask(h.a, body);
  const watching = readStream(h.a, id, { timeoutMs: 6 * WAIT_MS });
  for (const at of killAt) {
    await h.framesReach(id, at);
    const behind = await killBehindCheckpoint(id, w);
    // The checkpoint is at most the cadence behind: the next worker processes those frames again.
    assert.ok(behind > 0 && behind < CHECKPOINT_CHUNKS, `${behind} chunks behind the checkpoint`);
    const left = await h.processed(id);
    w = await h.startWorker();
    await h.framesReach(id, left + 1);
  }
  const done = await waitStatus(h.a, id, ['succeeded', 'failed', 'cancelled'], WAIT_MS);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(done.resumes, killAt.length);
  const bytes = (await watching).bytes;
  assert.ok(bytes.equals((await readStream(h.a, id)).bytes), 'the connected subscriber got exactly the archive');
  await assertSameAsUndisturbed(id, bytes, done, whole, undisturbed);
  return w;
}

test('a file task continues after two SIGKILLs of its worker: the stream, results and usage of an undisturbed run', {
  skip,
  timeout: 420_000,
}, async () => {
  await h.killAll();
  const data = readFileSync(TUD_CAMPUS()).toString('base64');
  await kill(await killedEqualsUndisturbed(fileTask(data), [15, 40], await h.startWorker()));
});

test('a file task read from a URL with ETag and Last-Modified continues after a SIGKILL: the undisturbed run', {
  skip,
  timeout: 300_000,
}, async () => {
  const file = await serveFile(TUD_CAMPUS(), 'video/mp4');
  try {
    await h.killAll();
    await kill(await killedEqualsUndisturbed(urlTask(`${file.url}/campus.mp4`), [20], await h.startWorker()));
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
      await h.killAll();
      const w = await h.startWorker();
      const id = await createTask(h.a, urlTask(`${file.url}/campus.mp4`));
      await h.framesReach(id, 3);
      await kill(w);
      const left = await h.processed(id);
      if (change === 'changed') file.replace(changed);
      else file.validators(false);
      const w2 = await h.startWorker();
      const rec = await waitStatus(h.a, id, ['failed', 'succeeded'], WAIT_MS);
      assert.equal(rec.status, 'failed', change);
      assert.equal(rec.error.code, 'source_changed', `${change}: ${JSON.stringify(rec.error)}`);
      assert.match(rec.error.message, change === 'changed' ? /changed since the checkpoint/ : /no longer says/);
      assert.equal(rec.resumes, 1);
      const chunks = chunksOf((await readStream(h.a, id)).bytes);
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
    await h.killAll();
    const w = await h.startWorker();
    const id = await createTask(h.a, {
      input: [{ type: 'video_url', url: `${file.url}/clip.mp4`, sampling: { mode: 'fps', value: 25 } }],
      steps: [{ model: 'detect' }],
    });
    await h.framesReach(id, 1);
    await kill(w);
    const killedAt = Date.now();
    const rec = await waitStatus(h.a, id, ['failed', 'succeeded'], WAIT_MS);
    assert.equal(rec.status, 'failed');
    assert.equal(rec.error.code, 'worker_lost');
    assert.equal(rec.resumes, 0);
    assert.ok(Date.now() - killedAt < LEASE_MS + 15_000);
    assert.equal(chunksOf((await readStream(h.a, id)).bytes).at(-1).finish_reason, 'error');
  } finally {
    await file.close();
  }
});
