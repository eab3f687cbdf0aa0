// `npm run bench -- failover [--kind live|file] [--quick] [--json] [--seed N] [--lease-ms N] [--kills K,...]`:
// a task outlives its worker (docs/video.md, "When a worker dies"); how to run it and what it checks:
// docs/video.md, "Measuring failover". A throwaway PostgreSQL cluster, one API node in this process and two
// worker processes with a short lease, both warm (each ran a short task with the same steps first, and a
// restarted worker does again before the next kill), one inference session with one thread each, so a run
// is repeatable to the byte.
//  - live: the RTSP test camera looping TUD-Campus (detect + a counting line); the worker holding the task is
//    SIGKILLed 3 times (--quick 1), each restarted: status running throughout, each gap marked, track ids
//    never reused, line totals never going backwards, then max_frames ends it.
//  - file: detect + track + analytics (a line and a zone) + an index step over TUD-Campus (as H.264), vtest.avi
//    (H.264 with B-frames in AVI, no timestamps) and a variable-frame-rate H.264 file with B-frames made from
//    TUD-Campus here, on `sightflow worker` processes; first undisturbed, then with K = 1, 3, 5 SIGKILLs (--quick: TUD-Campus, K = 1) of
//    whichever worker holds it, after seeded random chunks, some at once (while it appends the next), some
//    later within a chunk's time; with K = 5, kill 2 lands during a resume: right after the worker that claimed
//    the task kill 1 left became its lease owner, before its first chunk (killDuringResume). Each run must end succeeded with the undisturbed run's frames, targets,
//    track ids, totals, recount, results, usage and index counts, and its stream byte for byte once the wall
//    clock is blanked (blankWallClock, bench/failover-checks.ts). A task that cannot continue ends
//    worker_lost: its checks fail and are reported, the suite goes on, and the command exits 1.
// A subscriber stays with each stream, reconnecting with Last-Event-ID after every kill, and must hold exactly
// the archive. The figure: from each kill to the next frame chunk at that subscriber (p50/p95/max) against
// the lease + 3 s; the peer is the undisturbed run of the same task (its time beside the disturbed runs').
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { argValue } from '../../eval/lib/model-choice.js';
import { evalDir, skipWithoutEvalData } from '../../eval/dir.js';
import { api } from '../../test/helpers/app.js';
import { liveClip, startRtspServer } from '../../test/helpers/live-sources.js';
import { makeMedia } from '../../test/helpers/media.js';
import { readStream, waitFor } from '../../test/helpers/video-tasks.js';
import {
  archiveChecks,
  type Check,
  followerChecks,
  liveChecks,
  type RunOutcome,
  sameAsUndisturbed,
} from '../failover-checks.js';
import { Fleet, WAIT_MS } from '../failover-fleet.js';
import { StreamFollower } from '../stream-follower.js';

const TUD = 'tracking/TUD-Campus/TUD-Campus.mp4';
const VTEST = 'tracking/vtest_PETS09-S2L1_full/vtest.avi';
/** What the figure is held to: the lease, then this much for the reaper, the claim and the first frame. */
const SLACK_MS = 3000;

/** A seeded generator (mulberry32), so a run's kill moments are the same each time for the same seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const secs = (ms: number) => (ms / 1000).toFixed(1);

// People walk across each video from side to side: a line down the middle, a zone over the left half.
const ANALYTICS = {
  model: 'analytics',
  parameters: {
    units: 'relative',
    lines: [
      {
        id: 'middle',
        points: [
          [0.5, 0],
          [0.5, 1],
        ],
      },
    ],
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
};
const DETECT = { model: 'detect', parameters: { classes: ['person'] } };

interface Video {
  label: string;
  path: string;
  fps: number;
  maxFrames?: number;
}

/**
 * The evaluation videos of a file run: TUD-Campus as H.264, vtest.avi as it is (every frame), and a VFR file
 * with B-frames. TUD-Campus is 71 frames, less than one lease at the detector's pace, so both files made from
 * it play it forwards then backwards (no jump for the tracker) 3 times: room for several kills, each
 * followed by the restart and warm-up of the killed worker.
 */
async function videos(quick: boolean): Promise<Video[]> {
  const tud = join(evalDir('tracking/TUD-Campus'), 'TUD-Campus.mp4');
  const x264 = ['-an', '-c:v', 'libx264', '-preset', 'veryfast', '-pix_fmt', 'yuv420p'];
  const pingPong = (loops: number) =>
    `[0:v]split[a][b];[b]reverse[r];[a][r]concat=n=2:v=1,loop=loop=${loops - 1}:size=142:start=0`;
  // --quick: the clip once, forwards (one kill, in its first half, leaves the takeover half of it).
  if (quick)
    return [
      {
        label: 'TUD-Campus (H.264, once)',
        path: await makeMedia('failover_tud_h264_once.mp4', ['-i', tud, '-vf', 'setpts=N/25/TB', ...x264, '-bf', '0']),
        fps: 25,
      },
    ];
  const tudH264: Video = {
    label: 'TUD-Campus (H.264, 3x forwards and back)',
    path: await makeMedia('failover_tud_h264_3.mp4', [
      '-i',
      tud,
      '-filter_complex',
      `${pingPong(3)},setpts=N/25/TB[v]`,
      '-map',
      '[v]',
      ...x264,
      '-bf',
      '0',
    ]),
    fps: 25,
  };
  return [
    tudH264,
    { label: 'vtest.avi', path: join(evalDir('tracking/vtest_PETS09-S2L1_full'), 'vtest.avi'), fps: 10 },
    {
      // Each pass of 71 frames alternately at 25 and at 10 frames a second (2.84 s, then 7.1 s), 3 B-frames.
      label: 'TUD-Campus VFR + B-frames (3x forwards and back)',
      path: await makeMedia('failover_tud_vfr_bframes_3.mp4', [
        '-i',
        tud,
        '-filter_complex',
        `${pingPong(3)},settb=1/1000,` +
          "setpts='(floor(floor(N/71)/2)*9.94+if(mod(floor(N/71),2),2.84+mod(N,71)/10,mod(N,71)/25))/TB'[v]",
        '-map',
        '[v]',
        '-fps_mode',
        'vfr',
        '-enc_time_base',
        '-1',
        ...x264,
        '-bf',
        '3',
      ]),
      fps: 25,
    },
  ];
}

interface Kill {
  /** Frame chunks archived when it died. */
  atChunk: number;
  /** 'during a resume': the worker that had just claimed the task (its lease owner), before its first chunk. */
  mode: 'at once' | 'later' | 'during a resume';
  /** Kill to the next frame chunk at the subscriber; undefined when none came (the task ended, or the worker
   * that took the task over was killed before its first chunk: `takerKilled`). */
  outageMs?: number;
  /** The worker that took over after this kill was killed during its resume (the next kill). */
  takerKilled?: boolean;
  /** Frames archived after the stored checkpoint's when it died: the taker processes them again (a file). */
  again?: number;
}

interface RunReport {
  label: string;
  kills: Kill[];
  planned: number;
  frames: number;
  taskMs: number;
  /** Live: the usual time between two frame chunks (the median), what a subscriber waits when nobody dies. */
  chunkGapMs?: number;
  /** The task's end: its status, and its error's code when it failed. */
  endedAs: string;
  checks: Check[];
}

const fileBody = async (path: string, fps: number, maxFrames: number | undefined, collection: string) => ({
  input: [
    {
      type: 'video_base64',
      data: readFileSync(path).toString('base64'),
      sampling: { mode: 'fps', value: fps },
      ...(maxFrames ? { max_frames: maxFrames } : {}),
    },
  ],
  steps: [DETECT, ANALYTICS, { model: 'index', parameters: { collection } }],
});

async function collection(fleet: Fleet, name: string): Promise<string> {
  const r = await api(fleet.app, '/v1/vectors/collections', { method: 'POST', json: { name } });
  if (r.status !== 201) throw new Error(`collection: ${r.status} ${r.text}`);
  return r.body.id;
}

const endedAs = (record: any) => `${record.status}${record.error ? ` ${record.error.code}` : ''}`;

/** Everything to compare once a task ended. */
async function outcome(fleet: Fleet, id: string): Promise<RunOutcome> {
  const record = await fleet.finished(id);
  const bytes = (await readStream(fleet.app, id, { timeoutMs: WAIT_MS })).bytes;
  const get = async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const r = await api(fleet.app, `/v1/video/tasks/${id}${path}`, init);
    return r.status === 200 ? r.body : { status: r.status, error: r.body?.error };
  };
  return {
    id,
    bytes,
    record,
    results: await get('/results'),
    analytics: await get('/analytics'),
    recount: await get('/analytics/recount', { method: 'POST', json: {} }),
  };
}

/**
 * Kills the worker holding `id` (which must be running on one) and times the takeover: restarts the killed
 * worker after the next frame chunk (or the task's end) and warms it, so both are up and warm for the next.
 */
async function killHolder(
  fleet: Fleet,
  id: string,
  follower: StreamFollower,
  mode: Kill['mode'],
  warmBody: () => Promise<unknown>,
): Promise<Kill | undefined> {
  const holder = await waitFor(
    `a worker to hold ${id}`,
    async () => (await fleet.holder(id)) ?? ((await fleet.record(id)).finished_at ? 'ended' : undefined),
    WAIT_MS,
  );
  if (holder === 'ended') return undefined;
  const killedAt = Date.now();
  await fleet.kill(holder);
  const atChunk = Number((await fleet.record(id)).progress.processed_frames);
  const again = await fleet.behind(id);
  follower.reconnect();
  await follower.untilFrames(atChunk + 1);
  const next = follower.frameArrivals[atChunk];
  const kill: Kill = {
    atChunk,
    mode,
    ...(next !== undefined ? { outageMs: next - killedAt } : {}),
    ...(again !== null ? { again } : {}),
  };
  await fleet.warm([await fleet.spawn()], warmBody);
  return kill;
}

/**
 * Two kills in one: the worker holding `id`, then, as soon as another worker has claimed the task (the lease
 * owner names it) and before its first chunk, that one too: a kill during a resume. A third worker, which the
 * caller started and warmed before the task, takes the task over after that, warm; one is started in place of
 * the two killed afterwards, so two are left.
 * Undefined when the task ended before the first kill; the second kill's `atChunk` above the first's says the
 * taker archived a chunk before it died (the window was missed).
 */
async function killDuringResume(
  fleet: Fleet,
  id: string,
  follower: StreamFollower,
  mode: 'at once' | 'later',
  warmBody: () => Promise<unknown>,
): Promise<[Kill, Kill] | undefined> {
  const first = await waitFor(
    `a worker to hold ${id}`,
    async () => (await fleet.holder(id)) ?? ((await fleet.record(id)).finished_at ? 'ended' : undefined),
    WAIT_MS,
  );
  if (first === 'ended') return undefined;
  await fleet.kill(first);
  const atChunk = Number((await fleet.record(id)).progress.processed_frames);
  // The killed worker left the fleet's list, so the next holder found is the one that claimed it after the lease.
  // Looked for every 10 ms (the lease row only): the taker replays the archive and reopens the file before its
  // first chunk, so its window is short.
  let taker: Awaited<ReturnType<Fleet['holder']>> | 'ended';
  for (let n = 0, until = Date.now() + WAIT_MS; ; n++, await sleep(10)) {
    taker = await fleet.holder(id);
    if (taker) break;
    // Whether it ended instead (worker_lost), every 200 ms: the record is an HTTP request.
    if (n % 20 === 19 && (await fleet.record(id)).finished_at) taker = 'ended';
    if (taker || Date.now() > until) break;
  }
  if (!taker) throw new Error(`no worker claimed ${id} again`);
  if (taker === 'ended')
    return [
      { atChunk, mode },
      { atChunk, mode: 'during a resume' },
    ];
  const killedAt = Date.now();
  await fleet.kill(taker);
  const takerAt = Number((await fleet.record(id)).progress.processed_frames);
  follower.reconnect();
  await follower.untilFrames(takerAt + 1);
  const next = follower.frameArrivals[takerAt];
  await fleet.warm([await fleet.spawn()], warmBody);
  return [
    { atChunk, mode, takerKilled: true },
    { atChunk: takerAt, mode: 'during a resume', ...(next !== undefined ? { outageMs: next - killedAt } : {}) },
  ];
}

async function fileRun(
  fleet: Fleet,
  video: Video,
  k: number,
  base: { outcome: RunOutcome; frames: number; intervalMs: number } | undefined,
  random: () => number,
  warmBody: () => Promise<unknown>,
): Promise<{ report: RunReport; outcome: RunOutcome; intervalMs: number }> {
  const label = `${video.label} K=${k}`;
  const col = await collection(fleet, `failover-${Date.now().toString(36)}-${k}`);
  // With K = 5, kills 1 and 2 are one pair: kill 2 lands during a resume (killDuringResume), and a third worker,
  // warm before the task starts (so the short --quick file has room for all five), takes the task over after it.
  // First, so no later warm-up has two idle workers to miss its restarted one.
  const resumeKill = k >= 5 ? 2 : -1;
  if (resumeKill > 0) await fleet.warm([await fleet.spawn()], warmBody);
  const started = Date.now();
  const id = await fleet.create(await fileBody(video.path, video.fps, video.maxFrames, col));
  const follower = new StreamFollower(fleet.app, id, 10 * WAIT_MS);
  // Each kill comes after a seeded random number of chunks, drawn within an even share of the frames left (the
  // run's undisturbed count) so all K fall mid-task, counted from when both workers are up and warm again.
  const n = base?.frames ?? 0;
  const checks0: Check[] = [];
  const kills: Kill[] = [];
  for (let i = 0; i < k; i++) {
    const share = Math.max(1, Math.floor((n - follower.frames) / (k - i + 1)));
    await follower.untilFrames(follower.frames + 1 + Math.floor(random() * share));
    // At once: as the chunk reaches the subscriber (its worker is running that append's hooks or is already on
    // the next frame, whose append may be under way); later: anywhere in a chunk's time after it.
    const mode = random() < 0.5 ? ('at once' as const) : ('later' as const);
    if (mode === 'later') await sleep(random() * (base?.intervalMs ?? 0));
    if (i + 1 === resumeKill - 1) {
      const pair = await killDuringResume(fleet, id, follower, mode, warmBody);
      if (!pair) break;
      kills.push(...pair);
      i++;
      if (pair[1].outageMs === undefined) break;
      continue;
    }
    const kill = await killHolder(fleet, id, follower, mode, warmBody);
    if (!kill) break;
    kills.push(kill);
    if (kill.outageMs === undefined) break;
  }
  if (resumeKill > 0 && kills.length >= resumeKill)
    checks0.push({
      name: `kill ${resumeKill} during a resume`,
      ok: kills[resumeKill - 1]!.atChunk === kills[resumeKill - 2]!.atChunk,
      detail:
        kills[resumeKill - 1]!.atChunk === kills[resumeKill - 2]!.atChunk
          ? 'the taker died before its first chunk'
          : `the taker had archived ${kills[resumeKill - 1]!.atChunk - kills[resumeKill - 2]!.atChunk} chunks`,
    });
  const out = await outcome(fleet, id);
  const got = await follower.done;
  const checks = [...archiveChecks(out), ...followerChecks(out.bytes, got, follower.reconnects), ...checks0];
  if (base) {
    checks.push({
      name: `${k} kills made`,
      ok: kills.length === k,
      detail: `${kills.length} of ${k} before the task ended`,
    });
    // A run that did not succeed differs from the undisturbed one everywhere: one check says so, not eight.
    if (out.record.status === 'succeeded') checks.push(...sameAsUndisturbed(base.outcome, out));
    else
      checks.push({
        name: 'same as the undisturbed run',
        ok: false,
        detail: `not compared: the run ended ${out.record.status} (${out.record.error?.code}) after ${follower.frames} of ${n} frames`,
      });
  }
  const arrivals = follower.frameArrivals;
  const intervalMs = arrivals.length > 1 ? (arrivals.at(-1)! - arrivals[0]!) / (arrivals.length - 1) : 0;
  return {
    report: {
      label,
      kills,
      planned: k,
      frames: follower.frames,
      taskMs: Date.now() - started,
      endedAs: endedAs(out.record),
      checks,
    },
    outcome: out,
    intervalMs,
  };
}

async function liveRun(
  fleet: Fleet,
  url: string,
  kills: number,
  random: () => number,
  warmBody: () => Promise<unknown>,
): Promise<RunReport> {
  // 2 frames a second: each kill cycle (lease, takeover, restart and warm-up of the killed worker) fits in the
  // task's frames with room to spare; a kill that did not fit fails its check.
  const maxFrames = 20 + kills * 15;
  const started = Date.now();
  const id = await fleet.create({
    input: [{ type: 'video_url', url, sampling: { mode: 'fps', value: 2 }, max_frames: maxFrames }],
    steps: [DETECT, ANALYTICS],
  });
  const follower = new StreamFollower(fleet.app, id, 10 * WAIT_MS);
  const seen = new Set<string>();
  // Statuses once the task has started: before a worker first claims it, it is pending, and the first poll
  // can land there (it did, on a busy machine); "running throughout" is about the takeovers after.
  const afterStart = new Set<string>();
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const status = String((await fleet.record(id)).status);
      seen.add(status);
      if (afterStart.size > 0 || status !== 'pending') afterStart.add(status);
      await sleep(150);
    }
  })();
  const done: Kill[] = [];
  try {
    for (let i = 0; i < kills; i++) {
      // A few frames on the worker that took over (and its restarted peer warm), then the next kill.
      await follower.untilFrames(follower.frames + 3 + Math.floor(random() * 3));
      const mode: Kill['mode'] = random() < 0.5 ? 'at once' : 'later';
      if (mode === 'later') await sleep(random() * 500);
      const kill = await killHolder(fleet, id, follower, mode, warmBody);
      if (!kill) break;
      done.push(kill);
    }
  } finally {
    polling = false;
    await poll;
  }
  const out = await outcome(fleet, id);
  const got = await follower.done;
  const between = [...afterStart].filter((s) => !['running', 'streaming', 'succeeded'].includes(s));
  const a = follower.frameArrivals;
  const chunkGapMs = pct(
    a.slice(1).map((t, i) => t - a[i]!),
    0.5,
  );
  return {
    label: `live RTSP, ${kills} kills`,
    kills: done,
    planned: kills,
    frames: follower.frames,
    taskMs: Date.now() - started,
    chunkGapMs,
    endedAs: endedAs(out.record),
    checks: [
      ...archiveChecks(out),
      ...followerChecks(out.bytes, got, follower.reconnects),
      { name: `${kills} kills made`, ok: done.length === kills, detail: `${done.length} of ${kills}` },
      { name: 'status running throughout', ok: between.length === 0, detail: `statuses seen: ${[...seen]}` },
      { name: `resumes ${kills}`, ok: out.record.resumes === kills, detail: `resumes ${out.record.resumes}` },
      ...liveChecks(out.bytes, kills, 'middle'),
    ],
  };
}

function print(r: RunReport, peerMs?: number): void {
  const failed = r.checks.filter((c) => !c.ok);
  const kills = r.kills
    .map(
      (k, i) =>
        `${k.mode === 'during a resume' ? `kill ${i + 1} of ${r.planned} during a resume, ` : ''}after chunk ${k.atChunk} ` +
        `(${k.mode}${k.again ? `, ${k.again} frames again` : ''}): ` +
        (k.takerKilled
          ? 'its taker killed before its first chunk'
          : k.outageMs === undefined
            ? 'no next chunk'
            : `${secs(k.outageMs)} s`),
    )
    .join('; ');
  const vsPeer = peerMs
    ? `, ${(r.taskMs / peerMs).toFixed(2)}x the undisturbed run's time`
    : r.chunkGapMs !== undefined
      ? ` (undisturbed, a chunk every ${secs(r.chunkGapMs)} s at the median)`
      : '';
  console.log(
    `${r.label}: ${r.frames} frame chunks in ${secs(r.taskMs)} s${vsPeer}; ${r.kills.length} kills${kills ? ` (kill -> next chunk ${kills})` : ''}; ` +
      `checks ${r.checks.length - failed.length}/${r.checks.length} ${failed.length ? 'FAILED' : 'passed'}`,
  );
  for (const c of failed) console.log(`  FAILED ${c.name}: ${c.detail ?? ''}`);
}

/** A fleet of `role` workers for `fn`, warmed by `fn` itself, closed after it whatever happens. */
async function withFleet(
  leaseMs: number,
  role: 'worker' | 'node',
  seed: number,
  fn: (fleet: Fleet) => Promise<void>,
): Promise<void> {
  const fleet = await Fleet.start({
    leaseMs,
    role,
    // Repeatable inference: one session with one thread, no batching across frames.
    workerEnv: {
      SIGHTFLOW_INFERENCE_SESSIONS: '1',
      SIGHTFLOW_INTRA_OP_THREADS: '1',
      SIGHTFLOW_BATCH_MAX_SIZE: '1',
      SIGHTFLOW_VIDEO_SSE_HEARTBEAT_MS: '15000',
    },
  });
  try {
    console.log(
      `fleet: PostgreSQL, 1 API node, 2 ${role === 'worker' ? '`sightflow worker`' : '`sightflow serve`'} processes ` +
        `(lease ${leaseMs} ms, heartbeat 250 ms, one inference session, one thread); seed ${seed}`,
    );
    await fn(fleet);
  } finally {
    await fleet.close();
  }
}

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  const kind = argValue(args, 'kind') ?? 'all';
  if (!['live', 'file', 'all'].includes(kind)) throw new Error(`--kind: expected live or file, got ${kind}`);
  const leaseMs = Number(argValue(args, 'lease-ms') ?? 3000);
  if (!Number.isInteger(leaseMs) || leaseMs < 1000 || leaseMs > 60_000)
    throw new Error(`--lease-ms: expected a whole number from 1000 to 60000, got ${argValue(args, 'lease-ms')}`);
  const seed = Number(argValue(args, 'seed') ?? 1);
  if (skipWithoutEvalData({ json }, TUD, ...(quick || kind === 'live' ? [] : [VTEST]))) return;
  // --kills 1,3,5 (the default; --quick 1): a run per K; K = 0 is a second undisturbed run, a control of the
  // comparison itself.
  const ks = (argValue(args, 'kills') ?? (quick ? '1' : '1,3,5')).split(',').map(Number);
  if (ks.some((k) => !Number.isInteger(k) || k < 0 || k > 20))
    throw new Error(`--kills: expected whole numbers from 0 to 20, got ${argValue(args, 'kills')}`);
  const random = rng(seed);
  const reports: RunReport[] = [];
  const peers: Array<{ video: string; undisturbed_s: number; disturbed_s: number[] }> = [];
  // A warm-up: the first 10 frames of TUD-Campus with the measured steps, so the models are loaded.
  const warmClip = await makeMedia('failover_warm.mp4', [
    '-i',
    join(evalDir('tracking/TUD-Campus'), 'TUD-Campus.mp4'),
    '-frames:v',
    '10',
    '-an',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
  ]);

  if (kind !== 'live') {
    // `sightflow worker` processes, as a fleet runs them: their index step writes the moments to the database and
    // the shared data directory, and the API node's index catches up.
    await withFleet(leaseMs, 'worker', seed, async (fleet) => {
      let n = 0;
      const warmBody = async () => fileBody(warmClip, 25, undefined, await collection(fleet, `warm-${n++}`));
      await fleet.warm([...fleet.workers], warmBody);
      for (const video of await videos(quick)) {
        const base = await fileRun(fleet, video, 0, undefined, random, warmBody);
        print(base.report);
        reports.push(base.report);
        const ref = { outcome: base.outcome, frames: base.report.frames, intervalMs: base.intervalMs };
        const peer = { video: video.label, undisturbed_s: base.report.taskMs / 1000, disturbed_s: [] as number[] };
        for (const k of ks) {
          const r = (await fileRun(fleet, video, k, ref, random, warmBody)).report;
          print(r, base.report.taskMs);
          reports.push(r);
          peer.disturbed_s.push(r.taskMs / 1000);
        }
        peers.push(peer);
      }
    });
  }

  if (kind !== 'file') {
    await withFleet(leaseMs, 'worker', seed, async (fleet) => {
      const warmBody = async () => ({
        input: [{ type: 'video_base64', data: readFileSync(warmClip).toString('base64') }],
        steps: [DETECT, ANALYTICS],
      });
      await fleet.warm([...fleet.workers], warmBody);
      const rtsp = await startRtspServer(await liveClip(join(evalDir('tracking/TUD-Campus'), 'TUD-Campus.mp4')));
      try {
        const r = await liveRun(fleet, rtsp.url, quick ? 1 : 3, random, warmBody);
        print(r);
        reports.push(r);
      } finally {
        await rtsp.close();
      }
    });
  }

  const outages = reports.flatMap((r) => r.kills.flatMap((k) => (k.outageMs === undefined ? [] : [k.outageMs])));
  const bound = leaseMs + SLACK_MS;
  const figure = {
    n: outages.length,
    p50: pct(outages, 0.5),
    p95: pct(outages, 0.95),
    max: outages.length ? Math.max(...outages) : NaN,
  };
  const failed = reports.filter((r) => r.checks.some((c) => !c.ok));
  console.log(
    figure.n === 0
      ? 'kill -> next chunk: no takeover to time (no kill was followed by a frame chunk)'
      : `kill -> next chunk over ${figure.n} takeovers (warm models): p50 ${secs(figure.p50)} s, p95 ${secs(figure.p95)} s, ` +
          `max ${secs(figure.max)} s; against lease + ${SLACK_MS / 1000} s = ${secs(bound)} s: p95 ${(figure.p95 / bound).toFixed(2)}x` +
          `${figure.p95 <= bound ? ' (within)' : ' (OVER)'}`,
  );
  const again = reports.flatMap((r) => r.kills.flatMap((k) => (k.again === undefined ? [] : [k.again])));
  if (again.length)
    console.log(
      `frames processed again after a takeover (archived after the stored checkpoint; a camera's is of every chunk): ${again.filter((n) => n > 0).length} ` +
        `of ${again.length} takeovers, ${Math.min(...again)}-${Math.max(...again)} frames`,
    );
  const lost = reports.filter((r) => r.endedAs === 'failed worker_lost');
  if (lost.length)
    console.log(
      `${lost.length} of ${reports.length} runs ended worker_lost after a kill (which tasks cannot continue on ` +
        'another worker: docs/video.md, "When a worker dies")',
    );
  console.log(
    failed.length
      ? `FAILED: ${failed.length} of ${reports.length} runs (${failed.map((r) => r.label).join('; ')})`
      : `passed: all ${reports.length} runs`,
  );
  // A failed check fails the command (and the quick pass in CI).
  if (failed.length) process.exitCode = 1;
  if (json)
    console.log(
      JSON.stringify({
        suite: 'failover',
        kind,
        seed,
        lease_ms: leaseMs,
        bound_ms: bound,
        failover_ms: figure,
        ratio: Math.round((figure.p95 / bound) * 100) / 100,
        peer: { name: 'undisturbed run of the same task', runs: peers },
        runs: reports.map((r) => ({
          label: r.label,
          frames: r.frames,
          task_s: r.taskMs / 1000,
          ended_as: r.endedAs,
          ...(r.chunkGapMs !== undefined ? { chunk_gap_ms: r.chunkGapMs } : {}),
          kills: r.kills,
          planned_kills: r.planned,
          passed: r.checks.every((c) => c.ok),
          failed_checks: r.checks.filter((c) => !c.ok),
        })),
        passed: failed.length === 0,
      }),
    );
}
