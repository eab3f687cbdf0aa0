// A live source indexed while its task runs (docs/moments.md, "Live sources"): the first moment of an endless
// MPEG-TS stream is searchable while the task is still streaming, and the delay from the end of that moment
// (its wall-clock start plus its length) to the item being searchable is measured and bounded. Cancelling the
// task still writes the segment it was in.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { startTsStream, type HttpLiveSource } from '../helpers/live-sources.js';
import { waitFor, waitStatus } from '../helpers/video-tasks.js';
import { scenesClip } from '../helpers/moments.js';

let t: TestApp;
let source: HttpLiveSource;
before(async () => {
  t = await startTestApp({ SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true' });
  source = await startTsStream(
    await scenesClip('live', [
      ['red', 2],
      ['navy', 2],
    ]),
  );
});
after(async () => {
  await source?.close();
  await t?.close();
});

test('live: a moment is searchable while the task runs, within a few seconds of its end', {
  timeout: 120_000,
}, async () => {
  const col = (await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'live' } })).body.id;
  const r = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: source.url, sampling: { mode: 'fps', value: 4 } }],
      steps: [{ model: 'index', parameters: { collection: col, segment_ms: 2000, video_id: 'gate-cam' } }],
    },
  });
  assert.equal(r.status, 202, r.text);
  const id = r.body.id;
  // Every item's first sighting in a search (polled every 100 ms) against the wall-clock end of its moment.
  // The first moment also waits for the embedding models to load, so the delay is the median of the rest.
  const seen = new Map<string, number>();
  const delays: number[] = [];
  await waitFor(
    'four searchable live moments',
    async () => {
      const s = await api(t, `/v1/vectors/collections/${col}/search`, {
        method: 'POST',
        json: { text: 'red', top_k: 100, filter: { task_id: id } },
      });
      for (const x of s.body.results ?? []) {
        if (seen.has(x.id)) continue;
        seen.set(x.id, Date.now());
        assert.equal(x.metadata.video, 'gate-cam');
        assert.equal(typeof x.metadata.wall_start_ms, 'number');
        assert.equal(x.moment.task_id, id);
        delays.push(Date.now() - (x.metadata.wall_start_ms + (x.metadata.end_ms - x.metadata.start_ms)));
      }
      return seen.size >= 4;
    },
    90_000,
  );
  assert.equal((await api(t, `/v1/video/tasks/${id}`)).body.status, 'streaming', 'searchable while the task runs');
  const rest = delays.slice(1).sort((a, b) => a - b);
  const median = rest[Math.floor(rest.length / 2)]!;
  console.log(
    `live delay: moments searchable ${delays.join(', ')} ms after their end (segment 2000 ms; first includes model loading); median after the first ${median} ms`,
  );
  // A regression guard, not the figure (printed above, docs/moments.md): quiet 2 cores give 1-3 s, a host at
  // load average 20 gave 7 s.
  assert.ok(median < 12_000, `searchable a median ${median} ms after the moment ended`);
  const before = (await api(t, `/v1/video/tasks/${id}`)).body.index.items_added;
  assert.ok(before >= 1);
  assert.equal((await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' })).status, 202);
  await waitStatus(t, id, ['cancelled'], 30_000);
  await waitFor(
    'the open segment written on cancel',
    async () => (await api(t, `/v1/video/tasks/${id}`)).body.index.items_added > before,
    10_000,
  );
});
