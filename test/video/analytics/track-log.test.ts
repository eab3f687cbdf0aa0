// The compact track log (track-log.ts) gives back exactly the frames written, across blocks and classes, so a
// recount from it counts what the task counted; the heatmap grid (heatmap.ts) is hot where points are, red at
// the hottest, transparent beyond the blur's reach, and its PNG decodes at the grid's size.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import type { AnalyticsFrame } from '../../../src/video/analytics/engine.js';
import { BLOCK_FRAMES, readTrackBlock, TrackLogWriter } from '../../../src/video/analytics/track-log.js';
import { HeatmapGrid, heatmapSize } from '../../../src/video/analytics/heatmap.js';
import { engineFor, rng } from './helpers.js';

test('the track log gives back every frame exactly, in blocks; counting from it equals counting the frames', () => {
  const r = rng(5);
  const classes = ['person', 'car', 'bus stop sign ☂'];
  const frames: AnalyticsFrame[] = Array.from({ length: BLOCK_FRAMES * 2 + 17 }, (_, f) => ({
    t_ms: f * 100 + 0.1 + 0.2,
    frame_index: f * 3,
    width: 640,
    height: 480,
    tracks: Array.from({ length: f % 7 }, (_, k) => {
      const x = r() * 600,
        y = r() * 400;
      return {
        track_id: 1 + ((f + k) % 11) + 2 ** 40,
        class: classes[(f + k) % 3]!,
        box: [x, y, x + 20 + r(), y + 40 + r() / 3] as const,
      };
    }),
  }));
  const w = new TrackLogWriter();
  const blocks = [];
  for (const f of frames) {
    w.add(f);
    if (w.full) blocks.push(w.take()!);
  }
  blocks.push(w.take()!);
  assert.equal(w.take(), null);
  assert.deepEqual(
    blocks.map((b) => b.frames),
    [BLOCK_FRAMES, BLOCK_FRAMES, 17],
  );
  assert.equal(w.written, frames.length);
  const back: AnalyticsFrame[] = [];
  for (const b of blocks) readTrackBlock(b.classes, b.bytes, 640, 480, (f) => back.push(f));
  assert.deepEqual(back, frames);

  const rules = {
    lines: [
      {
        id: 'mid',
        points: [
          [320, 0],
          [320, 480],
        ],
      },
    ],
    zones: [
      {
        id: 'top',
        polygon: [
          [0, 0],
          [640, 0],
          [640, 200],
          [0, 200],
        ],
      },
    ],
  };
  const direct = engineFor(rules),
    logged = engineFor(rules);
  for (const f of frames) direct.process(f);
  for (const f of back) logged.process(f);
  assert.deepEqual(logged.summary(), direct.summary());
});

test('the heatmap grid: hot at the points, red at the hottest, transparent beyond 3 blur radii; the PNG decodes', async () => {
  assert.deepEqual(heatmapSize(1920, 1080), { width: 1280, height: 720 });
  assert.deepEqual(heatmapSize(640, 480, 320), { width: 320, height: 240 });
  assert.deepEqual(heatmapSize(100, 100_000), { width: 2, height: 1920 }, 'a very tall inferred frame is capped');
  const g = new HeatmapGrid(256, 128, 512);
  for (let i = 0; i < 10; i++) g.add(100, 100); // image (50, 50), ten times
  g.add(400, 200); // image (200, 100), once
  g.add(-50, 999); // off the frame: the nearest edge, (0, 127)
  assert.equal(g.points, 12);
  const px = g.rgba();
  const at = (x: number, y: number) => [...px.subarray((y * 256 + x) * 4, (y * 256 + x) * 4 + 4)];
  assert.deepEqual(at(50, 50), [255, 0, 0, 255]);
  assert.ok(at(200, 100)[3]! >= 64 && at(200, 100)[2]! > at(200, 100)[0]!, `a single point is cooler: ${at(200, 100)}`);
  assert.ok(at(0, 127)[3]! > 0);
  const reach = 3 * g.radius;
  const near = (x: number, y: number) =>
    [
      [50, 50],
      [200, 100],
      [0, 127],
    ].some(([cx, cy]) => Math.abs(x - cx!) <= reach && Math.abs(y - cy!) <= reach);
  for (let y = 0; y < 128; y++)
    for (let x = 0; x < 256; x++) assert.equal(at(x, y)[3]! > 0, near(x, y), `(${x}, ${y})`);
  const meta = await sharp(await g.png()).metadata();
  assert.deepEqual([meta.format, meta.width, meta.height, meta.channels], ['png', 256, 128, 4]);
});
