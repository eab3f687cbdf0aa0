// Metrics as an operator sees them: a real Prometheus (Debian's package, on loopback, scraping every second)
// scrapes a running sightflow's metrics port, and PromQL over its HTTP API finds exactly the traffic sent:
// requests per route and status, a model's inference count, a video task's frames, and the usage per project
// equal to the usage report. promtool's linter has nothing to say about the scraped text, and the
// OpenMetrics rendering (which Prometheus asks for) ends as the format requires.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { admin, api, startTestApp, type TestApp } from '../helpers/app.js';
import { gpuStatus } from '../../src/native/gpu.js';
import { prometheusMissing, promtoolCheck, startPrometheus, type Prometheus } from '../helpers/prometheus.js';
import { parseExposition, sampleSum, scrape } from '../helpers/metrics-text.js';
import { h264Clip } from '../helpers/videos.js';
import { chunksOf, waitFor } from '../helpers/video-tasks.js';

const skip = prometheusMissing();
let t: TestApp;
let prom: Prometheus;

before(async () => {
  if (skip) return;
  t = await startTestApp({ SIGHTFLOW_METRICS_PORT: '0' });
  prom = await startPrometheus([`127.0.0.1:${t.app.metricsPort}`]);
});
after(async () => {
  await prom?.close();
  await t?.close();
});

const png = async () =>
  (
    await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: 200, g: 120, b: 40 } } })
      .png()
      .toBuffer()
  ).toString('base64');

/** A cheap video task (no model runs: a feature step with nothing selected) for `key`; its terminal chunk. */
async function videoTask(key: string, maxFrames: number): Promise<any> {
  const data = readFileSync(await h264Clip()).toString('base64');
  const created = await api(t, '/v1/video/process', {
    method: 'POST',
    key,
    json: {
      input: [{ type: 'video_base64', data, sampling: { mode: 'fps', value: 2 }, max_frames: maxFrames }],
      steps: [{ model: 'feature' }],
    },
  });
  assert.equal(created.status, 202, created.text);
  const id = created.body.id as string;
  await waitFor(
    `task ${id}`,
    async () => {
      const r = await api(t, `/v1/video/tasks/${id}`, { key });
      return ['succeeded', 'failed', 'cancelled'].includes(r.body?.status) ? r.body : null;
    },
    60_000,
  );
  const stream = await api(t, `/v1/video/tasks/${id}/stream`, { key });
  const last = chunksOf(Buffer.from(stream.text)).at(-1);
  assert.equal(last.finish_reason, 'max_frames', stream.text.slice(-500));
  return last;
}

async function usageTotals(projectId: string): Promise<Record<string, number>> {
  const r = await admin(t, `/admin/v1/projects/${projectId}/usage`);
  assert.equal(r.status, 200, r.text);
  const out: Record<string, number> = { requests: 0, input_tokens: 0, output_tokens: 0, frames: 0, ms: 0 };
  for (const d of r.body.data) for (const k of Object.keys(out)) out[k]! += Number(d[k]);
  return out;
}

test("Prometheus scrapes it: requests per route, a model's inferences, a task's frames and usage per project are what was sent", {
  skip,
  timeout: 120_000,
}, async () => {
  // Body bytes as the client saw them: each reply's text, each request's JSON text.
  let projectBytesOut = 0,
    detectBytesIn = 0;
  for (let i = 0; i < 7; i++) {
    const r = await api(t, '/v1/project');
    assert.equal(r.status, 200);
    projectBytesOut += Buffer.byteLength(r.text);
  }
  for (let i = 0; i < 3; i++) assert.equal((await api(t, '/v1/video/tasks/vt_doesnotexist')).status, 404);
  const image_base64 = await png();
  for (let i = 0; i < 2; i++) {
    const r = await api(t, '/v1/vision/detect', { method: 'POST', json: { image_base64 } });
    assert.equal(r.status, 200, r.text);
    detectBytesIn += Buffer.byteLength(JSON.stringify({ image_base64 }));
  }
  const last = await videoTask(t.key, 6);
  // Counters are cumulative: the traffic goes first, while Prometheus makes its first scrape (its target
  // discovery waits about 5 s).
  assert.equal(await prom.settle('up{job="sightflow"}', 1), 1, 'Prometheus scrapes the metrics port');

  const requests = (route: string, status: number) =>
    `sum(sightflow_http_requests_total{route="${route}",status="${status}"})`;
  assert.equal(await prom.settle(requests('/v1/project', 200), 7), 7);
  assert.equal(await prom.settle(requests('/v1/video/tasks/:id', 404), 3), 3);
  assert.equal(await prom.settle(requests('/v1/vision/detect', 200), 2), 2);
  assert.equal(await prom.settle('sum(sightflow_http_request_duration_seconds_count{route="/v1/project"})', 7), 7);
  assert.equal(
    await prom.settle('sum(sightflow_http_response_body_bytes_total{route="/v1/project"})', projectBytesOut),
    projectBytesOut,
  );
  assert.equal(
    await prom.settle('sum(sightflow_http_request_body_bytes_total{route="/v1/vision/detect"})', detectBytesIn),
    detectBytesIn,
  );

  // The detector's inference count is the serving counter GET /v1/models/:id shows, one run per image.
  const model = await api(t, '/v1/models/centernet-coco');
  assert.equal(model.body.serving.requests, 2, model.text);
  assert.equal(await prom.settle('sightflow_model_requests_total{model="centernet-coco"}', 2), 2);
  assert.equal(await prom.settle('sightflow_model_executions_total{model="centernet-coco"}', 2), 2);
  assert.equal(await prom.settle('sightflow_model_compute_seconds_count{model="centernet-coco"}', 2), 2);
  assert.equal(await prom.scalar('sightflow_model_loaded{model="centernet-coco"}'), 1);
  // Its sessions by device: on the CPU here, at least the one that ran (a second may load for overlapping runs).
  assert.ok(((await prom.scalar('sightflow_model_sessions{model="centernet-coco",device="cpu"}')) ?? 0) >= 1);
  assert.equal(await prom.scalar('count(sightflow_model_sessions{model="centernet-coco",device!="cpu"})'), null);
  // The cards' gauges: this host's as its driver lists them; none but the count where there is no driver.
  const cards = await gpuStatus();
  assert.equal(await prom.scalar('sightflow_gpu_devices'), cards.devices.length);
  if (!cards.available) assert.equal(await prom.scalar('count({__name__=~"sightflow_gpu_.+_(ratio|bytes)"})'), null);

  // The task's frames: processed as archived, decoded and dropped as its terminal chunk's usage says.
  assert.equal(await prom.settle('sightflow_video_frames_total{stage="processed"}', 6), 6);
  assert.equal(
    await prom.settle('sightflow_video_frames_total{stage="decoded"}', last.usage.decoded_frames),
    last.usage.decoded_frames,
  );
  assert.equal(
    await prom.settle('sightflow_video_frames_total{stage="dropped"}', last.usage.dropped_frames),
    last.usage.dropped_frames,
  );
  assert.equal(await prom.settle('sightflow_video_tasks_finished_total{status="succeeded"}', 1), 1);

  const usage = await usageTotals(t.projectId);
  assert.equal(usage.requests, 3, JSON.stringify(usage));
  for (const [kind, n] of Object.entries(usage)) {
    assert.equal(await prom.settle(`sightflow_usage_units_total{project="${t.projectId}",kind="${kind}"}`, n), n, kind);
  }

  const text = (await scrape(t.app.metricsPort!)).text;
  assert.deepEqual(promtoolCheck(text), { status: 0, output: '' });
  const om = await scrape(t.app.metricsPort!, 'application/openmetrics-text; version=1.0.0');
  assert.match(om.contentType, /^application\/openmetrics-text; version=1\.0\.0/);
  assert.ok(om.text.endsWith('# EOF\n'));
  assert.match(om.text, /^sightflow_http_requests_total\{route="\/v1\/project",method="GET",status="200"\} 7$/m);
  // Every name carries the prefix; no label holds an id, key or URL.
  for (const s of parseExposition(text)) {
    assert.match(s.name, /^sightflow_/);
    for (const v of Object.values(s.labels))
      assert.doesNotMatch(v, /^(vt_|sk_sf_|https?:)|\/vt_/, `${s.name} ${JSON.stringify(s.labels)}`);
  }
});

test("after a run over three projects (vision, video, vectors) the usage counters equal each project's usage report", {
  skip,
  timeout: 120_000,
}, async () => {
  const project = async (name: string) => {
    const p = await admin(t, '/admin/v1/projects', { method: 'POST', json: { name } });
    assert.equal(p.status, 201, p.text);
    const k = await admin(t, `/admin/v1/projects/${p.body.id}/keys`, { method: 'POST', json: { name: 'metrics' } });
    assert.equal(k.status, 201, k.text);
    return { id: p.body.id as string, key: k.body.key as string };
  };
  const [vision, video, vectors] = [await project('vision'), await project('video'), await project('vectors')];

  const image_base64 = await png();
  assert.equal(
    (await api(t, '/v1/vision/detect', { method: 'POST', key: vision.key, json: { image_base64 } })).status,
    200,
  );
  assert.equal(
    (await api(t, '/v1/vision/ocr', { method: 'POST', key: vision.key, json: { image_base64 } })).status,
    200,
  );
  assert.equal(
    (
      await api(t, '/v1/vision/describe', {
        method: 'POST',
        key: vision.key,
        json: { image_base64, prompt: 'What is it?' },
      })
    ).status,
    200,
  );

  await videoTask(video.key, 4);

  const c = await api(t, '/v1/vectors/collections', { method: 'POST', key: vectors.key, json: { name: 'notes' } });
  assert.equal(c.status, 201, c.text);
  const items = ['a red bicycle', 'two cats on a sofa', 'the harbour at night'].map((text, i) => ({
    text,
    metadata: { n: i },
  }));
  const ix = await api(t, `/v1/vectors/collections/${c.body.id}/index`, {
    method: 'POST',
    key: vectors.key,
    json: { items },
  });
  assert.equal(ix.status, 200, ix.text);
  for (const q of ['bicycle', 'cat']) {
    const s = await api(t, `/v1/vectors/collections/${c.body.id}/search`, {
      method: 'POST',
      key: vectors.key,
      json: { text: q, top_k: 2 },
    });
    assert.equal(s.status, 200, s.text);
  }
  const f = await api(t, `/v1/vectors/collections/${c.body.id}/search`, {
    method: 'POST',
    key: vectors.key,
    json: { text: 'cat', top_k: 2, filter: { n: { $eq: 1 } } },
  });
  assert.equal(f.status, 200, f.text);

  const reports = {
    vision: await usageTotals(vision.id),
    video: await usageTotals(video.id),
    vectors: await usageTotals(vectors.id),
  };
  assert.equal(reports.vision.requests, 3);
  assert.ok(reports.video.frames === 4 && reports.vectors.input_tokens > 0, JSON.stringify(reports));
  const samples = parseExposition((await scrape(t.app.metricsPort!)).text);
  for (const [name, p] of Object.entries({ vision, video, vectors })) {
    const report = reports[name as keyof typeof reports];
    for (const [kind, n] of Object.entries(report)) {
      assert.equal(sampleSum(samples, 'sightflow_usage_units_total', { project: p.id, kind }), n, `${name} ${kind}`);
      assert.equal(
        await prom.settle(`sightflow_usage_units_total{project="${p.id}",kind="${kind}"}`, n),
        n,
        `${name} ${kind} in Prometheus`,
      );
    }
  }
  // The vector searches by plan: two without a filter (graph), one filtered over one matching item (exact).
  assert.equal(sampleSum(samples, 'sightflow_vector_index_search_seconds_count', { plan: 'graph' }), 2);
  assert.equal(sampleSum(samples, 'sightflow_vector_index_search_seconds_count', { plan: 'exact' }), 1);
  assert.equal(sampleSum(samples, 'sightflow_vector_items'), 3);
  assert.equal(sampleSum(samples, 'sightflow_vector_index_changes_behind'), 0);
});
