// Where a live camera's frames cost the main thread of the process that runs them: `sightflow serve` (its
// video worker on) with N live cameras (one loopback RTSP server looping the PETS09-S2L1 walk, people
// crossing a square, re-encoded to 1080p H.264 at the sampled rate, as a camera set to it sends), each a
// detect task with tracking; its main thread sampled by Linux perf (bench/perf-sample.ts) while SSE
// subscribers read every task, each sample put in the part its innermost known frame belongs to. Its main
// thread's CPU per processed frame bounds how many cameras one process holds whatever runs the model
// (docs/capacity.md, "A camera frame's main-thread work").
//   node --import tsx bench/camera-cpu-profile.ts [--cameras 4] [--seconds 15] [--model builtin|tiny]
//     [--stacks FILE] [--json]
//   --model tiny: the detector with next to no compute (bench fronts --model tiny), as behind a GPU; its two
//   fixed boxes make tracking cheaper than the walk's people do.
// DATABASE_URL in the environment: the server on that PostgreSQL database instead of the embedded one.
// Needs perf and the evaluation data. Run by hand, not by the suite.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evalDir } from '../eval/dir.js';
import { argValue } from '../eval/lib/model-choice.js';
import { liveClip, startRtspServer } from '../test/helpers/live-sources.js';
import { attribute, requirePerf, sampleThread } from './perf-sample.js';
import { cpuMs, threadCpuMs } from './proc-cpu.js';
import { sseReads } from './sse-reads.js';
import { start, writeTinyDetector, type Server } from './suites/fronts.js';

const FPS = 5;

/** The parts, tried on each frame from the innermost out; the first frame that names one decides. */
const PARTS: Array<[string, RegExp]> = [
  ['embedded database (PGlite)', /pglite|wasm/],
  ['PostgreSQL client (DATABASE_URL)', /node_modules\/(pg|pg-protocol|pg-pool)\//],
  ['SSE subscribers (uWS writes)', /src\/http\/(sse|uws)|uws_/],
  ['stream: chunk, archive, fan-out', /src\/video\/stream\//],
  ['tracking', /src\/native\/track|pipeline\/(target-tracker|continued-track-ids|track-summary)|Tracker/],
  ['analytics (lines, zones, dwell)', /src\/video\/analytics\//],
  ['moments index', /src\/video\/moments\//],
  ['detector: input, outputs, boxes', /src\/detection\//],
  ['model queue, runtime, session thread messages', /src\/inference\/|internal\/worker|messageport/],
  ['image calls (stretch, pool)', /src\/native\/image|src\/media\/|pixel-pool/],
  ['decoder calls (frames in)', /src\/native\/decode|src\/video\/source\//],
  ['frame pipeline and steps', /src\/video\/(pipeline|steps)\//],
  ['task worker (results, checkpoints, progress)', /src\/video\/(worker|tasks)\//],
  ['metrics', /prom-client|src\/metrics\//],
  ['log', /pino|src\/base\/log/],
];

async function api(s: Server, path: string, body?: unknown) {
  const res = await fetch(`http://127.0.0.1:${s.port}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

const args = process.argv.slice(2);
const n = Number(argValue(args, 'cameras') ?? 4);
const seconds = Number(argValue(args, 'seconds') ?? 15);
const model = argValue(args, 'model') ?? 'builtin';
if (model !== 'builtin' && model !== 'tiny') throw new Error(`--model: expected builtin or tiny, got ${model}`);
const json = args.includes('--json');
const stacksFile = argValue(args, 'stacks');
requirePerf('camera-cpu-profile');
const clip = await liveClip(join(evalDir('tracking'), 'vtest_PETS09-S2L1_full', 'vtest.avi'), {
  fps: FPS,
  height: 1080,
  seconds: 20,
});
const rtsp = await startRtspServer(clip);
const work = mkdtempSync(join(tmpdir(), 'sightflow-camera-cpu-'));
const tiny = model === 'tiny' ? await writeTinyDetector(work, [join(work, 'data')]) : undefined;
const s = await start('serve', 0, join(work, 'data'), ['--perf-basic-prof-only-functions'], {
  SIGHTFLOW_NO_WORKER: 'false',
  SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true',
  SIGHTFLOW_WORKER_CONCURRENCY: String(n),
});
const ac = new AbortController();
try {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await api(s, '/v1/video/process', {
      input: [{ type: 'video_url', url: rtsp.url, sampling: { mode: 'fps', value: FPS } }],
      steps: [{ model: 'detect', ...(tiny ? { parameters: { model: tiny.model } } : {}) }],
    });
    if (r.status !== 202) throw new Error(`camera ${i}: ${r.status} ${JSON.stringify(r.json)}`);
    ids.push(r.json.id as string);
  }
  let counting = false;
  let processed = 0;
  let objects = 0;
  const lags: number[] = [];
  const readers = ids.map(async (id) => {
    const res = await fetch(`http://127.0.0.1:${s.port}/v1/video/tasks/${id}/stream`, {
      headers: { authorization: `Bearer ${s.key}` },
      signal: ac.signal,
    });
    try {
      for await (const { now, chunks } of sseReads(res.body!)) {
        for (const ch of chunks) {
          if (ch.finish_reason !== null || !counting) continue;
          processed++;
          objects += (ch.delta?.results ?? []).reduce(
            (a: number, r: { targets?: unknown[] }) => a + (r.targets?.length ?? 0),
            0,
          );
          lags.push(now - ch.stream_info.received_at_ms);
        }
      }
    } catch (e) {
      if (!ac.signal.aborted) throw e;
    }
  });
  await new Promise((r) => setTimeout(r, 8000)); // connecting, first key frames, the model's first load
  const pid = s.child.pid!;
  let mainMs = 0;
  let allMs = 0;
  const { samples } = await sampleThread(pid, async () => {
    const main0 = threadCpuMs(pid);
    const all0 = cpuMs(pid);
    counting = true;
    await new Promise((r) => setTimeout(r, seconds * 1000));
    counting = false;
    mainMs = threadCpuMs(pid) - main0;
    allMs = cpuMs(pid) - all0;
  }).catch((e: Error) => {
    throw new Error(`camera-cpu-profile: ${e.message}`);
  });
  if (stacksFile) writeFileSync(stacksFile, `${samples.map((f) => f.join('\n')).join('\n==\n')}\n`);
  const msPerFrame = mainMs / processed;
  const parts = attribute(
    samples,
    PARTS,
    'the rest (scheduling, allocation, event loop, garbage collector)',
    msPerFrame,
  );
  lags.sort((a, b) => a - b);
  const result = {
    cameras: n,
    model,
    seconds,
    frames: processed,
    frames_per_s_per_camera: +(processed / seconds / n).toFixed(2),
    objects_per_frame: +(objects / Math.max(1, processed)).toFixed(1),
    lag_p50_ms: lags[Math.floor(0.5 * lags.length)] ?? null,
    lag_p95_ms: lags[Math.floor(0.95 * lags.length)] ?? null,
    samples: samples.length,
    main_thread_ms_per_frame: +msPerFrame.toFixed(2),
    process_cpu_ms_per_frame: +(allMs / processed).toFixed(2),
    one_event_loop_allows_cameras: Math.round(1000 / msPerFrame / FPS),
    parts,
  };
  if (!json) {
    console.log(
      `main thread: ${result.main_thread_ms_per_frame} ms a frame, ${n} cameras at ${FPS} fps (${result.frames_per_s_per_camera} frames/s each, ${result.objects_per_frame} objects a frame, lag p50 ${result.lag_p50_ms} p95 ${result.lag_p95_ms} ms; process ${result.process_cpu_ms_per_frame} ms a frame; one event loop: ~${result.one_event_loop_allows_cameras} cameras)`,
    );
    for (const p of parts)
      console.log(`  ${(p.share * 100).toFixed(1).padStart(5)}%  ${p.ms.toFixed(2)} ms  ${p.part}`);
  }
  console.log(JSON.stringify(result));
  ac.abort();
  await Promise.allSettled(readers);
} finally {
  ac.abort();
  s.child.kill('SIGTERM');
  await s.exited;
  await rtsp.close();
  rmSync(work, { recursive: true, force: true });
  rmSync(`/tmp/perf-${s.child.pid}.map`, { force: true });
}
process.exit(0);
