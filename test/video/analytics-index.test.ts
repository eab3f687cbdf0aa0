// An analytics step and an index step in one task, on the local provider with the real detector over people
// walking (TUD-Campus from the evaluation data): the worker's steps (analytics) run on each chunk before the
// provider's chunk hooks (index), so the moments the index step writes carry the zones the analytics events
// of their frames entered, and the archived chunks carry the same events.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { TUD_CAMPUS } from '../helpers/eval-data.js';
import { evalDataSkip } from '../../eval/dir.js';
import { chunksOf, readStream, waitStatus } from '../helpers/video-tasks.js';

const skip = evalDataSkip('tracking/TUD-Campus/TUD-Campus.mp4');

let t: TestApp;
let col: string;
before(async () => {
  if (skip) return;
  t = await startTestApp();
  const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'counted-moments' } });
  assert.equal(r.status, 201, r.text);
  col = r.body.id;
});
after(async () => {
  await t?.close();
});

test('analytics then index: the moments carry the zones entered in their frames', {
  skip,
  timeout: 240_000,
}, async () => {
  // The whole view is one zone: every person tracked for two samples enters it.
  const all = {
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
  const r = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [
        {
          type: 'video_base64',
          data: readFileSync(TUD_CAMPUS()).toString('base64'),
          sampling: { mode: 'fps', value: 5 },
          max_frames: 10,
        },
      ],
      steps: [
        { model: 'detect', parameters: { classes: ['person'] } },
        { model: 'analytics', parameters: all },
        { model: 'index', parameters: { collection: col, segmenting: 'fixed', segment_ms: 1000 } },
      ],
    },
  });
  assert.equal(r.status, 202, r.text);
  const done = await waitStatus(t, r.body.id, ['succeeded', 'failed'], 200_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  const chunks = chunksOf((await readStream(t, r.body.id)).bytes).filter((c) => c.finish_reason === null);
  const entered = chunks.flatMap((c) => c.analytics.events).filter((e: any) => e.type === 'zone.entered');
  assert.ok(entered.length > 0, 'people were seen entering the zone');
  const items = (await api(t, `/v1/vectors/collections/${col}/items?limit=100`)).body.data.map(
    (it: any) => it.metadata,
  );
  assert.ok(items.length > 0);
  // A segment holding a frame with a zone.entered event carries the zone; one without such a frame does not.
  for (const m of items) {
    const inside = entered.some((e: any) => e.t_ms >= m.start_ms && e.t_ms < m.end_ms);
    assert.equal(m['zone:all'] === true, inside, `segment ${m.start_ms}-${m.end_ms}: ${JSON.stringify(m.zones)}`);
  }
  assert.ok(items.some((m: any) => m['zone:all'] === true));
});
