// Test videos made with the ffmpeg CLI (lavfi testsrc/sine) in one temp dir per test process, removed
// at exit. Each recipe is generated once per process and its path memoised.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
let dir: string | undefined;
const made = new Map<string, Promise<string>>();

/** The per-process temp dir (created on first use, removed when the process exits). */
export function mediaDir(): string {
  if (!dir) {
    const d = mkdtempSync(join(tmpdir(), 'sightflow-media-'));
    dir = d;
    process.on('exit', () => rmSync(d, { recursive: true, force: true }));
  }
  return dir;
}

/** Runs `ffmpeg -v error -y <args> <dir>/<name>` once; resolves to the file's path. */
export function makeMedia(name: string, args: string[]): Promise<string> {
  let p = made.get(name);
  if (!p) {
    const out = join(mediaDir(), name);
    p = run('ffmpeg', ['-nostdin', '-v', 'error', '-y', ...args, out], { maxBuffer: 1 << 20 }).then(() => out);
    made.set(name, p);
  }
  return p;
}

const x264 = (gop: number) => [
  '-c:v',
  'libx264',
  '-preset',
  'ultrafast',
  '-g',
  String(gop),
  '-keyint_min',
  String(gop),
  '-sc_threshold',
  '0',
  '-pix_fmt',
  'yuv420p',
];
const testsrc = (size: string, rate: number, seconds: number) => [
  '-f',
  'lavfi',
  '-i',
  `testsrc=size=${size}:rate=${rate}:duration=${seconds}`,
];

/** 10 s, 25 fps (250 frames), 320x240 H.264 in MP4, a key frame every 50 frames. */
export const h264Clip = () => makeMedia('h264_10s.mp4', [...testsrc('320x240', 25, 10), ...x264(50)]);

/** The same clip with an AAC audio track. */
export const h264WithAudio = () =>
  makeMedia('h264_audio_10s.mp4', [
    ...testsrc('320x240', 25, 10),
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=10',
    ...x264(50),
    '-c:a',
    'aac',
    '-shortest',
  ]);

/** 10 s, 25 fps, H.264 in MPEG-TS: a format that streams without a length (pipes, chunked HTTP). */
export const h264Ts = () => makeMedia('h264_10s.ts', [...testsrc('320x240', 25, 10), ...x264(50), '-f', 'mpegts']);

/** 4 s, 25 fps (100 frames), 160x120 VP9 in WebM. */
export const vp9Clip = () =>
  makeMedia('vp9_4s.webm', [
    ...testsrc('160x120', 25, 4),
    '-c:v',
    'libvpx-vp9',
    '-deadline',
    'realtime',
    '-cpu-used',
    '8',
    '-g',
    '25',
  ]);

/**
 * Variable frame rate: 100 frames, the first 50 at 25 fps (0..1.96 s), the other 50 at 10 fps
 * (2.0..6.9 s). At 1 fps the sampled indices are 0, 25, 50, 60, 70, 80, 90.
 */
export const vfrClip = () =>
  makeMedia('vfr.mp4', [
    ...testsrc('160x120', 25, 4),
    '-vf',
    "settb=1/1000,setpts='if(lt(N,50),N/25,2+(N-50)/10)/TB'",
    '-fps_mode',
    'vfr',
    ...x264(250),
  ]);

/** 2 s of sine in AAC: no video stream. */
export const audioOnly = () =>
  makeMedia('audio.m4a', ['-f', 'lavfi', '-i', 'sine=frequency=440:duration=2', '-c:a', 'aac']);

/** A zero-byte .mp4. */
export function emptyFile(): string {
  const path = join(mediaDir(), 'empty.mp4');
  writeFileSync(path, '');
  return path;
}

/** 1920x1080 25 fps H.264, `seconds` long. */
export const fullHdClip = (seconds = 6) =>
  makeMedia(`h264_1080p_${seconds}s.mp4`, [
    ...testsrc('1920x1080', 25, seconds),
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    '50',
    '-pix_fmt',
    'yuv420p',
  ]);

/** The 10 s 25 fps clip as H.264 with B-frames in AVI: packets carry no presentation times (like vtest.avi). */
export const h264Avi = () => makeMedia('h264_10s.avi', [...testsrc('320x240', 25, 10), ...x264(50), '-bf', '3']);

/** The 10 s 25 fps clip with B-frames (x264 veryfast: 3 B-frames, pyramid), as most real encodes have. */
export const h264BFrames = () =>
  makeMedia('h264_bframes_10s.mp4', [
    ...testsrc('320x240', 25, 10),
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-bf',
    '3',
    '-g',
    '50',
    '-pix_fmt',
    'yuv420p',
  ]);
