// `npm run bench -- checkpoint [--quick] [--json]`: what storing a file task's checkpoints costs its appends
// (#47: append time with checkpoints at most 1.1x of without, on PGlite and PostgreSQL; a checkpoint of at most
// 16 KB a chunk with 50 live tracks). Through the real StreamArchive of a video app on PGlite and on a throwaway
// PostgreSQL cluster, two claimed tasks append frame chunks of 50 targets in blocks of `checkpointChunks` chunks,
// alternately: one as a resumable file task's worker does (the worker's own CheckpointCadence: a real file
// checkpoint, 50 live tracks with colour signatures and a vtest.avi decoder cursor from bench/live-tracks.ts,
// with the first chunk of each block, the stored one kept with the others), the other with none (null, what a
// task that cannot resume stores): the peer. The order swaps every round so both see the same archive size
// and machine load. Chunks come back to back, so the cadence's time rule never fires: the case where appends
// are the largest part of a task's time. Prints per database the mean append time of each task and their ratio
// (the goal's measure: what a task spends appending), the p50/p95 of the chunks that store a checkpoint and of
// those without, and the checkpoint's bytes (its JSON, as the statement stores it).
// Figures: docs/video.md, "What a checkpoint costs".
import { execFileSync } from 'node:child_process';
import { startCluster, stopCluster } from '../../test/helpers/pg-cluster.js';
import { createTask, startVideoApp } from '../../test/helpers/video-tasks.js';
import type { TestApp } from '../../test/helpers/app.js';
import { TaskQueue } from '../../src/video/worker/queue.js';
import { KEEP_CHECKPOINT, StreamArchive } from '../../src/video/stream/stream-archive.js';
import { CheckpointCadence } from '../../src/video/worker/checkpoint-cadence.js';
import { hubFor } from '../../src/video/stream/stream-hub.js';
import { skipWithoutEvalData } from '../../eval/dir.js';
import { liveTracks, PETS, VTEST, type LiveTracks } from '../live-tracks.js';

const LEASE = 60_000;
const OWNER = 'bench-worker';
const LIMIT_BYTES = 16 * 1024;
const LIMIT_RATIO = 1.1;

interface Times {
  mean: number;
  p50: number;
  p95: number;
}

interface DbResult {
  db: 'pglite' | 'postgres';
  chunks: number;
  /** Every chunk of the task that stores checkpoints as its worker does, and of the one that stores none. */
  with: Times;
  without: Times;
  /** The chunks that store a checkpoint of their own. */
  stored: Times;
  /** Mean with over mean without: what a task's appends cost with its checkpoints. */
  ratio: number;
  /** p50 of the chunks that store one over p50 without: what one such chunk costs. */
  storedRatio: number;
  /** A checkpoint with every this many chunks. */
  every: number;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const timesOf = (xs: number[]): Times => ({
  mean: xs.reduce((a, b) => a + b, 0) / xs.length,
  p50: pct(xs, 0.5),
  p95: pct(xs, 0.95),
});

function hasPostgres(): boolean {
  try {
    execFileSync('sh', ['-c', 'ls /usr/lib/postgresql/*/bin/initdb'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Rounds of a block of appends to each of two claimed tasks, `chunks` timed a task after `warmupChunks`. */
async function measure(
  t: TestApp,
  db: DbResult['db'],
  sample: LiveTracks,
  chunks: number,
  warmupChunks: number,
): Promise<DbResult> {
  const queue = new TaskQueue(t.app.services);
  const claim = async () => {
    const id = await createTask(t);
    const claimed = await queue.claim(OWNER, LEASE);
    if (claimed?.id !== id) throw new Error(`claimed ${claimed?.id}, expected ${id}`);
    return id;
  };
  const resumable = await claim(),
    plain = await claim();
  const archive = new StreamArchive(t.app.services, hubFor(t.app.services));
  const { checkpointChunks, checkpointMs } = t.app.services.config.video;
  const rounds = Math.max(1, Math.round(chunks / checkpointChunks)),
    warmup = Math.max(1, Math.round(warmupChunks / checkpointChunks));
  const cadence = new CheckpointCadence(checkpointChunks, checkpointMs);
  const times = { with: [] as number[], without: [] as number[], stored: [] as number[] };
  const next = { [resumable]: 0, [plain]: 0 };
  const append = async (id: string, timed: boolean) => {
    const i = next[id]!++;
    const frame = {
      ...sample.frame,
      stream_info: { ...sample.frame.stream_info, frame_index: i, decoded_frames: i + 1 },
    };
    const store = id === resumable && cadence.due();
    const checkpoint =
      id !== resumable ? null : store ? { ...sample.checkpoint, frames: i + 1, frame_index: i } : KEEP_CHECKPOINT;
    const t0 = performance.now();
    const r = await archive.appendFrame(id, OWNER, frame, LEASE, checkpoint);
    const took = performance.now() - t0;
    if (r !== 'appended') throw new Error(`append ${i} on ${db}: ${r}`);
    if (id === resumable) cadence.archived(store);
    if (!timed) return;
    times[id === resumable ? 'with' : 'without'].push(took);
    if (store) times.stored.push(took);
  };
  for (let r = 0; r < warmup + rounds; r++) {
    const order = r % 2 === 0 ? [resumable, plain] : [plain, resumable];
    for (const id of order) for (let k = 0; k < checkpointChunks; k++) await append(id, r >= warmup);
  }
  const w = timesOf(times.with),
    wo = timesOf(times.without),
    stored = timesOf(times.stored);
  return {
    db,
    chunks: next[resumable]! + next[plain]!,
    with: w,
    without: wo,
    stored,
    ratio: w.mean / wo.mean,
    storedRatio: stored.p50 / wo.p50,
    every: checkpointChunks,
  };
}

export async function run({ quick, json, args }: { quick: boolean; json: boolean; args: string[] }): Promise<void> {
  // --every N: another cadence than the default (SIGHTFLOW_VIDEO_CHECKPOINT_CHUNKS), to see the trade-off.
  const at = args.indexOf('--every');
  const every = at >= 0 ? Number(args[at + 1]) : undefined;
  if (every !== undefined && !(Number.isInteger(every) && every >= 1 && every <= 100))
    throw new Error(`--every: expected a whole number from 1 to 100, got ${args[at + 1]}`);
  const env: Record<string, string> = {
    SIGHTFLOW_VIDEO_REAPER_MS: '3600000',
    ...(every !== undefined ? { SIGHTFLOW_VIDEO_CHECKPOINT_CHUNKS: String(every) } : {}),
  };
  if (skipWithoutEvalData({ json }, PETS, VTEST)) return;
  if (!hasPostgres()) {
    const reason = 'PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)';
    console.log(`skipped: ${reason}`);
    if (json) console.log(JSON.stringify({ skipped: true, reason }));
    return;
  }
  // Timed chunks per task whatever the cadence (measure() makes rounds of two blocks of it), after a warm-up.
  const chunks = quick ? 200 : 2000;
  const warmup = quick ? 20 : 100;
  const samples = await liveTracks();
  // Timed with the default tracker (sort); bytetrack's checkpoint also keeps the last frame's boxes.
  const sample = samples.sort;
  const size = (s: LiveTracks) => Buffer.byteLength(JSON.stringify(s.checkpoint), 'utf8');
  const bytes = size(sample),
    byteTrack = size(samples.bytetrack);
  const chunkBytes = Buffer.byteLength(JSON.stringify(sample.frame), 'utf8');
  const verdict = (b: number) => `${b} B (limit ${LIMIT_BYTES} B: ${b <= LIMIT_BYTES ? 'met' : 'NOT met'})`;
  console.log(
    `checkpoint (JSON) with ${sample.tracks} live tracks carrying colour signatures and a vtest.avi cursor: sort ` +
      `${verdict(bytes)}, bytetrack ${verdict(byteTrack)}; the frame chunk's delta of ` +
      `${sample.frame.delta.results[0]!.targets.length} targets ${chunkBytes} B`,
  );
  const n = quick ? 200 : 2000;
  const s0 = performance.now();
  for (let k = 0; k < n; k++) JSON.stringify(sample.checkpoint);
  console.log(
    `JSON.stringify of the checkpoint (part of each timed append): ${((performance.now() - s0) / n).toFixed(3)} ms`,
  );
  const results: DbResult[] = [];
  const pglite = await startVideoApp(env);
  try {
    results.push(await measure(pglite, 'pglite', sample, chunks, warmup));
  } finally {
    await pglite.close();
  }
  const pg = await startCluster();
  try {
    const app = await startVideoApp(env, { databaseUrl: pg.url });
    try {
      results.push(await measure(app, 'postgres', sample, chunks, warmup));
    } finally {
      await app.close();
    }
  } finally {
    stopCluster(pg.dir);
  }
  const f = (t: Times) => `mean ${t.mean.toFixed(3)} ms, p50 ${t.p50.toFixed(3)} ms, p95 ${t.p95.toFixed(3)} ms`;
  for (const r of results) {
    const verdict = quick ? 'judged on the full run' : r.ratio <= LIMIT_RATIO ? 'met' : 'NOT met';
    console.log(
      `${r.db}: ${r.chunks} chunks (a checkpoint stored with every ` +
        `${r.every}th chunk of the resumable task, in blocks of ${r.every}): its appends ${f(r.with)}; ` +
        `without checkpoints (peer) ${f(r.without)}; mean with/without ${r.ratio.toFixed(3)}x (limit ` +
        `${LIMIT_RATIO}x: ${verdict}); a chunk that stores one ${f(r.stored)}, p50 ${r.storedRatio.toFixed(3)}x`,
    );
  }
  if (json) {
    const worst = results.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    const r3 = (v: number) => Math.round(v * 1000) / 1000;
    console.log(
      JSON.stringify({
        suite: 'checkpoint',
        sightflow: {
          mean_ms: r3(worst.with.mean),
          p50_ms: r3(worst.with.p50),
          p95_ms: r3(worst.with.p95),
          db: worst.db,
          checkpoint_bytes: bytes,
          checkpoint_bytes_bytetrack: byteTrack,
        },
        peer: {
          name: 'appends without checkpoints',
          mean_ms: r3(worst.without.mean),
          p50_ms: r3(worst.without.p50),
          p95_ms: r3(worst.without.p95),
        },
        ratio: r3(worst.ratio),
        checkpoint_every_chunks: worst.every,
        databases: results.map((r) => ({
          db: r.db,
          with_mean_ms: r3(r.with.mean),
          with_p50_ms: r3(r.with.p50),
          with_p95_ms: r3(r.with.p95),
          without_mean_ms: r3(r.without.mean),
          without_p50_ms: r3(r.without.p50),
          without_p95_ms: r3(r.without.p95),
          ratio: r3(r.ratio),
          stored_p50_ms: r3(r.stored.p50),
          stored_ratio: r3(r.storedRatio),
        })),
      }),
    );
  }
}
