// The body the C clients post to /v1/vision/detect in the HTTP benches: a 640x480 JPEG (quality 90) of a
// photo as a data URI, written to a file in `dir` (post-clients.c reads its body from a file).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { projectRoot } from '../../src/base/paths.js';

export async function writeDetectBody(
  dir: string,
  photo = join(projectRoot, 'assets', 'astronaut.jpg'),
  /** More of the body (a model, a threshold). */
  extra: Record<string, unknown> = {},
): Promise<string> {
  const jpeg = await sharp(photo).resize(640, 480, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
  const file = join(dir, 'body.json');
  writeFileSync(file, JSON.stringify({ image_base64: `data:image/jpeg;base64,${jpeg.toString('base64')}`, ...extra }));
  return file;
}
