// The GPU check's camera rows (scripts/gpu-check.sh): N live H.264 1080p cameras into the whole sightflow
// server, each a video task that detects and tracks at 5 frames a second, once per decoder path in the same
// run (SIGHTFLOW_VIDEO_HWACCEL=cuda, the NVIDIA decoder; none, software; auto, whichever the host offers).
// The server is the bundle's (server/) with the addon built with FFmpeg and the FFmpeg it loads from video/
// (scripts/lib/stage-video.sh); the cameras are an HTTP server in this process serving the clip as endless
// real-time MPEG-TS (ts-cameras.ts). Per row, over a measured window after every camera's first chunk:
//   - the decoder path the tasks took, from the server's 'video decoder opened' lines (asked, taken, why not);
//   - frames processed per second per camera (chunks at an SSE subscriber of each task);
//   - lag: the subscriber's clock when a chunk arrived minus the chunk's received_at_ms (when the decoder
//     received the frame), p50 and p95 over every chunk of every camera (docs/video.md, "Live sources");
//   - drops: the sampled frames the "never behind" policy replaced (each camera keeps 5 of its 25 frames a
//     second; a sampled frame not taken before the next replaced it is dropped), and whether every loss was
//     such a drop: no reconnect, no error chunk, the decoder read every frame the camera sent, and every frame
//     it read was either processed or counted in dropped_frames;
//   - the server process's CPU (all its threads, from /proc) per processed frame and per camera frame (every
//     frame the cameras sent is decoded, whichever path), and on a GPU the card's
//     kernels' and NVDEC's utilisation and its memory over the window (the driver's library: gpu-sampler.ts).
//   node camera-rows.js --server DIR --models DIR --video DIR --providers cuda|cpu --rows cuda:50,none:50
//                       [--seconds 8] [--warm-s 20] --out FILE
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cpuMs, threadCpuMs } from '../proc-cpu.js';
import { sseReads } from '../sse-reads.js';
import { sampleGpu, useServerAddon } from './gpu-sampler.js';
import { type Server, startServer, stopServer } from './staged-server.js';
import { startTsCameras, type TsCameras } from './ts-cameras.js';

/** Frames a second each camera's task samples (the issue's cameras are sampled at 5 fps). */
const SAMPLE_FPS = 5;
const HWACCELS = ['cuda', 'none', 'auto'] as const;
type Hwaccel = (typeof HWACCELS)[number];

interface Args {
  server: string;
  models: string;
  video: string;
  providers: string;
  rows: Array<{ hwaccel: Hwaccel; cameras: number }>;
  seconds: number;
  warmS: number;
  out: string;
}

function parseArgs(argv: string[]): Args {
  const v = (name: string, dflt?: string): string => {
    const i = argv.indexOf(`--${name}`);
    const got = i >= 0 ? argv[i + 1] : dflt;
    if (got === undefined) throw new Error(`camera-rows: --${name} is required`);
    return got;
  };
  const rows = v('rows', 'cuda:50,none:50')
    .split(',')
    .map((r) => {
      const [hw, n] = r.split(':');
      if (!HWACCELS.includes(hw as Hwaccel) || !(Number(n) > 0)) throw new Error(`camera-rows: bad row ${r}`);
      return { hwaccel: hw as Hwaccel, cameras: Number(n) };
    });
  return {
    server: resolve(v('server')),
    models: resolve(v('models')),
    video: resolve(v('video')),
    providers: v('providers', 'cpu'),
    rows,
    seconds: Number(v('seconds', '8')),
    warmS: Number(v('warm-s', '20')),
    out: v('out'),
  };
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const round = (x: number, d = 1) => (Number.isFinite(x) ? +x.toFixed(d) : null);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function api(s: Server, path: string, body?: unknown): Promise<{ status: number; json: any }> {
  const r = await fetch(`http://127.0.0.1:${s.port}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await r.text();
  return { status: r.status, json: text ? JSON.parse(text) : null };
}

/** What one camera's subscriber saw: its chunks' stream_info at the window's edges, and its chunks inside. */
interface Camera {
  id: string;
  first: boolean;
  /** stream_info of the last chunk before the window, and of the last one inside it. */
  before?: Record<string, any>;
  last?: Record<string, any>;
  processed: number;
  lags: number[];
  errors: string[];
}

async function row(a: Args, cams: TsCameras, hwaccel: Hwaccel, n: number, work: string) {
  const decoders = new Map<string, { hwaccel: string; fallback: string | null }>();
  const onLine = (line: string) => {
    if (!line.includes('"video decoder opened"')) return;
    const j = JSON.parse(line) as { taskId: string; hwaccel: string; fallback: string | null };
    decoders.set(j.taskId, { hwaccel: j.hwaccel, fallback: j.fallback });
  };
  const libs = existsSync(join(a.video, 'libavcodec.so.59'));
  const t0 = performance.now();
  const s = await startServer(
    a,
    join(work, `data-${hwaccel}-${n}`),
    {
      SIGHTFLOW_ADDON_PATH: join(a.video, 'sightflow.node'),
      // The addon finds the bundle's FFmpeg (and libjpeg) beside it before the host's.
      LD_LIBRARY_PATH: [a.video, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':'),
      SIGHTFLOW_VIDEO_HWACCEL: hwaccel,
      SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
      // Every camera runs at once (by default a node runs cores / 2 tasks and queues the rest).
      SIGHTFLOW_WORKER_CONCURRENCY: String(n),
    },
    onLine,
  );
  const startMs = Math.round(performance.now() - t0);
  const ac = new AbortController();
  const cameras: Camera[] = [];
  let windowOpen = false;
  let windowClosed = false;
  try {
    for (let i = 0; i < n; i++) {
      const r = await api(s, '/v1/video/process', {
        input: [{ type: 'video_url', url: cams.url(i), sampling: { mode: 'fps', value: SAMPLE_FPS } }],
        steps: [{ model: 'detect' }],
      });
      if (r.status !== 202) throw new Error(`camera ${i}: ${r.status} ${JSON.stringify(r.json)}`);
      cameras.push({ id: r.json.id as string, first: false, processed: 0, lags: [], errors: [] });
    }
    const readers = cameras.map(async (c) => {
      const res = await fetch(`http://127.0.0.1:${s.port}/v1/video/tasks/${c.id}/stream`, {
        headers: { authorization: `Bearer ${s.key}` },
        signal: ac.signal,
      });
      try {
        for await (const { now, chunks } of sseReads(res.body!)) {
          for (const ch of chunks) {
            if (ch.error) c.errors.push(`${ch.error.code}: ${ch.error.message}`);
            if (ch.finish_reason !== null) continue;
            c.first = true;
            if (windowClosed) continue;
            if (!windowOpen) {
              c.before = ch.stream_info;
              continue;
            }
            c.processed++;
            c.last = ch.stream_info;
            c.lags.push(now - ch.stream_info.received_at_ms);
          }
        }
      } catch (e) {
        if (!ac.signal.aborted) c.errors.push(String(e));
      }
    });
    // Connecting, the first key frame and the model's first load are not the steady state.
    const warmEnd = performance.now() + a.warmS * 1000;
    while (performance.now() < warmEnd && !cameras.every((c) => c.first)) await sleep(100);
    const firstChunkS = round((performance.now() - t0 - startMs) / 1000);
    await sleep(1000);
    const cpu0 = cpuMs(s.child.pid!);
    const main0 = threadCpuMs(s.child.pid!);
    const w0 = performance.now();
    windowOpen = true;
    const card = sampleGpu();
    await sleep(a.seconds * 1000);
    const gpu = await card.stop();
    windowClosed = true;
    const cpu = cpuMs(s.child.pid!) - cpu0;
    const main = threadCpuMs(s.child.pid!) - main0;
    const windowS = (performance.now() - w0) / 1000;
    ac.abort();
    await Promise.allSettled(readers);
    await Promise.all(cameras.map((c) => api(s, `/v1/video/tasks/${c.id}/cancel`, {}).catch(() => undefined)));

    // Per camera: frames decoded, dropped (sampling skips and late drops), processed, over the window.
    let decoded = 0;
    let lateDrops = 0;
    let unaccounted = 0;
    let reconnects = 0;
    for (const c of cameras) {
      if (!c.before || !c.last) continue;
      const dec = c.last.decoded_frames - c.before.decoded_frames;
      const dropped = c.last.dropped_frames - c.before.dropped_frames;
      decoded += dec;
      // Every frame read is either processed or counted dropped (a sampling skip or a replaced sampled frame).
      unaccounted += Math.abs(dec - dropped - c.processed);
      // The sampler keeps SAMPLE_FPS of the camera's frames a second; those not processed were replaced.
      lateDrops += Math.max(0, Math.round((dec * SAMPLE_FPS) / cams.fps) - c.processed);
      reconnects += (c.last.reconnects ?? 0) - (c.before.reconnects ?? 0);
    }
    const processed = cameras.reduce((x, c) => x + c.processed, 0);
    const rates = cameras.map((c) => c.processed / windowS);
    const lags = cameras.flatMap((c) => c.lags);
    const errors = [...new Set(cameras.flatMap((c) => c.errors))];
    // The cameras sent cams.fps frames a second each; the decoders must have read (nearly) all of them.
    const sentInWindow = cams.fps * windowS * n;
    const readAll = decoded >= 0.9 * sentInWindow;
    const whyNot = [
      ...(reconnects > 0 ? [`${reconnects} reconnect(s)`] : []),
      ...(errors.length ? [`errors: ${errors.slice(0, 3).join('; ')}`] : []),
      ...(readAll ? [] : [`the decoders read ${decoded} of ~${Math.round(sentInWindow)} frames sent`]),
      ...(unaccounted > 0 ? [`${unaccounted} frame(s) neither processed nor counted dropped`] : []),
      ...(cameras.some((c) => !c.last) ? [`${cameras.filter((c) => !c.last).length} camera(s) sent no chunk`] : []),
    ];
    const paths: Record<string, number> = {};
    const fallbacks = new Set<string>();
    for (const c of cameras) {
      const d = decoders.get(c.id);
      const path = hwaccel === 'none' ? 'software' : (d?.hwaccel ?? 'unknown');
      paths[path] = (paths[path] ?? 0) + 1;
      if (d?.fallback) fallbacks.add(d.fallback);
    }
    return {
      hwaccel,
      cameras: n,
      providers: s.providers,
      ffmpeg: libs ? 'bundle (video/)' : 'host',
      decoder_paths: paths,
      fallback: fallbacks.size ? [...fallbacks].join('; ') : null,
      server_start_ms: startMs,
      first_chunks_s: firstChunkS,
      window_s: round(windowS, 2),
      fps_per_camera_median: round(pct(rates, 0.5), 2),
      fps_per_camera_min: round(Math.min(...rates), 2),
      processed,
      lag_p50_ms: round(pct(lags, 0.5), 0),
      lag_p95_ms: round(pct(lags, 0.95), 0),
      late_drops_per_camera: round(lateDrops / n, 1),
      drops_by_policy: whyNot.length === 0,
      drops_not_by_policy: whyNot.length ? whyNot.join('; ') : null,
      cpu_ms_per_frame: processed > 0 ? round(cpu / processed, 2) : null,
      cpu_ms_per_camera_frame: decoded > 0 ? round(cpu / decoded, 2) : null,
      // The server's event loop, one core for all its cameras: 1000 / (this x 5) cameras fill it.
      main_thread_ms_per_frame: processed > 0 ? round(main / processed, 2) : null,
      server_cores: round(cpu / 1000 / windowS, 2),
      nvdec_utilisation_pct:
        gpu?.decoder_utilization_mean == null ? null : Math.round(gpu.decoder_utilization_mean * 100),
      // The card over the window (null without a driver): its kernels, decoders and memory.
      gpu,
    };
  } finally {
    ac.abort();
    await stopServer(s);
  }
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  useServerAddon(a.server);
  const work = mkdtempSync(join(tmpdir(), 'sf-camera-rows-'));
  const cams = await startTsCameras(join(a.video, 'camera.ts'));
  const rows: Array<Record<string, unknown>> = [];
  // Written after every row as well: a check stopped from outside keeps the rows it made.
  const write = () =>
    writeFileSync(
      a.out,
      `${JSON.stringify(
        {
          source: `H.264 1920x1080 ${cams.fps} fps MPEG-TS over HTTP, looped in real time (${cams.frames} frames a loop)`,
          sample_fps: SAMPLE_FPS,
          steps: 'detect (default detector) + tracking',
          rows,
        },
        null,
        2,
      )}\n`,
    );
  try {
    for (const r of a.rows) {
      const x = await row(a, cams, r.hwaccel, r.cameras, work);
      rows.push(x);
      process.stderr.write(`cameras: ${JSON.stringify(x)}\n`);
      write();
    }
  } finally {
    await cams.close();
    rmSync(work, { recursive: true, force: true });
  }
  write();
}

await main();
