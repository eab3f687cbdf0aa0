// GET /v1/video/tasks/:id/heatmap.png on real tasks (the local provider, the real detector): people walking
// in TUD-Campus (evaluation data) give a PNG the size of the source frame that is hot at every stored box's
// anchor and transparent far from all of them; a clip with nobody in it gives a transparent image when the
// task recorded its frame size (an analytics step) and a 409 when it did not; bad query parameters are 400s
// naming the parameter, another project's task and an unknown one 404s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { api, fetchChecked, startTestApp, type TestApp } from '../helpers/app.js';
import { TUD_CAMPUS } from '../helpers/eval-data.js';
import { evalDataSkip } from '../../eval/dir.js';
import { textClip } from '../helpers/videos.js';
import { chunksOf, readStream, waitStatus, warmKey } from '../helpers/video-tasks.js';

const skip = evalDataSkip('tracking/TUD-Campus/TUD-Campus.mp4');
const ALL = {
  units: 'relative',
  zones: [
    {
      id: 'all',
      polygon: [
        [0, 0],
        [1, 0],
        [1, 1],
        [0, 1],
      ],
    },
  ],
};

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

const start = async (data: Buffer, steps: unknown[], max = 8) => {
  const r = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [
        { type: 'video_base64', data: data.toString('base64'), sampling: { mode: 'fps', value: 5 }, max_frames: max },
      ],
      steps,
    },
  });
  assert.equal(r.status, 202, r.text);
  return r.body.id as string;
};
const finished = async (id: string) => {
  const done = await waitStatus(t, id, ['succeeded', 'failed'], 200_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
};
const heatmap = async (id: string, query = '') => {
  const res = await fetchChecked(t, `/v1/video/tasks/${id}/heatmap.png${query}`, {
    headers: { authorization: `Bearer ${t.key}` },
  });
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('content-type'), 'image/png');
  const png = Buffer.from(await res.arrayBuffer());
  const { data, info } = await sharp(png).raw().toBuffer({ resolveWithObject: true });
  assert.equal(info.channels, 4);
  return {
    data,
    width: info.width,
    height: info.height,
    points: Number(res.headers.get('x-heatmap-points')),
    frames: Number(res.headers.get('x-heatmap-frames')),
  };
};

test('people walking: the PNG is sized like the frame, hot at every anchor, transparent away from them', {
  skip,
  timeout: 240_000,
}, async () => {
  const id = await start(readFileSync(TUD_CAMPUS()), [
    { model: 'detect', parameters: { classes: ['person'] } },
    { model: 'analytics', parameters: ALL },
  ]);
  await finished(id);
  const frame = (await api(t, `/v1/video/tasks/${id}/analytics`)).body.frame_size as { width: number; height: number };
  assert.ok(frame.width > 0 && frame.height > 0);
  const boxes = chunksOf((await readStream(t, id)).bytes)
    .filter((c) => c.finish_reason === null)
    .flatMap((c) => c.delta.results.flatMap((r: any) => r.targets));
  assert.ok(boxes.length >= 8, `people were tracked (${boxes.length} boxes)`);
  const h = await heatmap(id);
  assert.deepEqual([h.width, h.height], [frame.width, frame.height]);
  assert.equal(h.points, boxes.length);
  assert.equal(h.frames, 8);
  // Feet (bottom_center) of every stored box, in image pixels.
  const feet = boxes.map(
    (b: any) =>
      [
        Math.min(h.width - 1, Math.floor(b.roi.left + b.roi.width / 2)),
        Math.min(h.height - 1, Math.floor(b.roi.top + b.roi.height)),
      ] as const,
  );
  const alpha = (x: number, y: number) => h.data[(y * h.width + x) * 4 + 3]!;
  for (const [x, y] of feet) assert.ok(alpha(x, y) >= 64, `hot at the feet (${x}, ${y}): alpha ${alpha(x, y)}`);
  // Three box blurs of radius r reach 3r pixels along each axis: nothing beyond that from every anchor.
  const reach = 3 * Math.max(1, Math.round(h.width / 128)) + 1;
  let hot = 0;
  for (let y = 0; y < h.height; y++) {
    for (let x = 0; x < h.width; x++) {
      if (alpha(x, y) === 0) continue;
      hot++;
      assert.ok(
        feet.some(([fx, fy]) => Math.abs(fx - x) <= reach && Math.abs(fy - y) <= reach),
        `heat at (${x}, ${y}) far from every anchor`,
      );
    }
  }
  assert.ok(hot < h.width * h.height, 'not the whole frame');
  // The hottest pixel is red (the most opaque, and of those the least green: alpha saturates a little before
  // the hottest spot); a narrower image keeps the aspect; a time window draws fewer frames.
  let best = 0;
  for (let i = 0; i < h.data.length; i += 4) {
    if (
      h.data[i + 3]! > h.data[best + 3]! ||
      (h.data[i + 3] === h.data[best + 3] && h.data[i + 1]! < h.data[best + 1]!)
    )
      best = i;
  }
  assert.deepEqual([h.data[best], h.data[best + 1], h.data[best + 2], h.data[best + 3]], [255, 0, 0, 255]);
  const small = await heatmap(id, '?width=320&classes=person&anchor=center');
  assert.deepEqual([small.width, small.height], [320, Math.round((frame.height * 320) / frame.width)]);
  assert.equal(small.points, boxes.length);
  const early = await heatmap(id, '?to_ms=600');
  assert.ok(early.frames > 0 && early.frames < 8, `frames before 0.6 s: ${early.frames}`);
});

test('nobody in the video: transparent with a recorded frame size, else 409; bad parameters 400; other tasks 404', {
  timeout: 240_000,
}, async () => {
  const clip = readFileSync(await textClip());
  const person = { model: 'detect', parameters: { classes: ['person'] } };
  const [counted, plain] = [
    await start(clip, [person, { model: 'analytics', parameters: ALL }], 2),
    await start(clip, [person], 2),
  ];
  await finished(counted);
  await finished(plain);
  const empty = await heatmap(counted);
  assert.deepEqual([empty.width, empty.height, empty.points, empty.frames], [640, 240, 0, 2]);
  assert.ok(
    empty.data.every((v, i) => i % 4 !== 3 || v === 0),
    'fully transparent',
  );
  const none = await api(t, `/v1/video/tasks/${plain}/heatmap.png`);
  assert.equal(none.status, 409, none.text);
  assert.equal(none.body.error.code, 'analytics_unavailable');

  const bad = async (query: string, param: string, code = 'invalid_parameter') => {
    const r = await api(t, `/v1/video/tasks/${counted}/heatmap.png?${query}`);
    assert.equal(r.status, 400, `${query}: ${r.text}`);
    assert.deepEqual([r.body.error.param, r.body.error.code], [param, code], r.text);
  };
  await bad('anchor=feet', 'anchor', 'invalid_request');
  await bad('width=8', 'width', 'invalid_request');
  await bad('width=wide', 'width', 'invalid_request');
  await bad('classes=', 'classes', 'invalid_request');
  await bad('color=red', 'color', 'invalid_request');
  await bad('classes=person,unicorn', 'classes', 'unknown_class');
  await bad('from_ms=1000&to_ms=500', 'to_ms');

  assert.equal((await api(t, '/v1/video/tasks/vt_nope/heatmap.png')).status, 404);
  const other = await t.app.services.projects.create('heatmap-other');
  const otherKey = (await t.app.services.projects.createKey(other.id, 'k')).key;
  await warmKey(t, otherKey);
  const theirs = await api(t, `/v1/video/tasks/${counted}/heatmap.png`, { key: otherKey });
  assert.equal(theirs.status, 404, theirs.text);
  assert.equal(theirs.body.error.type, 'not_found_error');
});
