// Clips for the moment index tests: plain colour scenes (lavfi), so which scene a frame belongs to is known
// without any model, cut where the colour changes.
import sharp from 'sharp';
import { makeMedia } from './media.js';

/** `scenes` of [colour, seconds] at 10 fps, 320x240, a key frame a second. */
export function scenesClip(name: string, scenes: Array<[string, number]>): Promise<string> {
  const inputs = scenes.flatMap(([c, s]) => ['-f', 'lavfi', '-i', `color=c=${c}:s=320x240:r=10:d=${s}`]);
  const concat = `${scenes.map((_, i) => `[${i}:v]`).join('')}concat=n=${scenes.length}:v=1[v]`;
  return makeMedia(`scenes_${name}.mp4`, [
    ...inputs,
    '-filter_complex',
    concat,
    '-map',
    '[v]',
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-g',
    '10',
    '-pix_fmt',
    'yuv420p',
  ]);
}

/** A solid-colour PNG (a search query for one scene), base64. */
export async function colourPng(rgb: [number, number, number]): Promise<string> {
  const png = await sharp({
    create: { width: 320, height: 240, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } },
  })
    .png()
    .toBuffer();
  return png.toString('base64');
}
