// The analytics step through the task API with a real server and worker: people of the synthetic provider
// walk right to left across a line and through zones. Every chunk carries analytics, the terminal chunk
// and the results the summary; GET answers the totals; a recount with the same rules equals them exactly;
// PUT changes the rules of a running task within two sampled frames (its heatmap draws the chunks so far);
// a recount reads the compact track log (in blocks) when whole and the archive otherwise, with the same
// totals; webhook.events filters the analytics events delivered through the outbox; the metric of analytics
// events counts the task's events by type (a recount's not); and every bad rule is a 400 whose param names it.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { api, fetchChecked, type TestApp } from '../helpers/app.js';
import {
  SyntheticProvider,
  chunksOf,
  readStream,
  startVideoApp,
  startWorker,
  waitFor,
  waitStatus,
} from '../helpers/video-tasks.js';
import { walkerRules } from '../helpers/synthetic-provider.js';
import type { VideoWorker } from '../../src/video/worker/worker.js';
import { parseExposition, sampleSum, scrape } from '../helpers/metrics-text.js';

const RULES = walkerRules({ dwell_ms: 300 });
const task = (query: string, analytics: unknown = RULES, extra: Record<string, unknown> = {}) => ({
  input: [{ type: 'video_url', url: `http://127.0.0.1:9/clip.mp4?${query}` }],
  steps: [
    { model: 'detect', parameters: { classes: ['person'] } },
    { model: 'analytics', parameters: analytics },
  ],
  ...extra,
});

let t: TestApp;
let worker: VideoWorker;
before(async () => {
  t = await startVideoApp({ SIGHTFLOW_VIDEO_WEBHOOK_POLL_MS: '50', SIGHTFLOW_METRICS_PORT: '0' });
  worker = startWorker(t, () => [new SyntheticProvider()]);
});
after(async () => {
  await worker.stop();
  await t.close();
});

async function run(json: unknown): Promise<{ id: string; chunks: any[] }> {
  const r = await api(t, '/v1/video/process', { method: 'POST', json });
  assert.equal(r.status, 202, r.text);
  await waitStatus(t, r.body.id, ['succeeded']);
  return { id: r.body.id, chunks: chunksOf((await readStream(t, r.body.id)).bytes) };
}

test('chunks carry events and totals; the summary is in the terminal chunk, results and GET; a recount equals it', async () => {
  const { id, chunks } = await run(task('frames=40&frame_ms=1&walkers=3'));
  const frames = chunks.filter((c) => c.finish_reason === null);
  assert.equal(frames.length, 40);
  assert.ok(frames.every((c) => Array.isArray(c.analytics?.events) && c.analytics.totals.version === 1));
  const crossed = frames.flatMap((c) => c.analytics.events).filter((e: any) => e.type === 'line.crossed');
  assert.deepEqual(
    crossed.map((e: any) => [e.rule, e.direction, e.class]),
    [
      ['door', 'in', 'person'],
      ['door', 'in', 'person'],
      ['door', 'in', 'person'],
    ],
  );
  assert.ok(crossed.every((e: any) => e.id.startsWith(`${id}.ae_`) && e.version === 1 && Number.isInteger(e.t_ms)));
  const terminal = chunks.at(-1);
  assert.equal(terminal.finish_reason, 'stop');
  const summary = terminal.analytics.totals;
  assert.equal(summary.lines.door.in, 3);
  assert.equal(summary.lines.door.out, 0);
  assert.deepEqual(summary.lines.door.by_class, { person: { in: 3, out: 0 } });
  assert.equal(summary.zones.left.entered, 3);
  assert.equal(summary.zones.left.exited, 3, 'closed at the end');
  const results = await api(t, `/v1/video/tasks/${id}/results`);
  assert.deepEqual(results.body.analytics, summary);
  const got = await api(t, `/v1/video/tasks/${id}/analytics`);
  assert.equal(got.status, 200, got.text);
  assert.deepEqual(got.body.totals, summary);
  assert.equal(got.body.version, 1);
  const same = await api(t, `/v1/video/tasks/${id}/analytics/recount`, { method: 'POST', json: { parameters: RULES } });
  assert.equal(same.status, 200, same.text);
  assert.deepEqual(same.body.totals, summary, "the same rules give exactly the task's totals");
  assert.equal(same.body.frames, 40);
  assert.equal(same.body.source, 'track_log');
  const own = await api(t, `/v1/video/tasks/${id}/analytics/recount`, { method: 'POST', json: {} });
  assert.deepEqual(own.body.totals, summary);
  const other = await api(t, `/v1/video/tasks/${id}/analytics/recount`, {
    method: 'POST',
    json: {
      parameters: {
        lines: [
          {
            id: 'far',
            points: [
              [100, 0],
              [100, 480],
            ],
          },
          {
            id: 'out',
            points: [
              [500, 0],
              [500, 480],
            ],
            classes: ['car'],
          },
        ],
      },
    },
  });
  assert.equal(other.status, 200, other.text);
  assert.equal(other.body.totals.lines.far.in, 3);
  assert.equal(other.body.totals.lines.out.in, 0);
  // The metric counts this task's events (the first task of this file), the recounts' not.
  const byType = new Map<string, number>();
  for (const e of chunks.flatMap((c) => c.analytics?.events ?? [])) byType.set(e.type, (byType.get(e.type) ?? 0) + 1);
  const metrics = parseExposition((await scrape(t.app.metricsPort!)).text);
  assert.ok(byType.size >= 3, [...byType.keys()].join());
  for (const type of ['line.crossed', 'zone.entered', 'zone.exited', 'zone.dwell', 'zone.crowded']) {
    assert.equal(sampleSum(metrics, 'sightflow_video_analytics_events_total', { type }), byType.get(type) ?? 0, type);
  }
  // A finished task's rules do not change.
  const put = await api(t, `/v1/video/tasks/${id}/analytics`, { method: 'PUT', json: { parameters: RULES } });
  assert.equal(put.status, 409);
  assert.equal(put.body.error.code, 'analytics_unavailable');
});

test('a recount reads the track log in blocks when whole and the archive otherwise: the same totals either way', async () => {
  // 300 frames: two log blocks (256 + 44). The walkers cross the door and leave the zone once each.
  const { id, chunks } = await run(task('frames=300&frame_ms=0&walkers=3'));
  const summary = chunks.at(-1).analytics.totals;
  const fromLog = await api(t, `/v1/video/tasks/${id}/analytics/recount`, { method: 'POST', json: {} });
  assert.equal(fromLog.status, 200, fromLog.text);
  assert.deepEqual([fromLog.body.source, fromLog.body.frames], ['track_log', 300]);
  assert.deepEqual(fromLog.body.totals, summary);
  // The same walkers without an analytics step: no log, the archive is read, and counts the same.
  const plain = await run({
    ...task('frames=300&frame_ms=0&walkers=3'),
    steps: [{ model: 'detect', parameters: { classes: ['person'] } }],
  });
  const fromArchive = await api(t, `/v1/video/tasks/${plain.id}/analytics/recount`, {
    method: 'POST',
    json: { parameters: RULES },
  });
  assert.equal(fromArchive.status, 200, fromArchive.text);
  assert.deepEqual([fromArchive.body.source, fromArchive.body.frames], ['archive', 300]);
  assert.deepEqual(fromArchive.body.totals.lines, summary.lines);
  assert.deepEqual(fromArchive.body.totals.zones, summary.zones);
});

test('PUT on a running task: applied within two sampled frames, version 2, removed rules keep their totals', async () => {
  const r = await api(t, '/v1/video/process', { method: 'POST', json: task('frames=60&frame_ms=60&walkers=2') });
  assert.equal(r.status, 202, r.text);
  const id = r.body.id as string;
  // Wait until the walkers crossed the door (x = 400 is passed at frame 10).
  await waitFor('door crossings', async () => {
    const g = await api(t, `/v1/video/tasks/${id}/analytics`);
    return g.body.totals?.lines?.door?.in === 2;
  });
  const before = await api(t, `/v1/video/tasks/${id}`);
  const atPut = before.body.progress.frame_index as number;
  const put = await api(t, `/v1/video/tasks/${id}/analytics`, {
    method: 'PUT',
    json: {
      parameters: {
        lines: [
          {
            id: 'gate',
            points: [
              [100, 0],
              [100, 480],
            ],
          },
        ],
      },
    },
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.body.version, 2);
  // The heatmap of the running task: the chunks so far (no frame size from this provider: the boxes' extent).
  const heat = await fetchChecked(t, `/v1/video/tasks/${id}/heatmap.png`, {
    headers: { authorization: `Bearer ${t.key}` },
  });
  assert.equal(heat.status, 200, await heat.clone().text());
  assert.equal(heat.headers.get('content-type'), 'image/png');
  assert.ok(
    Number(heat.headers.get('x-heatmap-points')) >= 2 * 10,
    `points so far: ${heat.headers.get('x-heatmap-points')}`,
  );
  await waitStatus(t, id, ['succeeded']);
  const frames = chunksOf((await readStream(t, id)).bytes).filter((c) => c.finish_reason === null);
  assert.equal(frames.length, 60, 'no frame dropped because of the change');
  const first2 = frames.find((c) => c.analytics.totals.version === 2);
  assert.ok(
    first2.stream_info.frame_index <= atPut + 3,
    `version 2 from frame ${first2.stream_info.frame_index}; the PUT came after frame ${atPut}`,
  );
  const summary = (await api(t, `/v1/video/tasks/${id}/results`)).body.analytics;
  assert.equal(summary.version, 2);
  assert.deepEqual([summary.lines.door.in, summary.lines.door.active], [2, false]);
  assert.deepEqual([summary.lines.gate.in, summary.lines.gate.active], [2, true]);
  const gateEvents = frames.flatMap((c) => c.analytics.events).filter((e: any) => e.rule === 'gate');
  assert.ok(gateEvents.length === 2 && gateEvents.every((e: any) => e.version === 2));
});

test("webhook.events: only the chosen analytics events are delivered, with the stream's event ids", async () => {
  const hits: Array<{ id: string; body: any }> = [];
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      hits.push({ id: String(req.headers['webhook-id']), body: JSON.parse(Buffer.concat(parts).toString('utf8')) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`;
    const { id, chunks } = await run(
      task('frames=40&frame_ms=1&walkers=2', RULES, { webhook: { url, events: ['line.crossed'] } }),
    );
    const streamIds = chunks
      .flatMap((c) => c.analytics?.events ?? [])
      .filter((e: any) => e.type === 'line.crossed')
      .map((e: any) => e.id);
    assert.equal(streamIds.length, 2);
    await waitFor('deliveries', async () => hits.length >= 3).catch(async (e) => {
      const rec = await api(t, `/v1/video/tasks/${id}?include=webhook_deliveries`);
      throw new Error(
        `${(e as Error).message}: ${hits.length} received; the task's deliveries: ${JSON.stringify(rec.body?.webhook_deliveries ?? rec.text)}`,
      );
    });
    await new Promise((r) => setTimeout(r, 300));
    const analytics = hits.filter((h) => h.body.type === 'line.crossed');
    assert.deepEqual(analytics.map((h) => h.id).sort(), [...streamIds].sort());
    assert.ok(analytics.every((h) => h.body.data.id === h.id && h.body.data.task_id === id));
    assert.deepEqual(
      hits.filter((h) => h.body.type !== 'line.crossed').map((h) => h.body.type),
      ['video.task.succeeded'],
      'no zone events, one terminal',
    );
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

test('every bad rule is a 400 naming it; analytics of a task without the step is a 409', async () => {
  const bad = async (analytics: unknown, param: string, extra: Record<string, unknown> = {}) => {
    const r = await api(t, '/v1/video/process', { method: 'POST', json: task('frames=1', analytics, extra) });
    assert.equal(r.status, 400, `${param}: ${r.text}`);
    assert.equal(r.body.error.param, param, r.text);
  };
  await bad(
    {
      lines: [
        {
          id: 'a',
          points: [
            [5, 5],
            [5, 5],
          ],
        },
      ],
    },
    'steps[1].parameters.lines[0].points',
  );
  await bad(
    {
      lines: [
        {
          id: 'a',
          points: [
            [0, 0],
            [9, 9],
          ],
        },
        {
          id: 'a',
          points: [
            [0, 0],
            [9, 8],
          ],
        },
      ],
    },
    'steps[1].parameters.lines[1].id',
  );
  await bad(
    {
      zones: [
        {
          id: 'z',
          polygon: [
            [0, 0],
            [10, 10],
            [10, 0],
            [0, 20],
          ],
        },
      ],
    },
    'steps[1].parameters.zones[0].polygon',
  );
  await bad(
    {
      zones: [
        {
          id: 'z',
          polygon: [
            [0, 0],
            [5, 5],
            [10, 10],
          ],
        },
      ],
    },
    'steps[1].parameters.zones[0].polygon',
  );
  await bad(
    {
      units: 'relative',
      lines: [
        {
          id: 'a',
          points: [
            [0, 0],
            [1.5, 1],
          ],
        },
      ],
    },
    'steps[1].parameters.lines[0].points[1]',
  );
  await bad(
    {
      lines: [
        {
          id: 'a',
          points: [
            [0, 0],
            [9, 9],
          ],
          classes: ['unicorn'],
        },
      ],
    },
    'steps[1].parameters.lines[0].classes[0]',
  );
  await bad(
    {
      lines: Array.from({ length: 65 }, (_, i) => ({
        id: `l${i}`,
        points: [
          [0, 0],
          [9, 9],
        ],
      })),
    },
    'steps[1].parameters.lines',
  );
  await bad(RULES, 'webhook.events[0]', { webhook: { url: 'http://127.0.0.1:9/h', events: ['zone.party'] } });
  const first = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: 'http://127.0.0.1:9/c.mp4' }],
      steps: [{ model: 'analytics', parameters: RULES }],
    },
  });
  assert.equal(first.status, 400, first.text);
  assert.equal(first.body.error.param, 'steps[0].model');
  const noStep = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url: 'http://127.0.0.1:9/c.mp4?frames=1' }],
      steps: [{ model: 'detect' }],
      webhook: { url: 'http://127.0.0.1:9/h', events: ['line.crossed'] },
    },
  });
  assert.equal(noStep.status, 400, noStep.text);
  assert.equal(noStep.body.error.param, 'webhook.events');
  // PUT with a bad rule names it under parameters; a task without the step is a 409; an unknown one a 404.
  const running = await api(t, '/v1/video/process', { method: 'POST', json: task('frames=30&frame_ms=50&walkers=1') });
  const put = await api(t, `/v1/video/tasks/${running.body.id}/analytics`, {
    method: 'PUT',
    json: {
      parameters: {
        lines: [
          {
            id: 'a',
            points: [
              [1, 1],
              [1, 1],
            ],
          },
        ],
      },
    },
  });
  assert.equal(put.status, 400, put.text);
  assert.equal(put.body.error.param, 'parameters.lines[0].points');
  const putClass = await api(t, `/v1/video/tasks/${running.body.id}/analytics`, {
    method: 'PUT',
    json: {
      parameters: {
        lines: [
          {
            id: 'a',
            points: [
              [1, 1],
              [2, 2],
            ],
            classes: ['dragon'],
          },
        ],
      },
    },
  });
  assert.equal(putClass.status, 400, putClass.text);
  assert.equal(putClass.body.error.param, 'parameters.lines[0].classes[0]');
  const early = await api(t, `/v1/video/tasks/${running.body.id}/analytics/recount`, { method: 'POST', json: {} });
  assert.equal(early.status, 409, early.text);
  const plain = await api(t, '/v1/video/process', {
    method: 'POST',
    json: { input: [{ type: 'video_url', url: 'http://127.0.0.1:9/c.mp4?frames=2' }], steps: [{ model: 'detect' }] },
  });
  const none = await api(t, `/v1/video/tasks/${plain.body.id}/analytics`);
  assert.equal(none.status, 409, none.text);
  assert.equal(none.body.error.code, 'analytics_unavailable');
  assert.equal((await api(t, '/v1/video/tasks/vt_nope/analytics')).status, 404);
  await waitStatus(t, running.body.id, ['succeeded']);
});
