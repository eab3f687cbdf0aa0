// What appending live cameras' frame chunks to the stream archive costs the database's client, by statement
// form: one statement a frame (the archive's appendFrame) and one for the frames of several cameras
// (appendFrames, as the archive sends the frames that waited together). The embedded database runs on the serving
// process's main thread, so for it this CPU is event-loop time a camera's frame costs (docs/capacity.md, "The
// embedded database's cost"). Forms alternate round by round on one fresh database. Run by hand:
//   node --import tsx bench/frame-append-cost.ts [--cameras 50] [--batch 4,16,50] [--rounds 3] [--frames 400]
//     [--checkpoint]
//   --checkpoint: each frame stores a live camera's checkpoint, as a live task's every chunk does.
//   DATABASE_URL=postgres://... the same against PostgreSQL (the client's CPU, this process's only).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue } from '../eval/lib/model-choice.js';
import { loadConfig } from '../src/config/index.js';
import { openMigratedDb } from '../src/migrated-db.js';
import { sql as archiveSql } from '../src/video/stream/stream.sql.js';
import { sql } from './frame-append-cost.sql.js';

const args = process.argv.slice(2);
const cameras = Number(argValue(args, 'cameras') ?? 50);
const batches = (argValue(args, 'batch') ?? '4,16,50').split(',').map(Number);
const rounds = Number(argValue(args, 'rounds') ?? 3);
const frames = Number(argValue(args, 'frames') ?? 400);
const withCheckpoint = args.includes('--checkpoint');
const dir = mkdtempSync(join(tmpdir(), 'sightflow-frame-append-'));
const db = await openMigratedDb(loadConfig(process.env, { dataDir: dir }));
const OWNER = 'bench-worker';
const LEASE_MS = 30_000;
// A frame chunk of a camera with eight people tracked, and its stream_info.
const info = JSON.stringify({
  frame_index: 1234,
  pts_ms: 49360,
  received_at_ms: Date.now(),
  processed_fps: 5,
  dropped_frames: 3,
  width: 1920,
  height: 1080,
});
const checkpoint = (i: number) =>
  withCheckpoint
    ? JSON.stringify({
        v: 2,
        frames: i + 1,
        frame_index: 5 * i,
        stream_time_ms: 200 * i,
        received_at_ms: Date.now(),
        decoded_frames: 5 * i + 1,
        dropped_frames: 4 * i,
        reconnects: 0,
        elapsed_ms: 200 * i + 13,
        next_track_id: 42,
        live: true,
      })
    : '';
const objects = Array.from({ length: 8 }, (_, i) => ({
  track_id: i + 1,
  label: 'person',
  score: 0.8123,
  box: { x: 100 * i, y: 200, width: 80, height: 190 },
  state: 'tracked',
}));
try {
  const project = `p_bench_${process.pid}`;
  await db.query(sql.project, [project, 'frame append cost']);
  const tails = new Map<string, { end: number; chunks: number }>();
  const ids = Array.from({ length: cameras }, (_, i) => `vt_bench_${i}`);
  for (const id of ids) {
    await db.query(sql.task, [id, project, OWNER]);
    tails.set(id, { end: 0, chunks: 0 });
  }
  const chunk = (id: string, seq: number) =>
    `id: ${id}-${seq}\ndata: ${JSON.stringify({ id: `${id}-${seq}`, object: 'mm.pipeline.chunk', stream_info: JSON.parse(info), delta: { objects }, finish_reason: null })}\n\n`;
  /** One frame of `id` in one statement. */
  const one = async (id: string) => {
    const t = tails.get(id)!;
    const bytes = Buffer.from(chunk(id, t.chunks));
    const rows = await db.query(archiveSql.appendFrame, [
      id,
      bytes.length,
      info,
      LEASE_MS,
      checkpoint(t.chunks),
      t.end,
      OWNER,
      bytes,
      t.chunks,
    ]);
    if (rows.length !== 1) throw new Error(`${id}: not appended`);
    tails.set(id, { end: t.end + bytes.length, chunks: t.chunks + 1 });
  };
  /** One frame of each of `group` in one statement. */
  const many = async (group: string[]) => {
    const cols: unknown[][] = Array.from({ length: 9 }, () => []);
    const next: Array<[string, { end: number; chunks: number }]> = [];
    for (const id of group) {
      const t = tails.get(id)!;
      const text = chunk(id, t.chunks);
      const n = Buffer.byteLength(text);
      for (const [c, v] of [id, n, info, LEASE_MS, checkpoint(t.chunks), t.end, OWNER, text, t.chunks].entries())
        cols[c]!.push(v);
      next.push([id, { end: t.end + n, chunks: t.chunks + 1 }]);
    }
    const rows = await db.query(archiveSql.appendFrames, cols);
    if (rows.length !== group.length) throw new Error(`${group.length - rows.length} frame(s) not appended`);
    for (const [id, t] of next) tails.set(id, t);
  };
  const forms: Array<[string, (i: number) => Promise<number>]> = [
    ['one statement a frame', (i) => one(ids[i % cameras]!).then(() => 1)],
    ...batches.map(
      (b) =>
        [
          `${b} frames a statement`,
          (i: number) => {
            const start = (i * b) % cameras;
            const group = Array.from({ length: Math.min(b, cameras) }, (_, k) => ids[(start + k) % cameras]!);
            return many(group).then(() => group.length);
          },
        ] as [string, (i: number) => Promise<number>],
    ),
  ];
  const best = new Map<string, number>();
  for (let round = 0; round < rounds; round++)
    for (const [name, form] of forms) {
      for (let i = 0; i < 10; i++) await form(i);
      let done = 0;
      const t0 = process.cpuUsage();
      for (let i = 0; done < frames; i++) done += await form(i);
      const d = process.cpuUsage(t0);
      const ms = (d.user + d.system) / 1000 / done;
      best.set(name, Math.min(best.get(name) ?? Infinity, ms));
      console.log(`round ${round + 1}  ${name.padEnd(24)}  ${ms.toFixed(3)} ms a frame`);
    }
  console.log(
    JSON.stringify({
      database: db.kind,
      cameras,
      checkpoint: withCheckpoint,
      rounds,
      frames,
      result: forms.map(([name]) => ({ form: name, ms_per_frame: +best.get(name)!.toFixed(3) })),
    }),
  );
} finally {
  await db.close();
  rmSync(dir, { recursive: true, force: true });
}
