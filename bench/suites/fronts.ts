// `npm run bench -- fronts [--fronts 2] [--clients 4] [--model tiny] [--quick] [--json]`: `sightflow serve` with front
// processes (SIGHTFLOW_HTTP_FRONTS=N) beside the peer, `serve` alone, both real servers answering
// POST /v1/vision/detect for a 640x480 JPEG to the C clients (bench/peers/post-clients.c). What it is for: the
// CPU the serving process's main thread spends per image (from /proc), since one event loop's milliseconds
// per image bound the images/s of a process whatever runs the model (docs/capacity.md, "Front processes");
// fronts move the request, body, base64 and reply off it. Beside it the images/s and latency, the serving
// process's whole CPU and the fronts' CPU per image. On a CPU-only host the model takes the cores, so images/s
// say only that nothing is lost; on a GPU host (scripts/gpu-check.sh) they are the point.
// Rounds alternate between the two servers (3, 1 with --quick) and each keeps its round of most images/s.
// --model tiny serves a detector whose model takes next to no CPU (writeTinyDetector), so the request path,
// not the model, is the bound here too, as on a GPU host.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { argValue } from '../../eval/lib/model-choice.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { projectRoot } from '../../src/base/paths.js';
import { COCO_CLASSES } from '../../src/detection/coco-classes.js';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { tinyYoloOnnx } from '../../test/helpers/inference.js';
import { compilePeer } from '../peers/compile.js';
import { writeDetectBody } from '../peers/detect-body.js';
import { postClients, percentile } from '../peers/post-clients-run.js';
import { cpuMs, liveThreadsCpuMs, threadCpuMs } from '../proc-cpu.js';
import { scriptArgs } from '../../test/helpers/node-script.js';

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface Server {
  label: string;
  child: ChildProcess;
  port: number;
  key: string;
  fronts: number[];
  exited: Promise<unknown>;
}

interface Row {
  server: string;
  fronts: number;
  clients: number;
  images_per_s: number;
  p50_ms: number;
  p99_ms: number;
  refused: number;
  errors: number;
  /** The serving process's main thread (its event loop), per image answered: the process that runs the model. */
  main_thread_ms_per_image: number;
  /** The serving process, every thread (sessions included). */
  serve_cpu_ms_per_image: number;
  /** The front processes together. */
  fronts_cpu_ms_per_image: number;
}

/**
 * `sightflow serve` on a free port with `fronts` front processes; `nodeArgs` go before the script (profilers);
 * `env` over the defaults (no video worker unless it says otherwise).
 */
export function start(
  label: string,
  fronts: number,
  dataDir: string,
  nodeArgs: string[] = [],
  env: Record<string, string> = {},
): Promise<Server> {
  const child = spawn(
    process.execPath,
    [...nodeArgs, ...scriptArgs(MAIN), 'serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir],
    {
      env: {
        ...process.env,
        SIGHTFLOW_LOG_LEVEL: 'info',
        SIGHTFLOW_HTTP_FRONTS: String(fronts),
        SIGHTFLOW_MODELS_DIR: join(projectRoot, 'data', 'models'),
        SIGHTFLOW_NO_WORKER: 'true',
        ...env,
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise((r) => child.on('close', r));
  return new Promise((resolve, reject) => {
    let key = '';
    const frontPids: number[] = [];
    createInterface({ input: child.stdout! }).on('line', (line) => {
      const k = /with API key (sk_sf_\S+)/.exec(line);
      if (k) key = k[1]!;
      if (line.includes('"front process listening"')) frontPids.push((JSON.parse(line) as { pid: number }).pid);
      if (line.includes('"sightflow listening"'))
        resolve({
          label,
          fronts: frontPids,
          child,
          port: (JSON.parse(line) as { port: number }).port,
          key,
          exited,
        });
    });
    void exited.then((code) => reject(new Error(`${label}: serve exited (${code}) before it listened`)));
  });
}

const r2 = (x: number) => Math.round(x * 100) / 100;

async function measure(exe: string, s: Server, bodyFile: string, c: number, ms: number): Promise<Row> {
  const pid = s.child.pid!;
  const main0 = threadCpuMs(pid);
  const all0 = cpuMs(pid);
  const fr0 = s.fronts.reduce((n, p) => n + liveThreadsCpuMs(p), 0);
  const o = await postClients(exe, s, bodyFile, c, ms);
  const per = (x: number) => (o.ok > 0 ? r2(x / o.ok) : NaN);
  return {
    server: s.label,
    fronts: s.fronts.length,
    clients: c,
    images_per_s: r2(o.ok / (o.wall_ms / 1000)),
    p50_ms: r2(percentile(o.ms, 0.5)),
    p99_ms: r2(percentile(o.ms, 0.99)),
    refused: o.refused,
    errors: o.errors,
    main_thread_ms_per_image: per(threadCpuMs(pid) - main0),
    serve_cpu_ms_per_image: per(cpuMs(pid) - all0),
    fronts_cpu_ms_per_image: per(s.fronts.reduce((n, p) => n + liveThreadsCpuMs(p), 0) - fr0),
  };
}

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  const fronts = Number(argValue(args, 'fronts') ?? 2);
  const c = Number(argValue(args, 'clients') ?? 4);
  const model = argValue(args, 'model') ?? 'builtin';
  if (model !== 'builtin' && model !== 'tiny') throw new Error(`--model: expected builtin or tiny, got ${model}`);
  const rounds = quick ? 1 : 3;
  const ms = quick ? 1000 : 6000;
  const peer = compilePeer('post-clients', 'clients');
  if (!peer) throw new Error('fronts: the C clients (bench/peers/post-clients.c) did not build');
  const work = mkdtempSync(join(tmpdir(), 'sightflow-bench-fronts-'));
  const servers: Server[] = [];
  try {
    const tiny = model === 'tiny' ? await writeTinyDetector(work, [join(work, 'alone'), join(work, 'fronts')]) : null;
    const bodyFile = await writeDetectBody(work, undefined, tiny ?? undefined);
    servers.push(await start('serve alone', 0, join(work, 'alone')));
    servers.push(await start(`serve + ${fronts} fronts`, fronts, join(work, 'fronts')));
    if (servers[1]!.fronts.length !== fronts) throw new Error(`${servers[1]!.fronts.length} fronts listened`);
    for (const s of servers) {
      await postClients(peer.exe, s, bodyFile, c, 1000); // the model's first load and warm-up
    }
    const best = new Map<string, Row>();
    for (let r = 0; r < rounds; r++)
      for (const s of servers) {
        const row = await measure(peer.exe, s, bodyFile, c, ms);
        if (row.errors > 0) throw new Error(`${s.label}: ${row.errors} requests failed`);
        const had = best.get(s.label);
        if (!had || row.images_per_s > had.images_per_s) best.set(s.label, row);
      }
    const rows = servers.map((s) => best.get(s.label)!);
    const [alone, fronted] = rows as [Row, Row];
    const mainRatio = r2(fronted.main_thread_ms_per_image / alone.main_thread_ms_per_image);
    const ipsRatio = r2(fronted.images_per_s / alone.images_per_s);
    if (!json || !quick) {
      console.log(
        `fronts: detect${tiny ? ` with ${TINY_ID} (a 640 input, next to no compute)` : ''}, 640x480 JPEG, ${c} C clients, ${rounds} round(s) of ${ms / 1000} s, best round each`,
      );
      for (const x of rows)
        console.log(
          `  ${x.server.padEnd(18)} ${x.images_per_s.toFixed(1).padStart(6)} images/s  p50 ${x.p50_ms.toFixed(0)} p99 ${x.p99_ms.toFixed(0)} ms  main thread ${x.main_thread_ms_per_image.toFixed(2)} ms/image (one loop: ${Math.round(1000 / x.main_thread_ms_per_image)} images/s)  serve ${x.serve_cpu_ms_per_image.toFixed(1)} ms  fronts ${x.fronts_cpu_ms_per_image.toFixed(2)} ms/image`,
        );
      console.log(
        `  ratio (fronts / alone): main thread per image ${mainRatio}; images/s ${ipsRatio}${quick ? ' (--quick: not a figure to quote)' : ''}`,
      );
    }
    if (json)
      console.log(
        JSON.stringify({
          suite: 'fronts',
          quick,
          model,
          clients: c,
          fronts,
          rows,
          main_thread_ratio: mainRatio,
          images_per_s_ratio: ipsRatio,
        }),
      );
  } finally {
    for (const s of servers) {
      s.child.kill('SIGTERM');
      await s.exited;
    }
    rmSync(work, { recursive: true, force: true });
  }
}

const TINY_ID = 'tiny-detector-640';

/**
 * --model tiny: a YOLOv8-layout detector with a 640x640 input whose graph is a mean and one multiply-add
 * (test/helpers/inference.ts tinyYoloOnnx), registered in each server's data directory. Its runs take next to
 * no CPU, so the servers answer as fast as the request path allows and the per-image figures are those of a
 * process whose model keeps up, as a GPU does; letterbox, outputs, boxes and colours stay a real detector's.
 * Three boxes with scores of the image's brightness: the body asks for them (confidence_threshold 0.1).
 */
export async function writeTinyDetector(work: string, dataDirs: string[]): Promise<Record<string, unknown>> {
  const file = join(work, `${TINY_ID}.onnx`);
  const boxes = [
    { cx: 320, cy: 240, w: 200, h: 300, cls: 0, score: 0.9 },
    { cx: 120, cy: 400, w: 80, h: 60, cls: 2, score: 0.8 },
    { cx: 500, cy: 150, w: 120, h: 90, cls: 16, score: 0.7 },
  ];
  writeFileSync(file, tinyYoloOnnx('yolov8', boxes, COCO_CLASSES.length, 640));
  for (const dir of dataDirs)
    await writeByoManifest(dir, {
      id: TINY_ID,
      task: 'detect',
      file,
      extra: {
        preprocess: { resize: 'letterbox', width: 640, height: 640, scale: 1 / 255 },
        postprocess: { type: 'yolo', layout: 'yolov8', nmsIou: 0.45 },
      },
    });
  return { model: TINY_ID, confidence_threshold: 0.1 };
}
