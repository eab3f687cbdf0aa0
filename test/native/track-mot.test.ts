// Acceptance: ground-truth boxes of real pedestrian sequences fed as detections are tracked with
// MOTA >= 0.95 and IDF1 >= 0.9 (the same run as `npm run eval -- track --detections gt`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseMotFile } from '../../src/video/mot-metrics.js';
import { trackGroundTruth } from '../../eval/tasks/track.js';

const root = process.env.SIGHTFLOW_EVAL_DIR ?? resolve(fileURLToPath(new URL('../..', import.meta.url)), '..', 'shared', 'eval');

for (const name of ['TUD-Campus', 'PETS09-S2L1']) {
  test(`${name}: ground truth as detections gives MOTA >= 0.95 and IDF1 >= 0.9`, () => {
    const path = resolve(root, 'tracking', name, 'gt', 'gt.txt');
    assert.ok(existsSync(path), `evaluation data missing: ${path} (set SIGHTFLOW_EVAL_DIR)`);
    const m = trackGroundTruth(parseMotFile(readFileSync(path, 'utf8')));
    assert.ok(m.mota >= 0.95, `MOTA ${m.mota}`);
    assert.ok(m.idf1 >= 0.9, `IDF1 ${m.idf1}`);
    assert.ok(m.gtCount > 300);
  });
}
