// `npm run bench -- live [--quick] [--json]`: live 720p RTSP sources (GStreamer's RTSP server on loopback,
// test/helpers/rtsp_server.py) run as detect tasks through the real server for 60 s (10 s with --quick), every
// frame asked for: a 25 fps camera, and a source made at 4x what the detector follows on this machine
// (measured first). Reported per run: frames processed, frames dropped (replaced by newer ones), p50/p95
// delay from a frame's arrival at the decoder (stream_info received_at_ms) to its chunk arriving at an SSE
// subscriber (so archived and fanned out), and the process RSS at 10 s (half the run with --quick) and at
// the end (flat when drops keep memory bounded).
// Peer: the FFmpeg CLI reading the same source and piping every sampled frame as raw RGB to a consumer that
// spends the detector's measured time on each, in order (what a reader without newest-frame-wins does).
// Its delay grows with the run on the 4x source; the ratio is the peer's p95 delay over ours.
import { spawn } from 'node:child_process';
import { api, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { startRtspServer, synthetic720p } from '../../test/helpers/live-sources.js';
import { argValue } from '../../eval/lib/model-choice.js';
import { EVAL_DATA_MISSING, hasEvalData, skipWithoutEvalData } from '../../eval/dir.js';
import { DENSITY_PHOTO, runStreams } from '../live-density.js';
import { sseReads } from '../sse-reads.js';

interface RunResult {
  label: string;
  samplingFps: number;
  processed: number;
  dropped: number;
  p50: number;
  p95: number;
  rss10: number;
  rssEnd: number;
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))];
};
const mb = (b: number) => Math.round(b / 1048576);

/** Runs one live task for `seconds`, subscribing to its stream; cancels it at the end. */
async function liveTask(t: TestApp, url: string, fps: number, seconds: number): Promise<Omit<RunResult, 'label'>> {
  const r = await api(t, '/v1/video/process', {
    method: 'POST',
    json: {
      input: [{ type: 'video_url', url, sampling: { mode: 'fps', value: fps } }],
      steps: [{ model: 'detect' }],
    },
  });
  if (r.status !== 202) throw new Error(`create failed: ${r.text}`);
  const id = r.body.id as string;
  const ac = new AbortController();
  const res = await fetch(`${t.url}/v1/video/tasks/${id}/stream`, {
    headers: { authorization: `Bearer ${t.key}` },
    signal: ac.signal,
  });
  const delays: number[] = [];
  let processed = 0,
    dropped = 0,
    first = 0,
    rss10 = 0;
  const end = setTimeout(() => ac.abort(), (seconds + 30) * 1000);
  try {
    for await (const { now, chunks } of sseReads(res.body!)) {
      for (const c of chunks) {
        if (c.finish_reason !== null) continue;
        first ||= now;
        processed++;
        dropped = c.stream_info.dropped_frames;
        delays.push(now - c.stream_info.received_at_ms);
      }
      if (first && !rss10 && now - first >= Math.min(10, seconds / 2) * 1000) rss10 = process.memoryUsage().rss;
      if (first && now - first >= seconds * 1000) break;
    }
  } catch (e) {
    if (!ac.signal.aborted) throw e;
  } finally {
    clearTimeout(end);
    ac.abort();
  }
  const rssEnd = process.memoryUsage().rss;
  await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST' });
  return {
    samplingFps: fps,
    processed,
    dropped,
    p50: pct(delays, 0.5),
    p95: pct(delays, 0.95),
    rss10: rss10 || rssEnd,
    rssEnd,
  };
}

/** The peer: ffmpeg decodes every sampled frame to a pipe; the consumer spends `costMs` on each in order. */
async function peer(
  url: string,
  fps: number,
  seconds: number,
  costMs: number,
): Promise<{ processed: number; p50: number; p95: number }> {
  const w = 1280,
    h = 720,
    bytes = w * h * 3;
  const ff = spawn(
    'ffmpeg',
    [
      '-nostdin',
      '-v',
      'error',
      '-rtsp_transport',
      'tcp',
      '-i',
      url,
      '-vf',
      `fps=${fps}`,
      '-pix_fmt',
      'rgb24',
      '-f',
      'rawvideo',
      'pipe:1',
    ],
    { stdio: ['ignore', 'pipe', 'ignore'] },
  );
  const delays: number[] = [];
  let pending = Buffer.alloc(0);
  let start = 0;
  // Frame k of the sampled stream was due at start + k / fps: its delay is when the consumer finishes it.
  const frames: number[] = [];
  ff.stdout.on('data', (d: Buffer) => {
    pending = Buffer.concat([pending, d]);
    while (pending.length >= bytes) {
      pending = pending.subarray(bytes);
      frames.push(Date.now());
      start ||= Date.now();
    }
  });
  let k = 0;
  const until = Date.now() + (seconds + 5) * 1000;
  while (Date.now() < until && (!start || Date.now() - start < seconds * 1000)) {
    if (k < frames.length) {
      const t0 = Date.now();
      while (Date.now() - t0 < costMs) {
        /* the model's time */
      }
      delays.push(Date.now() - (start + (k * 1000) / fps));
      k++;
    } else {
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  ff.kill('SIGKILL');
  return { processed: k, p50: Math.round(pct(delays, 0.5)), p95: Math.round(pct(delays, 0.95)) };
}

export async function run({ quick, json, args }: { quick: boolean; json: boolean; args: string[] }): Promise<void> {
  // --streams N[,M...]: cameras per machine (bench/live-density.ts) instead of the one-camera runs below;
  // --source-fps F: the cameras send F frames a second (default 25; 5 is a camera's substream set to the rate
  // the detector samples).
  const streams = argValue(args, 'streams');
  if (streams !== undefined) {
    const sourceFps = Number(argValue(args, 'source-fps') ?? 25);
    if (!Number.isInteger(sourceFps) || sourceFps < 5 || sourceFps > 60)
      throw new Error(`--source-fps: expected a whole number from 5 to 60, got ${argValue(args, 'source-fps')}`);
    if (skipWithoutEvalData({ json }, DENSITY_PHOTO)) return;
    await runStreams({
      quick,
      json,
      streams: streams
        .split(',')
        .map(Number)
        .filter((n) => n >= 1),
      sourceFps,
    });
    return;
  }
  const seconds = quick ? 10 : 60;
  let summary: Record<string, unknown> = {};
  const t = await startTestApp({ SIGHTFLOW_ALLOW_PRIVATE_URLS: 'true' });
  const rtsp = await startRtspServer(await synthetic720p(10));
  let fast: Awaited<ReturnType<typeof startRtspServer>> | undefined;
  try {
    // What the detector can follow on this machine: a short warm-up task at 25 fps drops what it cannot take.
    const warm = await liveTask(t, rtsp.url, 25, quick ? 4 : 8);
    const follow = Math.max(0.2, warm.processed / (quick ? 4 : 8));
    const costMs = 1000 / follow;
    // The 25 fps camera, every frame asked for; then a second source made at 4x what the detector follows
    // (every frame asked for too), so the multiple is what the run says whatever this machine's speed.
    const fastFps = Math.min(120, Math.max(1, Math.round(follow * 4)));
    fast = await startRtspServer(await synthetic720p(10, fastFps));
    const runs: RunResult[] = [];
    for (const [source, fps] of [
      [rtsp, 25],
      [fast, fastFps],
    ] as const) {
      const label = `${fps} fps source, ${(fps / follow).toFixed(1)}x`;
      const r = { label, ...(await liveTask(t, source.url, fps, seconds)) };
      runs.push(r);
      console.log(
        `${label} what the detector follows (~${follow.toFixed(1)} fps): ${r.processed} processed, ${r.dropped} dropped, ` +
          `delay p50 ${r.p50} ms p95 ${r.p95} ms, RSS ${mb(r.rss10)} MB at ${Math.min(10, seconds / 2)} s, ${mb(r.rssEnd)} MB at the end`,
      );
    }
    const p = await peer(fast.url, runs[1].samplingFps, seconds, costMs);
    const ratio = p.p95 / runs[1].p95;
    console.log(
      `peer (ffmpeg CLI, every frame in order, ${costMs.toFixed(0)} ms each) at ${runs[1].label}: ${p.processed} processed, delay p50 ${p.p50} ms p95 ${p.p95} ms; ` +
        `p95 delay ratio peer/sightflow ${ratio.toFixed(1)}x`,
    );
    summary = {
      suite: 'live',
      seconds,
      follow_fps: Math.round(follow * 100) / 100,
      runs: runs.map((r) => ({ ...r, rss10_mb: mb(r.rss10), rss_end_mb: mb(r.rssEnd) })),
      peer: { name: 'ffmpeg-in-order', ...p },
      ratio: Math.round(ratio * 100) / 100,
    };
  } finally {
    await fast?.close();
    await rtsp.close();
    await t.close();
  }
  // --quick also runs the cameras-per-machine part briefly (two 5 fps cameras), so it cannot rot between the
  // full runs that measure density (`--streams`); its bound is timed on an evaluation photo, so not without it.
  const densityData = hasEvalData(DENSITY_PHOTO);
  if (quick && !densityData) console.log(`live density: skipped: ${EVAL_DATA_MISSING}`);
  const density =
    quick && densityData ? await runStreams({ quick, json: false, streams: [2], sourceFps: 5 }) : undefined;
  if (json) console.log(JSON.stringify({ ...summary, ...(density ? { density } : {}) }));
}
