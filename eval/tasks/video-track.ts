// `npm run eval -- video-track [--quick] [--json] [--threshold T] [--tracker sort|bytetrack] [--model <byo id>]`: the video
// pipeline's detect (class person) + tracker path over EVERY frame of each SIGHTFLOW_EVAL_DIR/tracking/*
// sequence that has a video (or JPEG frames) and ground truth; MOTA, IDF1 and ID switches (eval/lib/mot-metrics.ts).
//  - TUD-Campus: its mp4 and gt/gt.txt.
//  - PETS09-S2L1: img1/*.jpg assembled into an H.264 clip (CRF 12) in a temp dir at the seqinfo frame rate;
//    gt limited to the frames present.
//  - vtest_PETS09-S2L1_full: vtest.avi has no gt/ of its own; tracking/SOURCE.txt documents that it is the
//    whole PETS09-S2L1 (795 frames, frame n = gt frame n+1) at 480x360, so PETS09-S2L1's gt scaled by
//    video width / seqinfo imWidth (0.625) applies. Frames 301-795 were never used for tuning.
// Path (default): the whole task API. A real server (the test harness: HTTP on port 0, PGlite, in-process
// worker, the default provider list = LocalProvider) gets POST /v1/video/process with a video_url served by a
// loopback file server (the harness allows private URLs), the SSE stream is read to [DONE], and the
// hypotheses are the streamed targets (track_id, roi). `--direct` calls LocalProvider.run instead (the same
// provider call the worker makes, no HTTP, queue or archive). confidence_threshold 0.4 and the tracker
// defaults were tuned on TUD-Campus and PETS09-S2L1 frames 1-300. `--quick`: the first 30 frames of
// TUD-Campus only. `--model yolov8n-int8` (any id of eval/byo-dir.ts): the detect step runs that real export,
// registered in the server's data dir by a bare manifest.
import { execFile } from 'node:child_process';
import { createReadStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { evalDir, skipWithoutEvalData } from '../dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { Detector } from '../../src/detection/detect.js';
import { OcrEngine } from '../../src/ocr/engine.js';
import { projectRoot } from '../../src/base/paths.js';
import { evaluateMot, parseMotFile, type MotRow } from '../lib/mot-metrics.js';
import { LocalProvider } from '../../src/video/worker/local-provider.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { BYO_MODELS, byoPath, isByoModelId, skipWithoutByoModels, type ByoModelId } from '../byo-dir.js';
import type { FrameOutput, VideoTaskRequest } from '../../src/video/task-contract.js';

// OCR over the models setup prepared in data/ (the server hands the engine its own registry and runtime).
const { ocrImage, ocrRegion } = OcrEngine.forDataDir(join(projectRoot, 'data'));

const run$ = promisify(execFile);
const DEFAULT_THRESHOLD = 0.4;

export interface Sequence {
  name: string;
  video: () => Promise<string>;
  gtPath: string;
  scale: number;
  note?: string;
}

export function seqInfo(dir: string): Record<string, string> {
  const p = join(dir, 'seqinfo.ini');
  if (!existsSync(p)) return {};
  return Object.fromEntries(
    readFileSync(p, 'utf8')
      .split(/\r?\n/)
      .map((l) => l.split('='))
      .filter((kv) => kv.length === 2)
      .map(([k, v]) => [k.trim(), v.trim()]),
  );
}

export async function probeWidth(path: string): Promise<number> {
  const { stdout } = await run$('ffprobe', [
    '-v',
    'error',
    '-select_streams',
    'v:0',
    '-show_entries',
    'stream=width',
    '-of',
    'csv=p=0',
    path,
  ]);
  return Number(stdout.trim());
}

/** Every tracking/* folder with a video (or frames) and applicable gt, in name order. */
export function sequences(root: string, tmp: string): Sequence[] {
  const out: Sequence[] = [];
  for (const d of readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .sort((a, b) => a.name.localeCompare(b.name))) {
    const dir = join(root, d.name);
    const files = readdirSync(dir);
    const video = files.find((f) => /\.(mp4|avi|mkv|webm|mov)$/i.test(f));
    const gt = join(dir, 'gt', 'gt.txt');
    if (existsSync(gt) && video) {
      out.push({ name: d.name, video: async () => join(dir, video), gtPath: gt, scale: 1 });
    } else if (existsSync(gt) && existsSync(join(dir, 'img1'))) {
      const info = seqInfo(dir);
      const rate = info.frameRate ?? '25';
      out.push({
        name: d.name,
        gtPath: gt,
        scale: 1,
        note: `img1 frames assembled at ${rate} fps`,
        video: async () => {
          const path = join(tmp, `${d.name}.mp4`);
          await run$('ffmpeg', [
            '-nostdin',
            '-v',
            'error',
            '-y',
            '-framerate',
            rate,
            '-i',
            join(dir, 'img1', `%06d${info.imExt ?? '.jpg'}`),
            '-c:v',
            'libx264',
            '-preset',
            'veryfast',
            '-crf',
            '12',
            '-pix_fmt',
            'yuv420p',
            path,
          ]);
          return path;
        },
      });
    } else if (video) {
      // vtest_<SEQ>_full: the whole <SEQ> as a video of its own (tracking/SOURCE.txt).
      const m = /^vtest_(.+)_full$/.exec(d.name);
      const base = m ? join(root, m[1]) : '';
      if (m && existsSync(join(base, 'gt', 'gt.txt'))) {
        const path = join(dir, video);
        out.push({
          name: d.name,
          gtPath: join(base, 'gt', 'gt.txt'),
          scale: NaN,
          video: async () => path,
          note: `gt of ${m[1]} scaled to the video`,
        });
      } else {
        console.log(`${d.name}: a video but no ground truth, skipped`);
      }
    } else {
      console.log(`${d.name}: no video and no frames with ground truth, skipped`);
    }
  }
  return out;
}

/** Runs one task; resolves to its frames (chunks without finish_reason) and the track count. */
export type Runner = (
  video: string,
  request: VideoTaskRequest,
) => Promise<{ frames: FrameOutput[]; finish: string; tracks: number; analytics?: unknown }>;

function directRunner(detector: Detector): Runner {
  const provider = new LocalProvider({
    allowPrivateUrls: false,
    models: { detector: async () => detector, ocrImage, ocrRegion },
  });
  return async (video, request) => {
    const frames: FrameOutput[] = [];
    const result = await provider.run(
      request,
      { path: video },
      {
        taskId: 'eval',
        projectId: 'eval',
        signal: new AbortController().signal,
        emit: async (f) => {
          frames.push(f);
          return true;
        },
      },
    );
    return { frames, finish: result.finish_reason, tracks: result.tracks.length };
  };
}

/** Serves files of one folder with byte ranges (FFmpeg seeks in MP4s). */
function fileServer(files: Map<string, string>): Promise<{ server: Server; url: (path: string) => string }> {
  const server = createServer((req, res) => {
    const path = files.get(new URL(req.url ?? '/', 'http://x').pathname);
    if (!path) return void res.writeHead(404).end();
    const size = statSync(path).size;
    const m = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    if (!m) {
      res.writeHead(200, { 'content-length': size, 'accept-ranges': 'bytes' });
      return void createReadStream(path).pipe(res);
    }
    const start = Number(m[1]);
    const end = m[2] ? Math.min(Number(m[2]), size - 1) : size - 1;
    res.writeHead(206, {
      'content-length': end - start + 1,
      'content-range': `bytes ${start}-${end}/${size}`,
      'accept-ranges': 'bytes',
    });
    createReadStream(path, { start, end }).pipe(res);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as AddressInfo).port;
      resolve({ server, url: (p) => `http://127.0.0.1:${port}${p}` });
    }),
  );
}

/**
 * `byo`: one of the real exports of eval/byo-dir.ts, dropped into the server's data dir as a bare manifest
 * before it starts (as a user would), so a detect step can name it.
 */
export async function apiRunner(opts: { byo?: ByoModelId } = {}): Promise<{ run: Runner; close(): Promise<void> }> {
  const { startTestApp, api } = await import('../../test/helpers/app.js');
  const dataDir = opts.byo ? mkdtempSync(join(tmpdir(), 'sightflow-eval-byo-')) : undefined;
  if (opts.byo) await writeByoManifest(dataDir!, { id: opts.byo, task: 'detect', file: byoPath(BYO_MODELS[opts.byo]) });
  const app = await startTestApp({ SIGHTFLOW_LOG_LEVEL: 'silent' }, dataDir ? { dataDir } : {});
  const files = new Map<string, string>();
  const fs = await fileServer(files);
  return {
    async run(video, request) {
      const path = `/${files.size}/${video.split('/').pop()}`;
      files.set(path, video);
      const body = { ...request, input: [{ ...request.input[0], type: 'video_url', url: fs.url(path) }] };
      const created = await api(app, '/v1/video/process', { method: 'POST', json: body });
      if (created.status !== 202) throw new Error(`POST /v1/video/process: HTTP ${created.status} ${created.text}`);
      // The stream waits for live bytes and ends after the terminal chunk and [DONE].
      const stream = await api(app, created.body.stream_url as string);
      const chunks = stream.text
        .split('\n\n')
        .filter((e) => e.startsWith('data: {'))
        .map((e) => JSON.parse(e.slice(6)));
      const terminal = chunks.at(-1);
      if (!terminal || terminal.finish_reason === 'error')
        throw new Error(`task ${created.body.id} failed: ${JSON.stringify(terminal?.error ?? terminal)}`);
      const results = await api(app, `/v1/video/tasks/${created.body.id}/results`);
      return {
        frames: chunks
          .filter((c) => c.finish_reason === null)
          .map((c) => ({ stream_info: c.stream_info, delta: c.delta })),
        finish: terminal.finish_reason,
        tracks: Array.isArray(results.body?.tracks) ? results.body.tracks.length : -1,
        analytics: results.body?.analytics,
      };
    },
    async close() {
      fs.server.close();
      await app.close();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  const arg = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const threshold = Number(arg('--threshold') ?? DEFAULT_THRESHOLD);
  const trackerType = (arg('--tracker') ?? 'sort') as 'sort' | 'bytetrack';
  const direct = args.includes('--direct');
  const model = arg('--model');
  if (model !== undefined && (!isByoModelId(model) || direct)) {
    console.error(
      `--model ${model}: expected one of the bring-your-own exports (${Object.keys(BYO_MODELS).join(', ')}), without --direct`,
    );
    process.exit(2);
  }
  if (skipWithoutEvalData({ json }, 'tracking')) return;
  if (model !== undefined && skipWithoutByoModels({ json }, BYO_MODELS[model])) return;
  const root = evalDir('tracking');
  const tmp = mkdtempSync(join(tmpdir(), 'sightflow-video-track-'));
  let closeRunner = async () => {};
  try {
    let runner: Runner;
    if (direct) {
      const dataDir = process.env.SIGHTFLOW_DATA_DIR ?? './data';
      const registry = await ModelRegistry.open(
        dataDir,
        process.env.SIGHTFLOW_MODELS_DIR ? { modelsDir: process.env.SIGHTFLOW_MODELS_DIR } : {},
      );
      await registry.prepare('centernet-coco');
      const runtime = new InferenceRuntime({ providers: ['cpu'], log: { info() {}, warn() {} } });
      runner = directRunner(await Detector.create(runtime, registry, 'centernet-coco'));
    } else {
      const r = await apiRunner({ byo: model });
      runner = r.run;
      closeRunner = r.close;
    }
    console.log(
      `path: ${direct ? "LocalProvider.run (the worker's provider call; no HTTP, queue or archive)" : 'task API (POST /v1/video/process video_url -> worker -> SSE stream -> results)'}; ` +
        `detect ${model ?? 'the built-in detector'} person, confidence_threshold ${threshold}, tracker ${trackerType}; every frame`,
    );

    const results: Record<string, { mota: number; idf1: number; id_switches: number }> = {};
    const all = sequences(root, tmp);
    const chosen = quick ? all.filter((s) => s.name === 'TUD-Campus') : all;
    for (const seq of chosen) {
      const video = await seq.video();
      let scale = seq.scale;
      if (Number.isNaN(scale)) {
        const info = seqInfo(join(seq.gtPath, '..', '..'));
        scale = (await probeWidth(video)) / Number(info.imWidth);
      }
      const request: VideoTaskRequest = {
        input: [{ type: 'video_url', sampling: { mode: 'fps', value: 1000 }, max_frames: quick ? 30 : 100_000 }],
        steps: [
          {
            model: 'detect',
            parameters: { classes: ['person'], confidence_threshold: threshold, ...(model ? { model } : {}) },
          },
        ],
        tracker: { type: trackerType },
      };
      const started = performance.now();
      const { frames, finish, tracks } = await runner(video, request);
      const seconds = (performance.now() - started) / 1000;
      const hyp: MotRow[] = frames.flatMap((f) =>
        f.delta.results.flatMap((r) =>
          r.targets.map((t) => ({
            frame: f.stream_info.frame_index + 1,
            id: t.track_id,
            x: t.roi.left,
            y: t.roi.top,
            w: t.roi.width,
            h: t.roi.height,
            conf: t.confidence,
            cls: null,
            visibility: null,
          })),
        ),
      );
      const lastGtFrame = frames.length;
      const gt = parseMotFile(readFileSync(seq.gtPath, 'utf8'))
        .filter((r) => r.frame <= lastGtFrame)
        .map((r) => (scale === 1 ? r : { ...r, x: r.x * scale, y: r.y * scale, w: r.w * scale, h: r.h * scale }));
      const m = evaluateMot(gt, hyp);
      results[seq.name] = { mota: round(m.mota), idf1: round(m.idf1), id_switches: m.idSwitches };
      console.log(
        `${seq.name.padEnd(24)} frames ${String(frames.length).padStart(4)} (${finish})  MOTA ${m.mota.toFixed(4)}  IDF1 ${m.idf1.toFixed(4)}  ` +
          `IDsw ${m.idSwitches}  FP ${m.fp}  FN ${m.fn}  tracks ${tracks}  ${(frames.length / seconds).toFixed(2)} frames/s${seq.note ? `  [${seq.note}]` : ''}`,
      );
    }
    const vals = Object.values(results);
    const mean = {
      mota: round(vals.reduce((s, v) => s + v.mota, 0) / Math.max(1, vals.length)),
      idf1: round(vals.reduce((s, v) => s + v.idf1, 0) / Math.max(1, vals.length)),
    };
    console.log(
      `mean                     MOTA ${mean.mota.toFixed(4)}  IDF1 ${mean.idf1.toFixed(4)}${quick ? '  (quick: first 30 frames of TUD-Campus)' : ''}`,
    );
    console.log('reference: SORT on CenterNet person boxes (score >= 0.3) on TUD-Campus: MOTA 0.33-0.37, IDF1 0.53');
    if (json)
      console.log(JSON.stringify({ task: 'video-track', ...(model ? { model } : {}), sequences: results, mean }));
  } finally {
    await closeRunner();
    rmSync(tmp, { recursive: true, force: true });
  }
}

function round(v: number): number {
  return Math.round(v * 10000) / 10000;
}
