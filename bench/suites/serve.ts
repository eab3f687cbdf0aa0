// `npm run bench -- serve [--concurrency 1,4,16,64] [--cameras 4] [--only detect,byo,ocr,embedding] [--quick] [--json]`: many clients on one
// model, through the real server, next to the ceiling.
//  - Requests per model: POST /v1/vision/detect (the built-in detector and a bring-your-own YOLO, from
//    eval/byo-dir.ts) and /v1/vision/ocr with a 640x480 JPEG, c clients each sending its next request when
//    the last answers: images/s, p50/p99, 503s. Embedding: POST /v1/vectors/collections/:id/search with the
//    same JPEG as the query (the built-in multimodal model: detector, colour and layout; OCR as the server is
//    configured) in a small collection.
//  - Ceiling (the peer): the same model's ONNX session alone, in-process, on the input tensor the server would
//    make, with the best split this machine allows of sessions (each in its own thread) x intra-op threads,
//    found here by trying each; OCR's and embedding's ceilings are the in-process pipeline (OcrEngine, the
//    multimodal embedder on its own runtime) at its best sessions per model and images in flight. The ratio
//    is the server's images/s over that ceiling.
//  - Mixed load: detect p50/p99 at 4 clients with N live 720p cameras at 5 fps running detect tasks, next
//    to the same without cameras (ratio of p99s), and the frames the cameras processed meanwhile.
// Server levels and ceiling configurations alternate in rounds (3, 1 with --quick) and each keeps its best
// round: on a shared machine a load spike costs a round, not the ratio.
// The clients stand for callers on other machines: a C program (bench/peers/post-clients.c, one epoll loop,
// keep-alive connections) so that they take as little of the shared cores as a client can; `--node-clients`
// runs them with fetch in this process instead, which costs the server's main thread far more per request
// (docs/capacity.md, "Measuring your machine").
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { BYO_MODELS, byoPath, hasByoModels } from '../../eval/byo-dir.js';
import { evalDir, skipWithoutEvalData } from '../../eval/dir.js';
import { argValue } from '../../eval/lib/model-choice.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { defaultInferenceSessions } from '../../src/config/index.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime, type Tensor } from '../../src/inference/runtime.js';
import { projectRoot } from '../../src/base/paths.js';
import { Detector, modelInput } from '../../src/detection/detect.js';
import { OcrEngine } from '../../src/ocr/engine.js';
import { TaskModels } from '../../src/task-models/task-models.js';
import { MultimodalEmbedder } from '../../src/vectors/embedders/multimodal.js';
import { decodeToRgb } from '../../src/media/image-decode.js';
import { createLogger } from '../../src/base/log.js';
import { decodeRgb } from '../../src/ocr/resample.js';
import { api, startTestApp, type TestApp } from '../../test/helpers/app.js';
import { startRtspServer, synthetic720p } from '../../test/helpers/live-sources.js';
import { compilePeer } from '../peers/compile.js';

interface Level {
  c: number;
  ips: number;
  p50: number;
  p99: number;
  n: number;
  refused: number;
  errors: number;
}

const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
};
const r2 = (v: number) => Math.round(v * 100) / 100;

/**
 * c clients calling fn back to back for `ms`: images/s and latency. fn returns the HTTP status and, for a 503,
 * its Retry-After in seconds, which the client waits (as OpenAI's SDKs do; 50 ms without one).
 */
async function closedLoop(
  fn: () => Promise<number | { status: number; retryAfterS?: number }>,
  c: number,
  ms: number,
): Promise<Level> {
  const times: number[] = [];
  let refused = 0,
    errors = 0;
  const t0 = performance.now();
  const end = t0 + ms;
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (performance.now() < end) {
        const s = performance.now();
        const r = await fn().catch(() => 0);
        const { status, retryAfterS } = typeof r === 'number' ? { status: r, retryAfterS: undefined } : r;
        if (status === 200) times.push(performance.now() - s);
        else if (status === 503) {
          refused++;
          await new Promise((res) =>
            setTimeout(res, retryAfterS !== undefined ? Math.min(60, retryAfterS) * 1000 : 50),
          );
        } else errors++;
      }
    }),
  );
  const wall = performance.now() - t0;
  return {
    c,
    ips: times.length / (wall / 1000),
    p50: pct(times, 0.5),
    p99: pct(times, 0.99),
    n: times.length,
    refused,
    errors,
  };
}

/** The same closed loop in the C client: c connections POSTing `bodyFile` to `path` for `ms`. */
async function nativeLoop(
  exe: string,
  url: string,
  path: string,
  key: string,
  bodyFile: string,
  c: number,
  ms: number,
): Promise<Level> {
  const child = spawn(exe, [new URL(url).port, path, key, bodyFile, String(c), String(ms)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const chunks: Buffer[] = [];
  child.stdout!.on('data', (d: Buffer) => chunks.push(d));
  const code = await new Promise<number | null>((r) => child.on('close', r));
  if (code !== 0) throw new Error(`post-clients exited with ${code}`);
  const o = JSON.parse(Buffer.concat(chunks).toString()) as {
    wall_ms: number;
    ok: number;
    refused: number;
    errors: number;
    ms: number[];
  };
  return {
    c,
    ips: o.ok / (o.wall_ms / 1000),
    p50: pct(o.ms, 0.5),
    p99: pct(o.ms, 0.99),
    n: o.ok,
    refused: o.refused,
    errors: o.errors,
  };
}

const better = (a: Level | undefined, b: Level) => (!a || b.ips > a.ips ? b : a);

/** The session splits worth trying on this many cores: sessions x threads with sessions * threads <= 2 * cores. */
function splits(cores: number): Array<{ sessions: number; threads: number }> {
  const out: Array<{ sessions: number; threads: number }> = [];
  for (const s of [1, 2, 4, cores]) {
    for (const t of [1, Math.max(1, Math.floor(cores / s)), cores]) {
      if (s > cores || s * t > 2 * cores || out.some((x) => x.sessions === s && x.threads === t)) continue;
      out.push({ sessions: s, threads: t });
    }
  }
  return out;
}

/** A model's session alone: `sessions` runtimes of one session each (its own thread), 2 runs in flight per session. */
async function modelCeiling(
  registry: ModelRegistry,
  id: string,
  input: Tensor,
  split: { sessions: number; threads: number },
  ms: number,
): Promise<Level> {
  const runtimes = Array.from(
    { length: split.sessions },
    () =>
      new InferenceRuntime({
        providers: ['cpu'],
        intraOpThreads: split.threads,
        sessions: 1,
        log: { info() {}, warn() {} },
      }),
  );
  try {
    const dets = await Promise.all(runtimes.map((rt) => Detector.create(rt, registry, id)));
    const feed = () => ({ [dets[0]!.pre.inputName]: input });
    for (const d of dets) {
      await d.handle.run(feed());
      await d.handle.run(feed());
    }
    let k = 0;
    return await closedLoop(
      async () => {
        await dets[k++ % dets.length]!.handle.run(feed());
        return 200;
      },
      2 * split.sessions,
      ms,
    );
  } finally {
    await Promise.all(runtimes.map((rt) => rt.close()));
  }
}

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'detection_coco128/images/000000000094.jpg')) return;
  const levels = (argValue(args, 'concurrency') ?? (quick ? '1,4' : '1,4,16,64'))
    .split(',')
    .map(Number)
    .filter((n) => n >= 1);
  const cameras = Number(argValue(args, 'cameras') ?? (quick ? 1 : 4));
  // --only detect,byo,ocr,embedding: just those rows (the mixed phase runs with detect).
  const only = argValue(args, 'only')?.split(',');
  const want = (name: string) => !only || only.includes(name);
  const rounds = quick ? 1 : 3;
  // --quick (CI runs it) only shows that every part works: 1 s levels, one ceiling configuration, one
  // camera, no second detector; its ratios are not figures to quote.
  const ms = quick ? 1000 : 6000;
  const cores = availableParallelism();
  const photo = join(evalDir('detection_coco128'), 'images', '000000000094.jpg');
  const jpeg = await sharp(photo).resize(640, 480, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
  const body = (model?: string) =>
    JSON.stringify({ image_base64: `data:image/jpeg;base64,${jpeg.toString('base64')}`, ...(model ? { model } : {}) });

  // The bring-your-own manifest is in the data dir before the server starts, as a user would drop it in.
  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-bench-serve-'));
  const peer = args.includes('--node-clients') ? null : compilePeer('post-clients', 'clients');
  let bodyFiles = 0;
  const byo = !quick && hasByoModels(BYO_MODELS['yolov8n-int8']) ? 'yolov8n-int8' : undefined;
  if (byo) await writeByoManifest(dataDir, { id: byo, task: 'detect', file: byoPath(BYO_MODELS[byo]) });
  // Every camera of the mixed phase runs at once (a node runs cores / 2 video tasks by default).
  // SIGHTFLOW_HEAP_GROWING_PERCENT in the bench's environment reaches the server (an A/B of V8's heap growth).
  const heap = process.env.SIGHTFLOW_HEAP_GROWING_PERCENT;
  const depth = process.env.SIGHTFLOW_INFERENCE_QUEUE_DEPTH;
  // SIGHTFLOW_INFERENCE_DEQUANTIZE too (an A/B of the int8 export made float on the CPU; the ceiling keeps auto).
  const dequantize = process.env.SIGHTFLOW_INFERENCE_DEQUANTIZE;
  const t = await startTestApp(
    {
      SIGHTFLOW_LOG_LEVEL: 'silent',
      SIGHTFLOW_MODELS_DIR: join(projectRoot, 'data', 'models'),
      SIGHTFLOW_WORKER_CONCURRENCY: String(Math.max(1, cameras)),
      ...(heap ? { SIGHTFLOW_HEAP_GROWING_PERCENT: heap } : {}),
      ...(depth ? { SIGHTFLOW_INFERENCE_QUEUE_DEPTH: depth } : {}),
      ...(dequantize ? { SIGHTFLOW_INFERENCE_DEQUANTIZE: dequantize } : {}),
    },
    { dataDir },
  );
  const embedRuntimes: InferenceRuntime[] = [];
  try {
    await t.app.services.models.ready;
    const post = (path: string, payload: string) => async () =>
      await fetch(`${t.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
        body: payload,
      }).then(async (r) => {
        await r.arrayBuffer();
        const ra = Number(r.headers.get('retry-after') ?? NaN);
        return { status: r.status, retryAfterS: Number.isFinite(ra) ? ra : undefined };
      });
    // The registry the server serves from (its data dir, the bring-your-own manifest included).
    const registry = await ModelRegistry.open(t.dataDir, { modelsDir: join(projectRoot, 'data', 'models') });
    const rgb = await decodeRgb(jpeg);
    // Each payload in a file for the C client; a level is c clients for ms.
    const load = (path: string, payload: string) => {
      const file = join(dataDir, `body-${bodyFiles++}.json`);
      writeFileSync(file, payload);
      return (c: number) =>
        peer ? nativeLoop(peer.exe, t.url, path, t.key, file, c, ms) : closedLoop(post(path, payload), c, ms);
    };
    const workloads: Array<{
      name: string;
      pipeline?: boolean;
      call: () => Promise<unknown>;
      load: (c: number) => Promise<Level>;
      ceiling: (split: { sessions: number; threads: number }) => Promise<Level>;
    }> = [];
    const detectWorkload = async (name: string, id: string, payload: string) => {
      if (byo === id) await registry.prepare(id);
      const probeRt = new InferenceRuntime({ providers: ['cpu'], sessions: 1, log: { info() {}, warn() {} } });
      const input = (await modelInput(rgb, (await Detector.create(probeRt, registry, id)).pre)).tensor;
      await probeRt.close();
      workloads.push({
        name,
        call: post('/v1/vision/detect', payload),
        load: load('/v1/vision/detect', payload),
        ceiling: (s) => modelCeiling(registry, id, input, s, ms),
      });
    };
    if (want('detect')) await detectWorkload('detect', 'centernet-coco', body());
    if (byo && want('byo')) {
      if ((await post('/v1/vision/detect', body(byo))()).status !== 200)
        throw new Error(`the server does not serve ${byo}`);
      await detectWorkload(`detect ${byo}`, byo, body(byo));
    } else if (want('byo'))
      console.log(
        quick
          ? 'bring-your-own YOLO row skipped in --quick'
          : 'bring-your-own YOLO export not found: its row is skipped',
      );
    const ocrSessions = [...new Set([1, defaultInferenceSessions(cores)])];
    if (want('ocr')) {
      // OCR's ceiling: the in-process pipeline with one session per model and with the server's default (narrow
      // sessions under load), each at 1, 2 and 4 pages in flight.
      const ocrEngines = new Map<number, OcrEngine['ocrImage']>();
      for (const sessions of ocrSessions) {
        const { ocrImage } = OcrEngine.forDataDir(join(projectRoot, 'data'), { sessions });
        // The ceiling's models (and, under load, its narrow sessions) load before it is timed, as the server's do.
        await Promise.all([0, 1, 2, 3].map(() => ocrImage(rgb)));
        ocrEngines.set(sessions, ocrImage);
      }
      workloads.push({
        name: 'ocr',
        pipeline: true,
        call: post('/v1/vision/ocr', body()),
        load: load('/v1/vision/ocr', body()),
        ceiling: async (cfg) => {
          const { sessions, threads: c } = cfg as { sessions: number; threads: number };
          const ocrImage = ocrEngines.get(sessions)!;
          return closedLoop(
            async () => {
              await ocrImage(rgb);
              return 200;
            },
            c,
            ms,
          );
        },
      });
    }
    if (want('embedding')) {
      // Embedding: an image query of a small collection (built-in model). Its ceiling is the multimodal embedder
      // on a runtime of its own (one session per model, and the server's default), with OCR as the server
      // has it, on the decoded image, at 1, 2 and 4 images in flight.
      const created = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'bench-serve' } });
      if (created.status !== 201) throw new Error(`collection: ${created.text}`);
      const searchPath = `/v1/vectors/collections/${created.body.id as string}/search`;
      const indexed = await api(t, `/v1/vectors/collections/${created.body.id as string}/index`, {
        method: 'POST',
        json: {
          items: ['a man riding a horse', 'a red truck at a gate', 'a plate of food', 'people crossing a street'].map(
            (text) => ({ text }),
          ),
        },
      });
      if (indexed.status !== 200) throw new Error(`index: ${indexed.text}`);
      const searchBody = JSON.stringify({
        image_base64: `data:image/jpeg;base64,${jpeg.toString('base64')}`,
        top_k: 4,
      });
      const loaded = {
        ...(await decodeToRgb(jpeg, 'jpeg', 'image_base64', 50_000_000)),
        format: 'jpeg' as const,
        bytes: jpeg,
      };
      const embedders = new Map<number, MultimodalEmbedder>();
      for (const sessions of ocrSessions) {
        const runtime = new InferenceRuntime({ providers: ['cpu'], sessions, log: { info() {}, warn() {} } });
        embedRuntimes.push(runtime);
        const taskModels = new TaskModels({ registry, runtime, ready: Promise.resolve(), isReady: () => true });
        const e = new MultimodalEmbedder({
          modelsDir: join(projectRoot, 'data', 'models'),
          runtime,
          taskModels,
          log: createLogger('silent'),
          ocr: t.app.services.config.vectors.ocr,
        });
        await Promise.all([0, 1, 2, 3].map(() => e.embed({ kind: 'image', image: loaded })));
        embedders.set(sessions, e);
      }
      workloads.push({
        name: 'embedding',
        pipeline: true,
        call: post(searchPath, searchBody),
        load: load(searchPath, searchBody),
        ceiling: async (cfg) => {
          const e = embedders.get(cfg.sessions)!;
          return closedLoop(
            async () => {
              await e.embed({ kind: 'image', image: loaded });
              return 200;
            },
            cfg.threads,
            ms,
          );
        },
      });
    }

    console.log(
      `serve: ${cores} cores, 640x480 JPEG, ${rounds} round(s) of ${ms / 1000} s per level; images/s, latency ms; clients ${peer ? 'in C (bench/peers/post-clients.c)' : 'fetch in this process'}`,
    );
    const result: Record<string, unknown> = {};
    let detectLevels = new Map<number, Level>();
    for (const w of workloads) {
      for (let i = 0; i < (quick ? 1 : 3); i++) await w.call(); // load sessions, JIT, caches
      const ours = new Map<number, Level>();
      if (w.name === 'detect') detectLevels = ours;
      const ceil = new Map<string, Level>();
      // A pipeline's (OCR's, embedding's) configurations are sessions per model x images in flight (carried in `threads`).
      const configs: Array<{ sessions: number; threads: number }> = w.pipeline
        ? quick
          ? [{ sessions: ocrSessions.at(-1)!, threads: 4 }]
          : ocrSessions.flatMap((sessions) => [1, 2, 4].map((threads) => ({ sessions, threads })))
        : quick
          ? [{ sessions: 1, threads: cores }]
          : splits(cores);
      for (let r = 0; r < rounds; r++) {
        for (const c of levels) ours.set(c, better(ours.get(c), await w.load(c)));
        for (const cfg of configs) {
          const key = w.pipeline ? `s${cfg.sessions}c${cfg.threads}` : `${cfg.sessions}x${cfg.threads}`;
          ceil.set(key, better(ceil.get(key), await w.ceiling(cfg)));
        }
      }
      const [bestKey, best] = [...ceil.entries()].sort((a, b) => b[1].ips - a[1].ips)[0]!;
      console.log(
        `  ${w.name}: ceiling ${best.ips.toFixed(2)} images/s (${w.pipeline ? `in-process pipeline, ${bestKey.replace(/^s(\d+)c(\d+)$/, '$1 session(s) per model, $2 images in flight')}` : `${bestKey.replace('x', ' sessions x ')} threads`}); tried ${[...ceil.entries()].map(([k, v]) => `${k} ${v.ips.toFixed(2)}`).join(', ')}`,
      );
      for (const l of ours.values()) {
        console.log(
          `    c${String(l.c).padEnd(3)} ${l.ips.toFixed(2)} images/s (${(l.ips / best.ips).toFixed(2)} of ceiling) p50 ${l.p50.toFixed(0)} p99 ${l.p99.toFixed(0)}${l.refused ? ` 503s ${l.refused}` : ''}${l.errors ? ` errors ${l.errors}` : ''}`,
        );
      }
      result[w.name] = {
        ceiling_ips: r2(best.ips),
        ceiling_split: bestKey,
        levels: [...ours.values()].map((l) => ({
          c: l.c,
          ips: r2(l.ips),
          ratio: r2(l.ips / best.ips),
          p50_ms: Math.round(l.p50),
          p99_ms: Math.round(l.p99),
          refused: l.refused,
          errors: l.errors,
        })),
      };
    }
    // --quick takes detect's own c4 level as the mixed phase's "alone" rather than measuring it again.
    const detectC4 = quick ? detectLevels.get(4) : undefined;
    if (cameras > 0 && want('detect'))
      result.mixed = await mixed(t, load('/v1/vision/detect', body()), cameras, ms, rounds, detectC4);
    if (json) console.log(JSON.stringify({ suite: 'serve', cores, clients: peer ? 'c' : 'node', sightflow: result }));
  } finally {
    await Promise.all(embedRuntimes.map((rt) => rt.close()));
    await t.close();
    rmSync(dataDir, { recursive: true, force: true });
    if (peer) rmSync(peer.dir, { recursive: true, force: true });
  }
}

/** Image detect at 4 clients with and without `n` live cameras (5 fps detect tasks) running. */
async function mixed(
  t: TestApp,
  level: (c: number) => Promise<Level>,
  n: number,
  ms: number,
  rounds: number,
  measuredAlone?: Level,
) {
  const clip = await synthetic720p(20, 25);
  const rtsp = await startRtspServer(clip);
  const ids: string[] = [];
  try {
    let alone: Level | undefined = measuredAlone,
      withCams: Level | undefined;
    let camFrames = 0,
      camSeconds = 0;
    const processed = async () => {
      let sum = 0;
      for (const id of ids) {
        const b = (await api(t, `/v1/video/tasks/${id}`)).body;
        sum += Number(b.usage?.processed_frames ?? b.progress.decoded_frames - b.progress.dropped_frames);
      }
      return sum;
    };
    for (let r = 0; r < rounds; r++) {
      if (!measuredAlone) alone = better(alone, await level(4));
      if (ids.length === 0) {
        for (let i = 0; i < n; i++) {
          const res = await api(t, '/v1/video/process', {
            method: 'POST',
            json: {
              input: [{ type: 'video_url', url: rtsp.url, sampling: { mode: 'fps', value: 5 } }],
              steps: [{ model: 'detect' }],
            },
          });
          if (res.status !== 202) throw new Error(`camera task: ${res.text}`);
          ids.push(res.body.id as string);
        }
        await new Promise((res) => setTimeout(res, Math.max(1500, ms / 2))); // cameras connect and warm up
      }
      const f0 = await processed();
      const s0 = performance.now();
      const l = await level(4);
      camFrames += (await processed()) - f0;
      camSeconds += (performance.now() - s0) / 1000;
      if (!withCams || l.p99 < withCams.p99) withCams = l;
    }
    const camFps = camFrames / Math.max(1e-9, camSeconds) / n;
    console.log(
      `  mixed: detect c4 alone p50 ${alone!.p50.toFixed(0)} p99 ${alone!.p99.toFixed(0)} (${alone!.ips.toFixed(2)} images/s); with ${n} cameras at 5 fps p50 ${withCams!.p50.toFixed(0)} p99 ${withCams!.p99.toFixed(0)} (${withCams!.ips.toFixed(2)} images/s); p99 ratio ${(withCams!.p99 / alone!.p99).toFixed(2)}; cameras meanwhile ${camFps.toFixed(2)} frames/s each`,
    );
    return {
      cameras: n,
      alone: { p50_ms: Math.round(alone!.p50), p99_ms: Math.round(alone!.p99), ips: r2(alone!.ips) },
      with_cameras: { p50_ms: Math.round(withCams!.p50), p99_ms: Math.round(withCams!.p99), ips: r2(withCams!.ips) },
      p99_ratio: r2(withCams!.p99 / alone!.p99),
      camera_fps_each: r2(camFps),
    };
  } finally {
    for (const id of ids)
      await api(t, `/v1/video/tasks/${id}/cancel`, { method: 'POST', unchecked: true }).catch(() => {});
    await rtsp.close();
  }
}
