// `npm run bench -- live --streams N[,M...] [--source-fps F]`: N live 720p cameras (one loopback RTSP server,
// N clients; each sends F frames a second, default 25) sampled at 5 fps, each a detect task with tracking
// through the real server, for a while; per camera the frames it processed (its real rate), dropped, and
// its lag (a frame's arrival at the decoder to its chunk at an SSE subscriber). A camera count "holds" when
// every camera keeps >= 90% of 5 fps and the p95 lag over all is under 1 s. The bound (the peer) is what the
// detector alone processes per second on this machine (a 720p frame's tensor, in-process, best of one
// session with every thread or one per core) divided by 5.
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { evalDir } from '../eval/dir.js';
import { ModelRegistry } from '../src/inference/registry.js';
import { InferenceRuntime } from '../src/inference/runtime.js';
import { projectRoot } from '../src/base/paths.js';
import { Detector, modelInput } from '../src/detection/detect.js';
import { api, startTestApp, type TestApp } from '../test/helpers/app.js';
import { startRtspServer, synthetic720p } from '../test/helpers/live-sources.js';
import { sseReads } from './sse-reads.js';

const FPS = 5;
const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const mb = (b: number) => Math.round(b / 1048576);

/** The evaluation photo the detector-alone bound is timed on (stretched to 720p): without it, no density run. */
export const DENSITY_PHOTO = 'detection_coco128/images/000000000094.jpg';

/** Images/s of the detector alone on a 720p frame: the better of 1 session x all threads and 1 per core. */
export async function detectorAlone(ms: number): Promise<{ ips: number; split: string }> {
  const registry = await ModelRegistry.open('./data', { modelsDir: join(projectRoot, 'data', 'models') });
  const photo = join(evalDir(), DENSITY_PHOTO);
  const { data, info } = await sharp(photo)
    .resize(1280, 720, { fit: 'fill' })
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const cores = availableParallelism();
  let best = { ips: 0, split: '' };
  for (const [sessions, threads] of [
    [1, cores],
    [cores, 1],
  ] as const) {
    const rts = Array.from(
      { length: sessions },
      () =>
        new InferenceRuntime({
          providers: ['cpu'],
          intraOpThreads: threads,
          sessions: 1,
          log: { info() {}, warn() {} },
        }),
    );
    try {
      const dets = await Promise.all(rts.map((rt) => Detector.create(rt, registry)));
      const input = (await modelInput({ data, width: info.width, height: info.height, channels: 3 }, dets[0]!.pre))
        .tensor;
      const feed = () => ({ [dets[0]!.pre.inputName]: input });
      for (const d of dets) await d.handle.run(feed());
      let n = 0;
      const end = performance.now() + ms;
      const t0 = performance.now();
      await Promise.all(
        dets.flatMap((d) =>
          [0, 1].map(async () => {
            while (performance.now() < end) {
              await d.handle.run(feed());
              n++;
            }
          }),
        ),
      );
      const ips = n / ((performance.now() - t0) / 1000);
      if (ips > best.ips) best = { ips, split: `${sessions} x ${threads} threads` };
    } finally {
      await Promise.all(rts.map((rt) => rt.close()));
    }
  }
  return best;
}

interface Camera {
  id: string;
  processed: number;
  dropped: number;
  delays: number[];
}

/** N cameras for `seconds`: per camera frames/s and drops, lag p50/p95 over all, RSS at half time and end. */
async function cameras(t: TestApp, url: string, n: number, seconds: number) {
  const cams: Camera[] = [];
  for (let i = 0; i < n; i++) {
    const r = await api(t, '/v1/video/process', {
      method: 'POST',
      json: {
        input: [{ type: 'video_url', url, sampling: { mode: 'fps', value: FPS } }],
        steps: [{ model: 'detect' }],
      },
    });
    if (r.status !== 202) throw new Error(`camera ${i}: ${r.text}`);
    cams.push({ id: r.body.id as string, processed: 0, dropped: 0, delays: [] });
  }
  const ac = new AbortController();
  let started = 0;
  let rssHalf = 0;
  const warmMs = 4000; // connecting and the first frames are not the steady state
  const readers = cams.map(async (c) => {
    const res = await fetch(`${t.url}/v1/video/tasks/${c.id}/stream`, {
      headers: { authorization: `Bearer ${t.key}` },
      signal: ac.signal,
    });
    let dropped0 = -1;
    try {
      for await (const { now, chunks } of sseReads(res.body!)) {
        for (const ch of chunks) {
          if (ch.finish_reason !== null || !started || now < started + warmMs) continue;
          if (dropped0 < 0) dropped0 = ch.stream_info.dropped_frames;
          c.processed++;
          c.dropped = ch.stream_info.dropped_frames - dropped0;
          c.delays.push(now - ch.stream_info.received_at_ms);
        }
      }
    } catch (e) {
      if (!ac.signal.aborted) throw e;
    }
  });
  started = Date.now();
  await new Promise((r) => setTimeout(r, warmMs + (seconds * 1000) / 2));
  rssHalf = process.memoryUsage().rss;
  await new Promise((r) => setTimeout(r, (seconds * 1000) / 2));
  const rssEnd = process.memoryUsage().rss;
  // What GET /v1/video/tasks/:id reports for each camera, next to what its subscriber counted.
  const reported = await Promise.all(cams.map(async (c) => (await api(t, `/v1/video/tasks/${c.id}`)).body));
  ac.abort();
  await Promise.allSettled(readers);
  for (const c of cams) await api(t, `/v1/video/tasks/${c.id}/cancel`, { method: 'POST' });
  const rates = cams.map((c) => c.processed / seconds);
  const all = cams.flatMap((c) => c.delays);
  return {
    streams: n,
    fps_sum: rates.reduce((a, b) => a + b, 0),
    fps_min: Math.min(...rates),
    fps_median: pct(rates, 0.5),
    fps_max: Math.max(...rates),
    dropped_min: Math.min(...cams.map((c) => c.dropped)),
    dropped_max: Math.max(...cams.map((c) => c.dropped)),
    lag_p50_ms: Math.round(pct(all, 0.5)),
    lag_p95_ms: Math.round(pct(all, 0.95)),
    rss_half_mb: mb(rssHalf),
    rss_end_mb: mb(rssEnd),
    states: reported.map((b) => b.status as string),
    // Each camera's rate as GET /v1/video/tasks/:id gives it (processed frames over the task's whole run,
    // its connecting seconds included, so a little under the rate counted above).
    reported_fps: reported.map((b) => (b.progress as { processed_fps?: number } | undefined)?.processed_fps ?? null),
    holds: rates.every((r) => r >= 0.9 * FPS) && pct(all, 0.95) < 1000,
  };
}

export interface DensityResult {
  seconds: number;
  source_fps: number;
  detector_alone_fps: number;
  bound: number;
  held: number;
  ratio: number;
  rows: Awaited<ReturnType<typeof cameras>>[];
}

/** Prints each camera count's row and returns the summary (also as the JSON line with `json`). */
export async function runStreams({
  quick,
  json,
  streams,
  sourceFps = 25,
}: {
  quick: boolean;
  json: boolean;
  streams: number[];
  sourceFps?: number;
}): Promise<DensityResult> {
  const seconds = quick ? 8 : 30;
  const alone = await detectorAlone(quick ? 2000 : 5000);
  const bound = alone.ips / FPS;
  console.log(
    `live density: detector alone ${alone.ips.toFixed(2)} 720p frames/s (${alone.split}) -> bound ${bound.toFixed(1)} cameras at ${FPS} fps; sources at ${sourceFps} fps`,
  );
  // A camera is a video task: by default a node runs cores / 2 of them at once and queues the rest, so the
  // node is told to run them all (as an operator running N cameras must).
  // SIGHTFLOW_HEAP_GROWING_PERCENT in the bench's environment reaches the server (an A/B of V8's heap growth).
  const heap = process.env.SIGHTFLOW_HEAP_GROWING_PERCENT;
  const t = await startTestApp({
    SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
    SIGHTFLOW_LOG_LEVEL: 'silent',
    SIGHTFLOW_WORKER_CONCURRENCY: String(Math.max(...streams)),
    ...(heap ? { SIGHTFLOW_HEAP_GROWING_PERCENT: heap } : {}),
  });
  const rtsp = await startRtspServer(await synthetic720p(10, sourceFps));
  const rows = [];
  try {
    for (const n of streams) {
      const r = await cameras(t, rtsp.url, n, seconds);
      rows.push(r);
      const share = r.fps_sum / alone.ips;
      console.log(
        `  ${n} cameras: ${r.holds ? 'holds' : 'does not hold'}; all cameras together ${r.fps_sum.toFixed(2)} frames/s = ${share.toFixed(2)} of the detector alone; frames/s per camera min ${r.fps_min.toFixed(2)} median ${r.fps_median.toFixed(2)} max ${r.fps_max.toFixed(2)}; ` +
          `dropped per camera ${r.dropped_min}-${r.dropped_max}; lag p50 ${r.lag_p50_ms} p95 ${r.lag_p95_ms} ms; RSS ${r.rss_half_mb} -> ${r.rss_end_mb} MB`,
      );
    }
    const held = Math.max(0, ...rows.filter((r) => r.holds).map((r) => r.streams));
    console.log(`most cameras held: ${held} of the bound ${bound.toFixed(1)} (ratio ${(held / bound).toFixed(2)})`);
    const result = {
      seconds,
      source_fps: sourceFps,
      detector_alone_fps: Math.round(alone.ips * 100) / 100,
      bound: Math.round(bound * 10) / 10,
      held,
      ratio: Math.round((held / bound) * 100) / 100,
      rows,
    };
    if (json) console.log(JSON.stringify({ suite: 'live', mode: 'streams', ...result }));
    return result;
  } finally {
    await rtsp.close();
    await t.close();
  }
}
