// The evaluation data as the tests name it, on eval/dir.ts. Only a test that reads the data imports this
// file (or eval/dir.ts itself): the run without the data (scripts/test.d/85-no-eval-data.sh) picks its test
// files by that import, so a shared helper that imported it would drag every user of the helper along.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { evalDataSkip, evalDir, evalRoot } from '../../eval/dir.js';

/** A path in the evaluation data, whether or not it is there. */
export function evalData(...parts: string[]): string {
  return join(evalRoot(), ...parts);
}

/** The COCO photos and YOLO labels (detection_coco128). */
export const cocoDir = (): string => evalDir('detection_coco128');

/** node:test's `skip` option for a test that reads cocoDir(): the reason when the photos are absent. */
export const cocoSkip = evalDataSkip('detection_coco128');

export const TUD_CAMPUS = () => evalData('tracking', 'TUD-Campus', 'TUD-Campus.mp4');

/**
 * A COCO photo (detection_coco128) where the built-in detector finds a car (0.54) and a train (0.60), or
 * undefined when the data is absent.
 */
export function carPhoto(): string | undefined {
  const p = evalData('detection_coco128', 'images', '000000000071.jpg');
  return existsSync(p) ? p : undefined;
}
