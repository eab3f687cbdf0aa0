// People standing on counting lines in a real video count nothing: PETS09-S2L1's frame 146 (from the
// evaluation data), a window over its people enlarged twice (people 120-200 px tall, as at a shop door), held
// for 10 s at 10 fps with sensor noise and a slight camera shake, through the task API with the real
// detector and tracker. Lines run through each standing person's feet, across and along their box; the
// detector's jitter moves the feet across them (a counter that counts every change of side counts them), the
// default rules count 0.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { makeMedia } from '../helpers/media.js';
import { evalData } from '../helpers/eval-data.js';
import { evalDataSkip } from '../../eval/dir.js';
import { parseMotFile } from '../../eval/lib/mot-metrics.js';
import { chunksOf, readStream, waitStatus } from '../helpers/video-tasks.js';
import { AnalyticsEngine, type AnalyticsFrame } from '../../src/video/analytics/engine.js';
import { parseAnalytics } from '../../src/video/analytics/rules.js';

const skip = evalDataSkip('tracking/PETS09-S2L1/img1/000146.jpg', 'tracking/PETS09-S2L1/gt/gt.txt');
/** The window over the 768x576 frame, and how much it is enlarged. */
const WIN = { x: 416, y: 96, w: 320, h: 240 };
const SCALE = 2;

let t: TestApp;
before(async () => {
  if (!skip) t = await startTestApp();
});
after(async () => {
  await t?.close();
});

test('people standing on lines (detector jitter, camera shake) count nothing', {
  skip,
  timeout: 240_000,
}, async (ctx) => {
  // Shake: the window moves by up to 1.5 source pixels (3 in the video) from frame to frame.
  const clip = await makeMedia('standing_pets09.mp4', [
    '-loop',
    '1',
    '-framerate',
    '10',
    '-t',
    '10',
    '-i',
    evalData('tracking', 'PETS09-S2L1', 'img1', '000146.jpg'),
    '-vf',
    `crop=${WIN.w}:${WIN.h}:${WIN.x}+1.5*sin(n*2.1):${WIN.y}+1.5*cos(n*1.7),scale=${WIN.w * SCALE}:${WIN.h * SCALE}:flags=lanczos,noise=alls=12:allf=t`,
    '-c:v',
    'libx264',
    '-preset',
    'ultrafast',
    '-crf',
    '18',
    '-pix_fmt',
    'yuv420p',
  ]);
  // Lines through the feet of everyone wholly in the window in that frame: one across, one along the box.
  const people = parseMotFile(readFileSync(evalData('tracking', 'PETS09-S2L1', 'gt', 'gt.txt'), 'utf8')).filter(
    (r) =>
      r.frame === 146 &&
      r.x > WIN.x + 5 &&
      r.y > WIN.y + 5 &&
      r.x + r.w < WIN.x + WIN.w - 5 &&
      r.y + r.h < WIN.y + WIN.h - 5,
  );
  assert.ok(people.length >= 5, `${people.length} people in the window`);
  const lines = people.flatMap((r, i) => {
    const fx = (r.x + r.w / 2 - WIN.x) * SCALE,
      fy = (r.y + r.h - WIN.y) * SCALE,
      w = r.w * SCALE;
    return [
      {
        id: `across_${i}`,
        points: [
          [fx, fy - w],
          [fx, fy + w],
        ],
      },
      {
        id: `along_${i}`,
        points: [
          [fx - w, fy],
          [fx + w, fy],
        ],
      },
    ];
  });
  const rules = { lines };
  const r = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [
        { type: 'video_base64', data: readFileSync(clip).toString('base64'), sampling: { mode: 'fps', value: 10 } },
      ],
      steps: [
        { model: 'detect', parameters: { classes: ['person'], confidence_threshold: 0.4 } },
        { model: 'analytics', parameters: rules },
      ],
    },
  });
  assert.equal(r.status, 202, r.text);
  const done = await waitStatus(t, r.body.id, ['succeeded', 'failed'], 200_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  const results = (await api(t, `/v1/video/tasks/${r.body.id}/results`)).body;
  const counted = Object.entries(results.analytics.lines as Record<string, { in: number; out: number }>).filter(
    ([, c]) => c.in + c.out > 0,
  );
  assert.deepEqual(counted, [], 'no line counts a standing person');
  // The same streamed tracks, counted on every change of side: the jitter is there.
  const chunks = chunksOf((await readStream(t, r.body.id)).bytes).filter((c) => c.finish_reason === null);
  assert.ok(chunks.length >= 90);
  const naive = new AnalyticsEngine(
    parseAnalytics({ ...rules, min_samples: 1, margin_px: 0, margin_box: 0, join_samples: 0 }, 'parameters'),
  );
  for (const c of chunks) {
    const frame: AnalyticsFrame = {
      t_ms: c.stream_info.stream_time_ms,
      frame_index: c.stream_info.frame_index,
      width: WIN.w * SCALE,
      height: WIN.h * SCALE,
      tracks: c.delta.results.flatMap((res: any) =>
        res.targets.map((g: any) => ({
          track_id: g.track_id,
          class: g.class,
          box: [g.roi.left, g.roi.top, g.roi.left + g.roi.width, g.roi.top + g.roi.height] as const,
        })),
      ),
    };
    naive.process(frame);
  }
  const naiveTotal = Object.values(naive.summary().lines).reduce((s, l) => s + l.in + l.out, 0);
  ctx.diagnostic(
    `${people.length} people, ${lines.length} lines, ${chunks.length} frames: the naive counter counts ${naiveTotal}, the defaults 0`,
  );
  assert.ok(naiveTotal >= 10, `a counter of every side change counts ${naiveTotal} on the same tracks`);
});
