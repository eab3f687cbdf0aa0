// The quality and size claims for real exports, through the evaluation tool users run
// (`npm run eval -- detect --model <id>`): YOLOv8n int8 scores mAP@0.5 >= 0.60 on the COCO dev photos
// (the built-in CenterNet: 0.51), and YOLO11n exported at 320 runs at 320 with nothing but its file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { BYO_MODELS, byoModelsSkip } from '../../eval/byo-dir.js';
import { cocoSkip } from '../helpers/eval-data.js';
import { projectRoot } from '../../src/base/paths.js';

const root = projectRoot;
const skip = byoModelsSkip(BYO_MODELS['yolov8n-int8'], BYO_MODELS['yolo11n-int8-320']) || cocoSkip;

function evalDetect(model: string): {
  lines: string[];
  result: { model: string; images: number; sightflow: { map50: number; map50_95: number } };
} {
  const out = execFileSync(process.execPath, ['--import', 'tsx', 'eval/run.ts', 'detect', '--model', model, '--json'], {
    cwd: root,
    encoding: 'utf8',
  });
  const lines = out.trim().split('\n');
  return { lines, result: JSON.parse(lines.at(-1)!) };
}

test('yolov8n-int8: mAP@0.5 >= 0.60 on every dev photo', { skip }, () => {
  const { result } = evalDetect('yolov8n-int8');
  assert.equal(result.model, 'yolov8n-int8');
  assert.ok(result.images >= 64, `ran on ${result.images} images`);
  assert.ok(result.sightflow.map50 >= 0.6, `mAP@0.5 ${result.sightflow.map50}`);
});

test('yolo11n-int8-320 runs at its own size, read from the file alone', { skip }, () => {
  const { lines, result } = evalDetect('yolo11n-int8-320');
  assert.match(lines.join('\n'), /input 320x320/);
  assert.ok(result.sightflow.map50 > 0.4, `mAP@0.5 ${result.sightflow.map50}`);
});
