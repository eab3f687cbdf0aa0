// `npm run bench -- video [--quick] [--json]`:
//  1. The video pipeline at the API default of 1 fps, detect (all classes) + tracker, through LocalProvider.run
//     (what a worker runs per task), on a generated 60 s 720p H.264 clip (testsrc2: the detector's cost does
//     not depend on what is in the frame) and on tracking/vtest_PETS09-S2L1_full/vtest.avi (79.5 s, people).
//     Reported as a multiple of real time (video seconds / wall seconds; > 1 is faster than real time), next
//     to the plain FFmpeg CLI decode of the same file (`ffmpeg -i X -f null -`, every frame, one process).
//     The JSON's realtime_factor is the slower of the two files.
//  2. SSE fan-out: a real server (test harness: HTTP on port 0, PGlite) whose in-process worker runs the
//     synthetic test provider (test/helpers/synthetic-provider.ts) to archive a 3000-chunk task; then 500
//     concurrent subscribers replay the finished stream from byte 0. The subscribers run in a child process,
//     so the RSS sampled here (peak) is the server's own; every replay is hashed and must be byte-identical.
// --quick: a 4 s clip, the first 4 s of vtest.avi, and 20 subscribers of a 100-chunk archive.
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { evalDir, skipWithoutEvalData } from '../../eval/dir.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { Detector } from '../../src/detection/detect.js';
import { OcrEngine } from '../../src/ocr/engine.js';
import { projectRoot } from '../../src/base/paths.js';
import { LocalProvider } from '../../src/video/worker/local-provider.js';
import type { VideoTaskRequest } from '../../src/video/task-contract.js';
import { makeMedia } from '../../test/helpers/media.js';

const exec = promisify(execFile);

// OCR over the models setup prepared in data/ (the server hands the engine its own registry and runtime).
const { ocrImage, ocrRegion } = OcrEngine.forDataDir(join(projectRoot, 'data'));

async function durationS(path: string): Promise<number> {
  const { stdout } = await exec('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'format=duration',
    '-of',
    'csv=p=0',
    path,
  ]);
  return Number(stdout.trim());
}

async function ffmpegDecodeS(path: string, limitS?: number): Promise<number> {
  const t0 = performance.now();
  await exec('ffmpeg', [
    '-nostdin',
    '-v',
    'error',
    '-i',
    path,
    ...(limitS ? ['-t', String(limitS)] : []),
    '-f',
    'null',
    '-',
  ]);
  return (performance.now() - t0) / 1000;
}

interface FileResult {
  file: string;
  video_s: number;
  frames: number;
  seconds: number;
  realtime_factor: number;
  ffmpeg_realtime_factor: number;
}

async function pipelineRun(
  provider: LocalProvider,
  path: string,
  limitS?: number,
): Promise<{ frames: number; seconds: number }> {
  const request: VideoTaskRequest = {
    input: [
      {
        type: 'video_url',
        sampling: { mode: 'fps', value: 1 },
        ...(limitS ? { range: { start: 0, end: limitS } } : {}),
      },
    ],
    steps: [{ model: 'detect' }],
  };
  let frames = 0;
  const t0 = performance.now();
  await provider.run(
    request,
    { path },
    {
      taskId: 'bench',
      projectId: 'bench',
      signal: new AbortController().signal,
      emit: async () => {
        frames++;
        return true;
      },
    },
  );
  return { frames, seconds: (performance.now() - t0) / 1000 };
}

async function pipelineBench(quick: boolean): Promise<FileResult[]> {
  const dataDir = process.env.SIGHTFLOW_DATA_DIR ?? './data';
  const registry = await ModelRegistry.open(
    dataDir,
    process.env.SIGHTFLOW_MODELS_DIR ? { modelsDir: process.env.SIGHTFLOW_MODELS_DIR } : {},
  );
  await registry.prepare('centernet-coco');
  const runtime = new InferenceRuntime({ providers: ['cpu'], log: { info() {}, warn() {} } });
  const detector = await Detector.create(runtime, registry, 'centernet-coco');
  const provider = new LocalProvider({
    allowPrivateUrls: false,
    models: { detector: async () => detector, ocrImage, ocrRegion },
  });
  const seconds = quick ? 4 : 60;
  const clip = await makeMedia(`bench_720p_${seconds}s.mp4`, [
    '-f',
    'lavfi',
    '-i',
    `testsrc2=size=1280x720:rate=25:duration=${seconds}`,
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-g',
    '50',
    '-pix_fmt',
    'yuv420p',
  ]);
  const vtest = join(evalDir('tracking/vtest_PETS09-S2L1_full'), 'vtest.avi');
  // Warm-up: the first inference creates the ONNX session.
  await pipelineRun(provider, clip, 2);
  const out: FileResult[] = [];
  for (const [file, limit] of [
    [clip, undefined],
    [vtest, quick ? 4 : undefined],
  ] as const) {
    const video = limit ?? (await durationS(file));
    const r = await pipelineRun(provider, file, limit);
    const peer = await ffmpegDecodeS(file, limit);
    const res: FileResult = {
      file: file.split('/').pop()!,
      video_s: round(video),
      frames: r.frames,
      seconds: round(r.seconds),
      realtime_factor: round(video / r.seconds),
      ffmpeg_realtime_factor: round(video / peer),
    };
    out.push(res);
    console.log(
      `${res.file}: ${video.toFixed(1)} s of video, ${r.frames} frames at 1 fps, detect+track in ${r.seconds.toFixed(1)} s = ` +
        `${res.realtime_factor}x real time; ffmpeg CLI decode (every frame) ${peer.toFixed(2)} s = ${res.ffmpeg_realtime_factor}x real time`,
    );
  }
  return out;
}

// The subscribers' side, run in a child process: N concurrent replays from byte 0, each hashed.
const CLIENT = `
import { createHash } from 'node:crypto';

const [url, key, n] = process.argv.slice(1);
const t0 = performance.now();
const replays = await Promise.all(Array.from({ length: Number(n) }, async () => {
  const res = await fetch(url, { headers: { authorization: 'Bearer ' + key } });
  if (res.status !== 200) throw new Error('HTTP ' + res.status);
  const h = createHash('sha256');
  let bytes = 0;
  for await (const c of res.body) { h.update(c); bytes += c.length; }
  return h.digest('hex') + ':' + bytes;
}));
console.log(JSON.stringify({ seconds: (performance.now() - t0) / 1000, distinct: [...new Set(replays)] }));
`;

async function sseBench(quick: boolean): Promise<{
  subscribers: number;
  seconds: number;
  rssMb: number;
  rssBeforeMb: number;
  chunks: number;
  bytes: number;
} | null> {
  let harness: typeof import('../../test/helpers/app.js');
  let synthetic: typeof import('../../test/helpers/synthetic-provider.js');
  try {
    harness = await import('../../test/helpers/app.js');
    synthetic = await import('../../test/helpers/synthetic-provider.js');
  } catch (e) {
    console.log(`sse: the test harness could not load (${(e as Error).message}); sse_* fields are null`);
    return null;
  }
  const chunks = quick ? 100 : 3000;
  const subscribers = quick ? 20 : 500;
  const provider = new synthetic.SyntheticProvider();
  const app = await harness.startTestApp({ SIGHTFLOW_LOG_LEVEL: 'silent' }, { videoProviders: () => [provider] });
  try {
    const created = await harness.api(app, '/v1/video/process', {
      method: 'POST',
      json: {
        input: [
          {
            type: 'video_url',
            url: `http://127.0.0.1:9/bench.mp4?frames=${chunks}&frame_ms=0`,
            max_frames: chunks + 1,
          },
        ],
        steps: [{ model: 'detect' }],
      },
    });
    if (created.status !== 202) throw new Error(`POST /v1/video/process: ${created.status} ${created.text}`);
    const id = created.body.id as string;
    const deadline = Date.now() + 600_000;
    let status = '';
    while (Date.now() < deadline) {
      status = (await harness.api(app, `/v1/video/tasks/${id}`)).body?.status;
      if (status === 'succeeded' || status === 'failed' || status === 'cancelled') break;
      await new Promise((r) => setTimeout(r, 200));
    }
    if (status !== 'succeeded') throw new Error(`the synthetic task ended ${status || 'never'}`);
    const reference = await fetch(`${app.url}/v1/video/tasks/${id}/stream`, {
      headers: { authorization: `Bearer ${app.key}` },
    });
    const bytes = Buffer.from(await reference.arrayBuffer());
    const expected = `${(await import('node:crypto')).createHash('sha256').update(bytes).digest('hex')}:${bytes.length}`;
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss);
    }, 50);
    try {
      const child = spawn(
        process.execPath,
        ['--input-type=module', '-e', CLIENT, `${app.url}/v1/video/tasks/${id}/stream`, app.key, String(subscribers)],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      const code = await new Promise<number | null>((r) => child.on('close', r));
      if (code !== 0) throw new Error(`the subscriber process exited with ${code}`);
      const r = JSON.parse(out.trim().split('\n').pop()!) as { seconds: number; distinct: string[] };
      if (r.distinct.length !== 1 || r.distinct[0] !== expected)
        throw new Error(`replays differ: ${r.distinct.length} distinct results, expected ${expected}`);
      const rssMb = round(peak / 2 ** 20);
      console.log(
        `sse: ${subscribers} subscribers replayed a ${chunks + 1}-chunk archive (${bytes.length} bytes each, all byte-identical) in ${r.seconds.toFixed(2)} s; server peak RSS ${rssMb} MB (${round(baseline / 2 ** 20)} MB before the subscribers)`,
      );
      return {
        subscribers,
        seconds: round(r.seconds),
        rssMb,
        rssBeforeMb: round(baseline / 2 ** 20),
        chunks: chunks + 1,
        bytes: bytes.length,
      };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    await app.close();
  }
}

export async function run({ quick, json }: SuiteOptions): Promise<void> {
  // The slower of the two files is the headline number, so without vtest.avi there is no result to report.
  if (skipWithoutEvalData({ json }, 'tracking/vtest_PETS09-S2L1_full/vtest.avi')) return;
  // SSE first, so the RSS it samples is the server's before the pipeline part loads the detector here.
  let sse: Awaited<ReturnType<typeof sseBench>> = null;
  try {
    sse = await sseBench(quick);
  } catch (e) {
    console.log(`sse: failed (${(e as Error).message}); sse_* fields are null`);
  }
  const files = await pipelineBench(quick);
  const slowest = files.reduce((a, b) => (b.realtime_factor < a.realtime_factor ? b : a));
  console.log(
    `slowest: ${slowest.file} at ${slowest.realtime_factor}x real time (ffmpeg decode ${slowest.ffmpeg_realtime_factor}x)`,
  );
  if (json) {
    console.log(
      JSON.stringify({
        suite: 'video',
        sightflow: {
          realtime_factor: slowest.realtime_factor,
          sse_subscribers: sse?.subscribers ?? null,
          sse_seconds: sse?.seconds ?? null,
          sse_rss_mb: sse?.rssMb ?? null,
        },
        peer: { name: 'ffmpeg-decode', realtime_factor: slowest.ffmpeg_realtime_factor },
        ratio: null,
        files,
        ...(sse
          ? { sse: { chunks: sse.chunks, bytes_per_replay: sse.bytes, rss_before_subscribers_mb: sse.rssBeforeMb } }
          : {}),
      }),
    );
  }
}

const round = (v: number) => Math.round(v * 100) / 100;
