// The live lag histogram against the chunks themselves: a real RTSP server on loopback plays a clip of people
// walking, a live task detects them, and this test reads the task's stream as chunks are archived. Each
// chunk's lag (when it reached the subscriber, minus its stream_info.received_at_ms: the same epoch clock)
// gives a p95; the metric's p95, read from its buckets as Prometheus's histogram_quantile does, agrees within
// 50 ms (the buckets are 50 ms wide up to 3 s, and delivery to a loopback subscriber adds a few ms). Two
// frames a second, so that the detector keeps up on a loaded machine and the test takes seconds.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { TUD_CAMPUS } from '../helpers/eval-data.js';
import { evalDataSkip } from '../../eval/dir.js';
import { liveClip, startRtspServer, type RtspSource } from '../helpers/live-sources.js';
import { chunksOf, createTask, peopleTask, waitStatus } from '../helpers/video-tasks.js';
import { histogramQuantile, parseExposition, sampleSum, scrape } from '../helpers/metrics-text.js';

const skip = evalDataSkip('tracking/TUD-Campus/TUD-Campus.mp4');
let t: TestApp;
let rtsp: RtspSource;
before(async () => {
  if (skip) return;
  t = await startTestApp({ SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true', SIGHTFLOW_METRICS_PORT: '0' });
  // A short, small clip (it loops forwards then backwards): its encoding takes a moment, not half a minute.
  rtsp = await startRtspServer(await liveClip(TUD_CAMPUS(), { seconds: 4, height: 288 }));
});
after(async () => {
  await rtsp?.close();
  await t?.close();
});

/** Reads a task's stream to its end; every frame chunk with the time (epoch ms) it arrived here. */
async function readTimed(id: string): Promise<Array<{ chunk: any; at: number }>> {
  const res = await fetch(`${t.url}/v1/video/tasks/${id}/stream`, { headers: { authorization: `Bearer ${t.key}` } });
  assert.equal(res.status, 200);
  const out: Array<{ chunk: any; at: number }> = [];
  const reader = res.body!.getReader();
  let text = '';
  for (;;) {
    const r = await reader.read();
    if (r.done) break;
    const at = Date.now();
    text += Buffer.from(r.value).toString('utf8');
    const end = text.lastIndexOf('\n\n');
    if (end < 0) continue;
    for (const chunk of chunksOf(Buffer.from(text.slice(0, end + 2)))) out.push({ chunk, at });
    text = text.slice(end + 2);
  }
  return out.filter((x) => x.chunk.finish_reason === null);
}

test("live lag: the histogram's p95 is the chunks' own p95 within 50 ms", { skip, timeout: 120_000 }, async () => {
  const id = await createTask(t, peopleTask(rtsp.url, { max_frames: 12, sampling: { mode: 'fps', value: 2 } }));
  const frames = await readTimed(id);
  const done = await waitStatus(t, id, ['succeeded', 'failed'], 60_000);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.equal(frames.length, 12);

  const lags = frames.map((f) => (f.at - f.chunk.stream_info.received_at_ms) / 1000).sort((a, b) => a - b);
  // The nearest-rank p95 of the chunks, and the histogram's p95 as histogram_quantile interpolates it.
  const own = lags[Math.ceil(0.95 * lags.length) - 1]!;
  const samples = parseExposition((await scrape(t.app.metricsPort!)).text);
  const buckets = samples
    .filter((s) => s.name === 'sightflow_video_live_lag_seconds_bucket')
    .map((s) => ({ le: s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), count: s.value }));
  assert.equal(sampleSum(samples, 'sightflow_video_live_lag_seconds_count'), 12);
  const fromMetric = histogramQuantile(0.95, buckets);
  assert.ok(
    Math.abs(fromMetric - own) <= 0.05,
    `p95 from the histogram ${fromMetric.toFixed(3)} s, from the chunks ${own.toFixed(3)} s (lags ${lags.map((l) => l.toFixed(3)).join(' ')})`,
  );
  const r = await api(t, `/v1/video/tasks/${id}`);
  assert.equal(r.body.usage.processed_frames, 12);
});
