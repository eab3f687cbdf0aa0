// The harness of the tests of a task outliving its worker (test/video/video-resume-*.both-db.test.ts; docs/video.md,
// "When a worker dies"), on one real PostgreSQL (SIGHTFLOW_TEST_DB=postgres only; PGlite is owned by one
// process): an API node in the test's process (its reaper looks often) and separate worker processes
// (test/video/live-worker.ts: `sightflow worker` with the real LocalProvider and models), with a real RTSP
// camera (test/helpers/rtsp_server.py looping TUD-Campus) for the live tests. Split in three files so the
// suite's two test processes share them; each file starts its own API node and database.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { api, backend, freshDatabaseUrl, type TestApp } from './app.js';
import { evalDataSkip } from '../../eval/dir.js';
import { TUD_CAMPUS } from './eval-data.js';
import { liveClip, startRtspServer, type RtspSource } from './live-sources.js';
import { partsAtGaps } from './archive-parts.js';
import { chunksOf, parseEvents, startVideoApp, waitFor } from './video-tasks.js';
import { spawnWorker } from './worker-process.js';

export const skip =
  backend !== 'postgres'
    ? 'PostgreSQL only (SIGHTFLOW_TEST_DB=postgres)'
    : evalDataSkip('tracking/TUD-Campus/TUD-Campus.mp4');
// Long enough that loading the models on two busy cores never outlasts a lease; short enough for a test.
export const LEASE_MS = 5000;
const WORKER = fileURLToPath(new URL('../video/live-worker.ts', import.meta.url));
/** Waits on the loaded 2-core machine: generous, always bounded. */
export const WAIT_MS = 90_000;
export const CHECKPOINT_CHUNKS = 5;

// People walk across TUD-Campus (640x480) from side to side: a line down the middle is crossed.
export const MIDDLE = {
  id: 'middle',
  points: [
    [320, 0],
    [320, 480],
  ],
};

export function kill(w: ChildProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
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

export class ResumeHarness {
  a!: TestApp;
  rtsp!: RtspSource;
  dataDir = '';
  databaseUrl = '';
  readonly workers = new Set<ChildProcess>();

  /** The API node on a fresh database, and with `camera` the RTSP server looping TUD-Campus. */
  async start(camera: boolean): Promise<void> {
    if (skip) return;
    this.dataDir = mkdtempSync(join(tmpdir(), 'sightflow-video-resume-'));
    this.databaseUrl = (await freshDatabaseUrl())!;
    // Its reaper looks often, so a dead worker's task moves on soon after its lease.
    this.a = await startVideoApp(
      { SIGHTFLOW_VIDEO_REAPER_MS: '250', SIGHTFLOW_VIDEO_LEASE_MS: String(LEASE_MS), SIGHTFLOW_METRICS_PORT: '0' },
      { dataDir: this.dataDir, databaseUrl: this.databaseUrl },
    );
    if (camera) this.rtsp = await startRtspServer(await liveClip(TUD_CAMPUS()));
  }

  async stop(): Promise<void> {
    for (const w of this.workers) await kill(w);
    await this.rtsp?.close();
    await this.a?.close();
    if (this.dataDir) rmSync(this.dataDir, { recursive: true, force: true });
  }

  startWorker(): Promise<ChildProcess> {
    return spawnWorker(WORKER, {
      databaseUrl: this.databaseUrl,
      dataDir: this.dataDir,
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
        this.workers.add(child);
        child.on('close', () => this.workers.delete(child));
      },
    });
  }

  /** Kills every worker there is (the tests that start from none). */
  async killAll(): Promise<void> {
    for (const w of this.workers) await kill(w);
  }

  readonly record = async (id: string) => (await api(this.a, `/v1/video/tasks/${id}`)).body;
  readonly processed = async (id: string) => Number((await this.record(id)).progress.processed_frames);

  /** Waits until the task archived `n` frames (a chunk more than it had, at least). */
  readonly framesReach = (id: string, n: number) =>
    waitFor(`task ${id} to reach ${n} frames`, async () => (await this.processed(id)) >= n, WAIT_MS);

  /** Every status the task record shows while `run` runs (polled), for "never terminal in between". */
  async statusesDuring<T>(id: string, run: () => Promise<T>): Promise<{ result: T; seen: Set<string> }> {
    const seen = new Set<string>();
    let on = true;
    const poll = (async () => {
      while (on) {
        seen.add(String((await this.record(id)).status));
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

  /** A task on the camera at 2 fps: detect people, count the middle line, end after `maxFrames`. */
  liveTask(maxFrames: number) {
    return {
      input: [{ type: 'video_url', url: this.rtsp.url, sampling: { mode: 'fps', value: 2 }, max_frames: maxFrames }],
      steps: [
        { model: 'detect', parameters: { classes: ['person'] } },
        {
          model: 'analytics',
          parameters: {
            lines: [MIDDLE],
          },
        },
      ],
    };
  }
}

/** The checks every continued task's archive passes, whatever its end. */
export function assertContinued(id: string, bytes: Buffer, gaps: number): any[] {
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
  const split = partsAtGaps(frames);
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
