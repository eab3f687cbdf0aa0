// Counting over MCP, on both transports: count_on_video counts a finished task's stored tracks with the
// agent's lines and zones (the REST recount's answer as structured content, the counts in the summary),
// get_video_counts answers the totals of a task with an analytics step; a bad rule, a running task and an
// unknown task are tool errors carrying the REST message. The synthetic provider's walkers cross x = 400
// right to left (deterministic, no decoding): these tests are about the tools, not the counting.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, type TestApp } from '../helpers/app.js';
import { SyntheticProvider, startVideoApp, startWorker, waitStatus } from '../helpers/video-tasks.js';
import { walkerRules } from '../helpers/synthetic-provider.js';
import type { VideoWorker } from '../../src/video/worker/worker.js';
import { connect, KINDS, textOf } from '../helpers/mcp-clients.js';

const DOOR = walkerRules();
const task = (query: string, steps: unknown[] = []) => ({
  input: [{ type: 'video_url', url: `http://127.0.0.1:9/clip.mp4?${query}` }],
  steps: [{ model: 'detect', parameters: { classes: ['person'] } }, ...steps],
});

let t: TestApp;
let worker: VideoWorker;
let plain: string;
let counted: string;
before(async () => {
  t = await startVideoApp();
  worker = startWorker(t, () => [new SyntheticProvider()]);
  const ids = await Promise.all(
    [
      task('frames=40&frame_ms=1&walkers=3'),
      task('frames=40&frame_ms=1&walkers=2', [{ model: 'analytics', parameters: DOOR }]),
    ].map(async (json) => {
      const r = await api(t, '/v1/video/process', { method: 'POST', json });
      assert.equal(r.status, 202, r.text);
      await waitStatus(t, r.body.id, ['succeeded']);
      return r.body.id as string;
    }),
  );
  [plain, counted] = ids as [string, string];
});
after(async () => {
  await worker?.stop();
  await t?.close();
});

for (const kind of KINDS) {
  test(`${kind}: count_on_video counts a finished task with new rules; get_video_counts; errors carry the REST message`, async () => {
    const c = await connect(t, kind);
    try {
      const listed = (await c.client.listTools()).tools.map((x) => x.name);
      assert.ok(listed.includes('count_on_video') && listed.includes('get_video_counts'), listed.join());

      const r = await c.client.callTool({ name: 'count_on_video', arguments: { id: plain, parameters: DOOR } });
      assert.ok(!r.isError, textOf(r));
      const rest = await api(t, `/v1/video/tasks/${plain}/analytics/recount`, {
        method: 'POST',
        json: { parameters: DOOR },
      });
      const s = r.structuredContent as any;
      assert.deepEqual(s.totals, rest.body.totals);
      assert.deepEqual(
        [s.frames, s.totals.lines.door.in, s.totals.lines.door.out, s.totals.zones.left.entered],
        [40, 3, 0, 3],
      );
      assert.match(
        textOf(r),
        new RegExp(
          `^Counted 40 frames of video task ${plain}: line door 3 in / 0 out; zone left 3 entered, max 3 inside`,
        ),
      );

      const own = await c.client.callTool({ name: 'count_on_video', arguments: { id: counted } });
      assert.ok(!own.isError, textOf(own));
      const live = await c.client.callTool({ name: 'get_video_counts', arguments: { id: counted } });
      assert.ok(!live.isError, textOf(live));
      assert.deepEqual(
        (own.structuredContent as any).totals,
        (live.structuredContent as any).totals,
        "the recount with the task's own rules equals its totals",
      );
      assert.match(textOf(live), /line door 2 in \/ 0 out/);

      const badRule = await c.client.callTool({
        name: 'count_on_video',
        arguments: {
          id: plain,
          parameters: {
            lines: [
              {
                id: 'x',
                points: [
                  [5, 5],
                  [5, 5],
                ],
              },
            ],
          },
        },
      });
      assert.equal(badRule.isError, true);
      const restBad = await api(t, `/v1/video/tasks/${plain}/analytics/recount`, {
        method: 'POST',
        json: {
          parameters: {
            lines: [
              {
                id: 'x',
                points: [
                  [5, 5],
                  [5, 5],
                ],
              },
            ],
          },
        },
      });
      assert.equal(restBad.status, 400);
      assert.equal(textOf(badRule), restBad.body.error.message);
      const noRules = await c.client.callTool({ name: 'get_video_counts', arguments: { id: plain } });
      assert.equal(noRules.isError, true);
      assert.match(textOf(noRules), /no analytics step/);
      const missing = await c.client.callTool({
        name: 'count_on_video',
        arguments: { id: 'vt_nope', parameters: DOOR },
      });
      assert.equal(missing.isError, true);
      assert.equal(
        textOf(missing),
        (await api(t, '/v1/video/tasks/vt_nope/analytics/recount', { method: 'POST', json: {} })).body.error.message,
      );
    } finally {
      await c.close();
    }
  });
}

test('count_on_video on a running task is a tool error that says to wait', async () => {
  const r = await api(t, '/v1/video/process', { method: 'POST', json: task('frames=200&frame_ms=50&walkers=1') });
  assert.equal(r.status, 202, r.text);
  const c = await connect(t, 'streamable-http');
  try {
    const early = await c.client.callTool({ name: 'count_on_video', arguments: { id: r.body.id, parameters: DOOR } });
    assert.equal(early.isError, true);
    assert.match(textOf(early), /recount reads a finished task/);
  } finally {
    await c.close();
    await api(t, `/v1/video/tasks/${r.body.id}/cancel`, { method: 'POST' });
  }
});
