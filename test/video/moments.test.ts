// The video index step and moment search through the real API (docs/moments.md): a task indexes a clip of
// known colour scenes into a collection; its items carry the time range and the byte offset of their first
// chunk; group_by "video" merges a scene cut into several segments into one moment per video; the task
// record counts the items; DELETE .../items with a task_id filter removes them; bad parameters are 400s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { chunksOf, parseEvents, readStream, waitStatus } from '../helpers/video-tasks.js';
import { colourPng, scenesClip } from '../helpers/moments.js';

let t: TestApp;
let col: string;
before(async () => {
  t = await startTestApp();
  const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'moments' } });
  assert.equal(r.status, 201, r.text);
  col = r.body.id;
});
after(async () => {
  await t?.close();
});

const indexTask = (path: string, params: Record<string, unknown> = {}) => ({
  input: [{ type: 'video_base64', data: readFileSync(path).toString('base64'), sampling: { mode: 'fps', value: 2 } }],
  steps: [{ model: 'index', parameters: { collection: col, segment_ms: 2000, ...params } }],
});

async function run(body: object): Promise<string> {
  const r = await api(t, '/v1/video/process', { method: 'POST', json: body });
  assert.equal(r.status, 202, r.text);
  const done = await waitStatus(t, r.body.id, ['succeeded', 'failed'], 120_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  return r.body.id;
}

async function items(filter: object): Promise<any[]> {
  const all: any[] = [];
  for (let offset = 0; ; offset += 100) {
    const r = await api(t, `/v1/vectors/collections/${col}/items?limit=100&offset=${offset}`);
    all.push(...r.body.data);
    if (!r.body.has_more) break;
  }
  return all.filter((it) => Object.entries(filter).every(([k, v]) => it.metadata[k] === v));
}

test('index step: segments cut at scene changes, stream_offset replays from the first chunk, task record counts, group_by merges across two videos, delete by task_id', {
  timeout: 240_000,
}, async () => {
  const a = await run(
    indexTask(
      await scenesClip('a', [
        ['red', 4],
        ['green', 3],
        ['blue', 1],
      ]),
      { video_id: 'cam-a' },
    ),
  );
  const b = await run(
    indexTask(
      await scenesClip('b', [
        ['blue', 2],
        ['red', 2],
      ]),
      { video_id: 'cam-b' },
    ),
  );

  const segs = (await items({ task_id: a })).map((it) => it.metadata).sort((x, y) => x.start_ms - y.start_ms);
  // Red 0-4 s in 2 s pieces, then a cut at 4 s (green, split at 6 s) and at 7 s (blue): bounds fall on the scene changes.
  assert.deepEqual(
    segs.map((m) => [m.start_ms, m.end_ms]),
    [
      [0, 2000],
      [2000, 4000],
      [4000, 6000],
      [6000, 7000],
      [7000, 8000],
    ],
  );
  assert.ok(segs.every((m) => m.kind === 'segment' && m.video === 'cam-a'));

  const rec = await api(t, `/v1/video/tasks/${a}`);
  assert.deepEqual(rec.body.index, { collection: col, items_added: 5, segments: 5, tracks: 0 });

  // The green segment's offset: the stream read from there starts with the chunk of its first frame.
  const green = segs.find((m) => m.start_ms === 4000)!;
  const from = await readStream(t, a, { offset: green.stream_offset, via: 'query' });
  const first = parseEvents(from.bytes).find((e) => e.kind === 'chunk') as { chunk: any };
  assert.equal(first.chunk.stream_info.frame_index, green.first_frame);
  assert.equal(first.chunk.stream_info.stream_time_ms, 4000);
  assert.equal(chunksOf(from.bytes)[0].stream_info.frame_index, green.first_frame);

  // Red: video a has it 0-4 s (two segments of one shot, one moment), video b 2-4 s.
  const s = await api(t, `/v1/vectors/collections/${col}/search`, {
    method: 'POST',
    json: { image_base64: await colourPng([255, 0, 0]), group_by: 'video', top_k: 2 },
  });
  assert.equal(s.status, 200, s.text);
  assert.deepEqual(s.body.videos.map((v: any) => v.video).sort(), ['cam-a', 'cam-b']);
  const best = Object.fromEntries(s.body.videos.map((v: any) => [v.video, v.moments[0]]));
  assert.deepEqual([best['cam-a'].start_ms, best['cam-a'].end_ms, best['cam-a'].item_ids.length], [0, 4000, 2]);
  assert.deepEqual([best['cam-b'].start_ms, best['cam-b'].end_ms], [2000, 4000]);
  assert.equal(best['cam-a'].task_id, a);
  assert.equal(best['cam-a'].stream_offset, segs[0].stream_offset);
  const thumb = await fetch(new URL(best['cam-a'].thumbnail_url, t.url));
  assert.equal(thumb.status, 200);
  assert.equal(thumb.headers.get('content-type'), 'image/jpeg');
  const plain = await api(t, `/v1/vectors/collections/${col}/search`, {
    method: 'POST',
    json: { image_base64: await colourPng([255, 0, 0]), top_k: 3, filter: { video: 'cam-a' } },
  });
  assert.ok(
    plain.body.results.every(
      (r: any) => r.moment?.task_id === a && r.moment.stream_offset === r.metadata.stream_offset,
    ),
  );

  // Deleting one task's moments by filter leaves the other's.
  const d = await api(t, `/v1/vectors/collections/${col}/items`, {
    method: 'DELETE',
    json: { filter: { task_id: b } },
  });
  assert.equal(d.status, 200, d.text);
  assert.equal(d.body.deleted, (await api(t, `/v1/video/tasks/${b}`)).body.index.items_added);
  assert.equal((await items({ task_id: b })).length, 0);
  assert.equal((await items({ task_id: a })).length, 5);
});

test('index step and moment search: bad parameters are 400s naming the field', async () => {
  const bad = async (body: object, param: string) => {
    const r = await api(t, '/v1/video/process', { method: 'POST', json: body });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.param, param, r.text);
  };
  const input = [{ type: 'video_url', url: 'http://127.0.0.1:9/x.mp4' }];
  await bad(
    { input, steps: [{ model: 'index', parameters: { collection: 'col_nope' } }] },
    'steps[0].parameters.collection',
  );
  await bad(
    { input, steps: [{ model: 'index', parameters: { collection: col, segment_ms: 10 } }] },
    'steps[0].parameters.segment_ms',
  );
  await bad(
    { input, steps: [{ model: 'index', parameters: { collection: col, per: ['frame'] } }] },
    'steps[0].parameters.per[0]',
  );
  await bad(
    { input, steps: [{ model: 'index', parameters: { collection: col, per: ['track'] } }] },
    'steps[0].parameters.per',
  );
  await bad({ input, steps: [{ model: 'index', parameters: {} }] }, 'steps[0].parameters.collection');
  await bad(
    {
      input,
      steps: [
        { model: 'index', parameters: { collection: col } },
        { model: 'index', parameters: { collection: col } },
      ],
    },
    'steps[1].model',
  );
  const search = async (json: object, param: string) => {
    const r = await api(t, `/v1/vectors/collections/${col}/search`, { method: 'POST', json });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.param, param, r.text);
  };
  await search({ text: 'red', merge_gap_ms: 100 }, 'merge_gap_ms');
  await search({ text: 'red', group_by: 'task' }, 'group_by');
  await search({ text: 'red', group_by: 'video', merge_gap_ms: -1 }, 'merge_gap_ms');
  const del = async (json: object, param: string) => {
    const r = await api(t, `/v1/vectors/collections/${col}/items`, { method: 'DELETE', json });
    assert.equal(r.status, 400, r.text);
    assert.equal(r.body.error.param, param, r.text);
  };
  await del({}, 'ids');
  await del({ filter: {} }, 'filter');
  await del({ ids: ['x'], filter: { task_id: 'vt_x' } }, 'filter');
  await del({ filter: { task_id: { $gt: 'x' } } }, 'filter.task_id.$gt');
});
