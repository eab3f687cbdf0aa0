// Test clips for the video pipeline, made with the ffmpeg CLI into the per-process temp dir of media.ts
// (each generated once per process, removed at exit).
import { join } from 'node:path';
import { writeFileSync, readFileSync } from 'node:fs';
import { makeMedia, mediaDir } from './media.js';

export { h264Clip } from './media.js';

/** `seconds` of a still image at 5 fps (H.264, every frame a copy of the photo). */
export const stillClip = (image: string, seconds = 2) =>
  makeMedia(`still_${seconds}s.mp4`, [
    '-loop',
    '1',
    '-framerate',
    '5',
    '-t',
    String(seconds),
    '-i',
    image,
    '-vf',
    'scale=trunc(iw/2)*2:trunc(ih/2)*2',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '16',
    '-g',
    '1',
    '-pix_fmt',
    'yuv420p',
  ]);

/** A 30 s 25 fps 320x240 clip (750 frames): long enough to cancel in the middle of. */
export const longClip = () =>
  makeMedia('testsrc_30s.mp4', [
    '-f',
    'lavfi',
    '-i',
    'testsrc=size=320x240:rate=25:duration=30',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    '50',
    '-pix_fmt',
    'yuv420p',
  ]);

/** A file that starts like an MP4 (a real clip's first 4 KiB) and then is garbage: a corrupt upload. */
export async function corruptClip(): Promise<string> {
  const good = readFileSync(
    await makeMedia('corrupt_src.mp4', [
      '-f',
      'lavfi',
      '-i',
      'testsrc=size=320x240:rate=25:duration=2',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-pix_fmt',
      'yuv420p',
    ]),
  );
  const path = join(mediaDir(), 'corrupt.mp4');
  const bad = Buffer.alloc(64 * 1024);
  for (let i = 0; i < bad.length; i++) bad[i] = (i * 7919 + 13) & 0xff;
  writeFileSync(path, Buffer.concat([good.subarray(0, 4096), bad]));
  return path;
}

/** Random bytes with a .mp4 name: not a video at all. */
export function garbageFile(): string {
  const path = join(mediaDir(), 'garbage.mp4');
  const bad = Buffer.alloc(32 * 1024);
  for (let i = 0; i < bad.length; i++) bad[i] = (i * 2654435761) >>> 24;
  writeFileSync(path, bad);
  return path;
}

/** 2 s at 5 fps of black text ("HELLO VIDEO 42") on white, 640x240 (drawtext with fontconfig's default font). */
export const textClip = () =>
  makeMedia('text_2s.mp4', [
    '-f',
    'lavfi',
    '-i',
    'color=c=white:s=640x240:r=5:d=2',
    '-vf',
    "drawtext=text='HELLO VIDEO 42':fontsize=64:fontcolor=black:x=60:y=90",
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-pix_fmt',
    'yuv420p',
  ]);
