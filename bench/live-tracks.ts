// A file task's checkpoint built from real parts, for the checkpoint bench (bench/suites/checkpoint.ts): 50
// walkers, each one of the PETS09-S2L1 people (ground-truth boxes) from its own start frame, tiled apart so each
// keeps one track, with colour signatures from the real frames' pixels, through the video pipeline's
// TargetTracker (as test/native/tracker-snapshot-size.test.ts builds them), and the decoder's cursor of a real
// vtest.avi frame. The checkpoint has the shape the worker stores (worker.ts checkpoint(), a detect step with
// tracking: FramePipeline.snapshot()), and the frame chunk the 50 targets of the last step.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodeJpeg } from '../src/native/image.js';
import { colourSignature, SIGNATURE_DIM } from '../src/media/colour-signature.js';
import { ContinuedTrackIds } from '../src/video/pipeline/continued-track-ids.js';
import { TargetTracker, TRACKER_DEFAULTS, type Candidate } from '../src/video/pipeline/target-tracker.js';
import { VideoDecoder } from '../src/video/source/decoder.js';
import { CHECKPOINT_VERSION, type FrameOutput, type TaskCheckpoint } from '../src/video/task-contract.js';
import { evalDir } from '../eval/dir.js';

export const PETS = join('tracking', 'PETS09-S2L1');
export const VTEST = 'tracking/vtest_PETS09-S2L1_full/vtest.avi';

const WALKERS = 50;
const STEPS = 60;

export interface LiveTracks {
  checkpoint: TaskCheckpoint;
  frame: FrameOutput;
  /** Live tracks in the tracker after the last step. */
  tracks: number;
}

/** Per tracker type (sort, the default, and bytetrack), the checkpoint and the frame chunk after STEPS frames
 * of 50 tracked walkers. */
export async function liveTracks(): Promise<Record<'sort' | 'bytetrack', LiveTracks>> {
  const dir = evalDir(PETS);
  const gt = readFileSync(join(dir, 'gt', 'gt.txt'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(',').map(Number));
  const frames = 300;
  const boxOf = new Map<string, number[]>();
  const life = new Map<number, [number, number]>();
  for (const [f, id, x, y, w, h] of gt) {
    if (f! > frames) continue;
    boxOf.set(`${id}:${f}`, [x!, y!, x! + w!, y! + h!]);
    const l = life.get(id!);
    life.set(id!, l ? [Math.min(l[0], f!), Math.max(l[1], f!)] : [f!, f!]);
  }
  const people = [...life].filter(([, [a, b]]) => b - a >= STEPS + 40).map(([id, [a, b]]) => ({ id, a, b }));
  if (people.length < 5) throw new Error('PETS09-S2L1: too few long-lived people');
  const walkers = Array.from({ length: WALKERS }, (_, j) => {
    const p = people[j % people.length]!;
    const start = p.a + ((Math.floor(j / people.length) * 13) % (p.b - p.a - STEPS));
    return { id: p.id, start, dx: 800 * (j % 10), dy: 600 * Math.floor(j / 10) };
  });
  const sigs = new Map<string, Float32Array>();
  for (let f = 1; f <= frames; f++) {
    const needs = walkers.flatMap((w, j) => {
      const s = f - w.start;
      return s >= 0 && s < STEPS && boxOf.has(`${w.id}:${f}`) ? [{ j, s, box: boxOf.get(`${w.id}:${f}`)! }] : [];
    });
    if (needs.length === 0) continue;
    const image = await decodeJpeg(readFileSync(join(dir, 'img1', `${String(f).padStart(6, '0')}.jpg`)), 1e7);
    if (!image) throw new Error(`PETS09-S2L1 frame ${f} did not decode`);
    for (const { j, s, box } of needs) {
      const sig = new Float32Array(SIGNATURE_DIM);
      colourSignature(image, box, sig);
      sigs.set(`${j}:${s}`, sig);
    }
  }
  const decoder = await VideoDecoder.open(join(evalDir(), VTEST), {
    sampling: { mode: 'fps', value: 5 },
    maxFrames: 1e9,
    threads: 2,
  });
  let cursor: unknown = null;
  let index = 0;
  for await (const f of decoder.frames(4, true)) {
    cursor = f.cursor;
    index = f.index;
    if (f.index >= STEPS * 5) break;
  }
  await decoder.close();
  if (!cursor) throw new Error('vtest.avi gave no cursor');
  const track = (type: 'sort' | 'bytetrack') => tracked(type, walkers, boxOf, sigs, cursor, index);
  return { sort: track('sort'), bytetrack: track('bytetrack') };
}

function tracked(
  type: 'sort' | 'bytetrack',
  walkers: Array<{ id: number; start: number; dx: number; dy: number }>,
  boxOf: Map<string, number[]>,
  sigs: Map<string, Float32Array>,
  cursor: unknown,
  index: number,
): LiveTracks {
  const ids = new ContinuedTrackIds();
  const tracker = new TargetTracker({ ...TRACKER_DEFAULTS, type }, 0, ids, 0.5);
  let last: Candidate[] = [];
  for (let s = 0; s < STEPS; s++) {
    last = [];
    walkers.forEach((w, j) => {
      const box = boxOf.get(`${w.id}:${w.start + s}`);
      const signature = sigs.get(`${j}:${s}`);
      if (!box || !signature) return;
      const b = [box[0]! + w.dx, box[1]! + w.dy, box[2]! + w.dx, box[3]! + w.dy] as const;
      last.push({ box: b, score: 0.9, cls: 'person', signature });
    });
    tracker.assign(last, s);
  }
  const info = {
    frame_index: index,
    total_frames: 795,
    decoded_frames: index + 1,
    dropped_frames: 0,
    fps: 5,
    elapsed_ms: 12_345,
    stream_time_ms: index * 40,
    received_at_ms: Date.now(),
  };
  const frame: FrameOutput = {
    stream_info: info,
    delta: {
      results: [
        {
          index: 0,
          targets: last.map((c, i) => ({
            track_id: i + 1,
            class: 'person',
            confidence: 0.8731,
            roi: { left: c.box[0], top: c.box[1], width: c.box[2] - c.box[0], height: c.box[3] - c.box[1] },
          })),
        },
      ],
    },
  };
  const checkpoint: TaskCheckpoint = {
    v: CHECKPOINT_VERSION,
    frames: STEPS,
    frame_index: index,
    stream_time_ms: info.stream_time_ms,
    received_at_ms: info.received_at_ms,
    decoded_frames: info.decoded_frames,
    dropped_frames: 0,
    reconnects: 0,
    elapsed_ms: info.elapsed_ms,
    next_track_id: ids.next,
    live: false,
    decoder: cursor,
    pipeline: { v: 1, steps: ['detect'], ids: ids.snapshot(), runs: [tracker.snapshot()] },
  };
  return { checkpoint, frame, tracks: last.length };
}
