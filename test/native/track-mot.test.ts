// Acceptance: ground-truth boxes of real pedestrian sequences fed as detections are tracked with
// MOTA >= 0.95 and IDF1 >= 0.9 (the same run as `npm run eval -- track --detections gt`).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { parseMotFile } from '../../eval/lib/mot-metrics.js';
import { evalDataSkip, evalDir } from '../../eval/dir.js';
import { trackGroundTruth } from '../../eval/tasks/track.js';

for (const name of ['TUD-Campus', 'PETS09-S2L1']) {
  const gt = `tracking/${name}/gt/gt.txt`;
  test(`${name}: ground truth as detections gives MOTA >= 0.95 and IDF1 >= 0.9`, { skip: evalDataSkip(gt) }, () => {
    const path = evalDir(gt);
    const m = trackGroundTruth(parseMotFile(readFileSync(path, 'utf8')));
    assert.ok(m.mota >= 0.95, `MOTA ${m.mota}`);
    assert.ok(m.idf1 >= 0.9, `IDF1 ${m.idf1}`);
    assert.ok(m.gtCount > 300);
  });
}
