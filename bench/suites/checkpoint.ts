// `npm run bench -- checkpoint [--quick] [--json]`: what storing a file task's checkpoint with each archived
// chunk costs (#47: append time with checkpoints at most 1.1x of without, on PGlite and PostgreSQL; a checkpoint
// of at most 16 KB a chunk with 50 live tracks). Through the real StreamArchive of a video app on PGlite and on a
// throwaway PostgreSQL cluster, one claimed task appends frame chunks of 50 targets, alternately with a real
// file checkpoint (50 live tracks with colour signatures and a vtest.avi decoder cursor: bench/live-tracks.ts)
// and without one (null, what a task that cannot resume stores): the peer. The order of the pair swaps every
// round so both see the same archive size and machine load. Prints per database the append time p50/p95 with
// and without, the ratio of the p50s, and the checkpoint's bytes (its JSON, as the statement stores it).
// Figures: docs/video.md, "What a checkpoint costs".
import { execFileSync } from 'node:child_process';
import { startCluster, stopCluster } from '../../test/helpers/pg-cluster.js';
import { createTask, startVideoApp } from '../../test/helpers/video-tasks.js';
import type { TestApp } from '../../test/helpers/app.js';
import { TaskQueue } from '../../src/video/worker/queue.js';
import { StreamArchive } from '../../src/video/stream/stream-archive.js';
import { hubFor } from '../../src/video/stream/stream-hub.js';
import { skipWithoutEvalData } from '../../eval/dir.js';
import { liveTracks, PETS, VTEST, type LiveTracks } from '../live-tracks.js';

const LEASE = 60_000;
const OWNER = 'bench-worker';
const LIMIT_BYTES = 16 * 1024;
const LIMIT_RATIO = 1.1;

interface DbResult {
  db: 'pglite' | 'postgres';
  chunks: number;
  with: { p50: number; p95: number };
  without: { p50: number; p95: number };
  ratio: number;
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;

function hasPostgres(): boolean {
  try {
    execFileSync('sh', ['-c', 'ls /usr/lib/postgresql/*/bin/initdb'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** `rounds` pairs of appends to one claimed task, after `warmup` pairs that are not timed. */
async function measure(
  t: TestApp,
  db: DbResult['db'],
  sample: LiveTracks,
  rounds: number,
  warmup: number,
): Promise<DbResult> {
  const id = await createTask(t);
  const claimed = await new TaskQueue(t.app.services).claim(OWNER, LEASE);
  if (claimed?.id !== id) throw new Error(`claimed ${claimed?.id}, expected ${id}`);
  const archive = new StreamArchive(t.app.services, hubFor(t.app.services));
  const times = { with: [] as number[], without: [] as number[] };
  let i = 0;
  const append = async (cp: boolean, timed: boolean) => {
    const frame = {
      ...sample.frame,
      stream_info: { ...sample.frame.stream_info, frame_index: i, decoded_frames: i + 1 },
    };
    const checkpoint = cp ? { ...sample.checkpoint, frames: i + 1, frame_index: i } : null;
    i++;
    const t0 = performance.now();
    const r = await archive.appendFrame(id, OWNER, frame, LEASE, checkpoint);
    const took = performance.now() - t0;
    if (r !== 'appended') throw new Error(`append ${i} on ${db}: ${r}`);
    if (timed) times[cp ? 'with' : 'without'].push(took);
  };
  for (let r = 0; r < warmup + rounds; r++) {
    const first = r % 2 === 0;
    await append(first, r >= warmup);
    await append(!first, r >= warmup);
  }
  const w = { p50: pct(times.with, 0.5), p95: pct(times.with, 0.95) };
  const wo = { p50: pct(times.without, 0.5), p95: pct(times.without, 0.95) };
  return { db, chunks: i, with: w, without: wo, ratio: w.p50 / wo.p50 };
}

export async function run({ quick, json }: { quick: boolean; json: boolean; args: string[] }): Promise<void> {
  if (skipWithoutEvalData({ json }, PETS, VTEST)) return;
  if (!hasPostgres()) {
    const reason = 'PostgreSQL server binaries not found under /usr/lib/postgresql (apt-get install postgresql)';
    console.log(`skipped: ${reason}`);
    if (json) console.log(JSON.stringify({ skipped: true, reason }));
    return;
  }
  const rounds = quick ? 150 : 1500;
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
  const pglite = await startVideoApp({ SIGHTFLOW_VIDEO_REAPER_MS: '3600000' });
  try {
    results.push(await measure(pglite, 'pglite', sample, rounds, warmup));
  } finally {
    await pglite.close();
  }
  const pg = await startCluster();
  try {
    const app = await startVideoApp({ SIGHTFLOW_VIDEO_REAPER_MS: '3600000' }, { databaseUrl: pg.url });
    try {
      results.push(await measure(app, 'postgres', sample, rounds, warmup));
    } finally {
      await app.close();
    }
  } finally {
    stopCluster(pg.dir);
  }
  for (const r of results) {
    const verdict = quick ? 'judged on the full run' : r.ratio <= LIMIT_RATIO ? 'met' : 'NOT met';
    console.log(
      `${r.db}: ${rounds} rounds (${r.chunks} chunks): append with checkpoint p50 ${r.with.p50.toFixed(3)} ms ` +
        `p95 ${r.with.p95.toFixed(3)} ms; without (peer) p50 ${r.without.p50.toFixed(3)} ms p95 ` +
        `${r.without.p95.toFixed(3)} ms; with/without ${r.ratio.toFixed(3)}x (limit ${LIMIT_RATIO}x: ${verdict})`,
    );
  }
  if (json) {
    const worst = results.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    const r3 = (v: number) => Math.round(v * 1000) / 1000;
    console.log(
      JSON.stringify({
        suite: 'checkpoint',
        sightflow: {
          p50_ms: r3(worst.with.p50),
          p95_ms: r3(worst.with.p95),
          db: worst.db,
          checkpoint_bytes: bytes,
          checkpoint_bytes_bytetrack: byteTrack,
        },
        peer: { name: 'append without a checkpoint', p50_ms: r3(worst.without.p50), p95_ms: r3(worst.without.p95) },
        ratio: r3(worst.ratio),
        databases: results.map((r) => ({
          db: r.db,
          with_p50_ms: r3(r.with.p50),
          with_p95_ms: r3(r.with.p95),
          without_p50_ms: r3(r.without.p50),
          without_p95_ms: r3(r.without.p95),
          ratio: r3(r.ratio),
        })),
      }),
    );
  }
}
