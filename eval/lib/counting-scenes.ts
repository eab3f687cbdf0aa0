// The scenes `npm run eval -- counting` counts people in, with their ground-truth tracks in source pixels:
//  - the tracking sequences as eval/tasks/video-track.ts finds them (PETS09-S2L1 frames 1-300 at 768x576,
//    its whole 795 frames at 480x360, TUD-Campus at its full 640x480, where people are 130-310 px tall and
//    walk in a group that crosses itself: the close-range crowded case as the data has it);
//  - close-range crowded cases made from PETS09-S2L1's frames: a 320x240 window over its busiest ground,
//    enlarged twice to 640x480 (ffmpeg, lanczos), so its people (59-153 px tall in the original) are about
//    120-300 px tall, as at a shop door; their gt boxes moved and scaled the same way and clipped to the
//    window (a box less than half inside it is dropped: the detector sees no person there either).
// Made videos go to a cache folder beside the system's temp dir (made once, reused, never in the repository).
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseMotFile, type MotRow } from './mot-metrics.js';
import { probeWidth, seqInfo, sequences, type Sequence } from '../tasks/video-track.js';

const run$ = promisify(execFile);

export interface Scene {
  name: string;
  /** The video file (made on first use for a crop). */
  video: () => Promise<string>;
  /** Ground-truth rows (evaluated targets only) in the video's pixels; frame 1 is the video's frame 0. */
  gt: () => Promise<MotRow[]>;
  note?: string;
  /** Close-range: people over 100 px tall. */
  close: boolean;
}

/** Windows over PETS09-S2L1 (768x576) where most of its people walk, enlarged by SCALE. */
const CROPS = [
  { name: 'PETS09-close-centre', x: 256, y: 150, w: 320, h: 240 },
  { name: 'PETS09-close-right', x: 448, y: 110, w: 320, h: 240 },
] as const;
const SCALE = 2;

export function cacheDir(): string {
  const dir = join(tmpdir(), 'sightflow-eval-cache', 'counting');
  mkdirSync(dir, { recursive: true });
  return dir;
}

function targets(path: string): MotRow[] {
  return parseMotFile(readFileSync(path, 'utf8')).filter((r) => r.conf !== 0);
}

function fromSequence(seq: Sequence): Scene {
  return {
    name: seq.name,
    video: seq.video,
    note: seq.note,
    close: seq.name === 'TUD-Campus',
    async gt() {
      let scale = seq.scale;
      if (Number.isNaN(scale))
        scale = (await probeWidth(await seq.video())) / Number(seqInfo(join(seq.gtPath, '..', '..')).imWidth);
      return targets(seq.gtPath).map((r) =>
        scale === 1 ? r : { ...r, x: r.x * scale, y: r.y * scale, w: r.w * scale, h: r.h * scale },
      );
    },
  };
}

/** A crop of a sequence's JPEG frames, enlarged, and its gt the same way. */
function crop(root: string, c: (typeof CROPS)[number]): Scene {
  const dir = join(root, 'PETS09-S2L1');
  const info = seqInfo(dir);
  return {
    name: c.name,
    close: true,
    note: `PETS09-S2L1 frames 1-300, window ${c.w}x${c.h}+${c.x}+${c.y} enlarged ${SCALE}x`,
    async video() {
      const path = join(cacheDir(), `${c.name}-${c.w}x${c.h}+${c.x}+${c.y}x${SCALE}.mp4`);
      if (existsSync(path)) return path;
      const part = `${path}.${process.pid}.part.mp4`;
      await run$('ffmpeg', [
        '-nostdin',
        '-v',
        'error',
        '-y',
        '-framerate',
        info.frameRate ?? '7',
        '-i',
        join(dir, 'img1', `%06d${info.imExt ?? '.jpg'}`),
        '-vf',
        `crop=${c.w}:${c.h}:${c.x}:${c.y},scale=${c.w * SCALE}:${c.h * SCALE}:flags=lanczos`,
        '-c:v',
        'libx264',
        '-preset',
        'veryfast',
        '-crf',
        '12',
        '-pix_fmt',
        'yuv420p',
        part,
      ]);
      renameSync(part, path);
      return path;
    },
    async gt() {
      const frames = readdirSync(join(dir, 'img1')).length;
      const out: MotRow[] = [];
      for (const r of targets(join(dir, 'gt', 'gt.txt'))) {
        if (r.frame > frames) continue;
        const x1 = Math.max(r.x, c.x),
          y1 = Math.max(r.y, c.y),
          x2 = Math.min(r.x + r.w, c.x + c.w),
          y2 = Math.min(r.y + r.h, c.y + c.h);
        if (x2 <= x1 || y2 <= y1 || (x2 - x1) * (y2 - y1) < 0.5 * r.w * r.h) continue;
        out.push({ ...r, x: (x1 - c.x) * SCALE, y: (y1 - c.y) * SCALE, w: (x2 - x1) * SCALE, h: (y2 - y1) * SCALE });
      }
      return out;
    },
  };
}

/** Every scene: the tracking sequences in name order, then the close-range crops (when PETS09-S2L1's frames are there). */
export function countingScenes(root: string, tmp: string): Scene[] {
  const out = sequences(root, tmp).map(fromSequence);
  if (existsSync(join(root, 'PETS09-S2L1', 'img1'))) for (const c of CROPS) out.push(crop(root, c));
  return out;
}
