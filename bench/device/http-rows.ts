// The GPU check's HTTP rows (scripts/gpu-check.sh): the whole sightflow server, bundled beside the check
// (scripts/device-bundle.sh lays it out in server/), answering POST /v1/vision/detect for a 640x480 JPEG to the
// C clients (bench/peers/post-clients.c, built static into the bundle) at 1, 16 and 64 connections, for each
// detector in the bundle and each serving configuration (the defaults, then dynamic batching, behind fronts, and
// behind fronts on the native engine). Beside each row
// the CPU the server's main thread spent per image (from /proc): one main thread parses every request, so
// 1000 / that figure is the most images a second one process can take whatever the card does.
// The `fronts` configuration runs the batched one behind front processes (SIGHTFLOW_HTTP_FRONTS): there the
// main thread measured is that of the process that runs the model, which no longer parses HTTP, and the fronts'
// CPU per image is given beside it. After each batched configuration's rows, one more at its most clients
// with every batch size and no warm-up (changed on the running server), beside the default's padding to a few
// sizes and warm-up at load (`--every-size off` leaves it out).
//   node http-rows.js --server DIR --models DIR --client EXE --photo JPEG --providers cuda|cpu
//                     [--clients 1,16,64] [--seconds 3] [--configs defaults,batched,fronts,native] [--fronts 4]
//                     [--every-size on|off] --out FILE
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { writeByoManifest } from '../../src/models/byo-manifest.js';
import { postClients, percentile } from '../peers/post-clients-run.js';
import { parseExposition, sampleSum } from '../../test/helpers/metrics-text.js';
import { cpuMs, liveThreadsCpuMs, threadCpuMs } from '../proc-cpu.js';
import { gpuStatus } from '../../src/native/gpu.js';
import { sampleGpu, useServerAddon } from './gpu-sampler.js';
import { type Server, startServer, stopServer } from './staged-server.js';

interface Args {
  server: string;
  models: string;
  client: string;
  photo: string;
  providers: string;
  clients: number[];
  seconds: number;
  configs: string[];
  fronts: number;
  /** After each batched configuration's rows, one more at the most clients with every batch size, no warm-up. */
  everySize: boolean;
  out: string;
}

/** The serving configurations a row can run under: the environment each adds to the server's. */
const BATCHED = {
  SIGHTFLOW_BATCH_MAX_SIZE: '32',
  SIGHTFLOW_BATCH_MAX_DELAY_MS: '2',
  SIGHTFLOW_INFERENCE_QUEUE_DEPTH: '128',
};
const CONFIGS: Record<string, { label: (a: Args) => string; env: (a: Args) => Record<string, string> }> = {
  defaults: { label: () => 'defaults', env: () => ({}) },
  // Triton's dynamic batcher with a short queue delay: up to 32 images a call, the first waiting 2 ms for others;
  // a queue deep enough for 64 clients (the default 32 refuses some of them with 503 and Retry-After, which
  // leaves the card idle while they wait).
  batched: { label: () => 'batch <= 32, 2 ms, queue 128', env: () => BATCHED },
  // The same behind front processes that take the HTTP off the event loop of the process that runs the model.
  fronts: {
    label: (a) => `batch <= 32, 2 ms, queue 128, ${a.fronts} fronts`,
    env: (a) => ({ ...BATCHED, SIGHTFLOW_HTTP_FRONTS: String(a.fronts) }),
  },
  // The same again on the native engine (TensorRT in FP16 with its caches, CUDA graphs on the CUDA provider,
  // page-locked inputs): against `fronts`, what the engine alone changes; with both, what the server does at its best.
  native: {
    label: (a) => `batch <= 32, 2 ms, queue 128, ${a.fronts} fronts, native engine, CUDA graphs`,
    env: (a) => ({
      ...BATCHED,
      SIGHTFLOW_HTTP_FRONTS: String(a.fronts),
      SIGHTFLOW_INFERENCE_ENGINE: 'native',
      SIGHTFLOW_CUDA_GRAPHS: 'true',
    }),
  },
};

function parseArgs(argv: string[]): Args {
  const v = (name: string, dflt?: string): string => {
    const i = argv.indexOf(`--${name}`);
    const got = i >= 0 ? argv[i + 1] : dflt;
    if (got === undefined) throw new Error(`http-rows: --${name} is required`);
    return got;
  };
  const configs = v('configs', 'defaults,batched').split(',');
  for (const c of configs) if (!CONFIGS[c]) throw new Error(`http-rows: unknown configuration ${c}`);
  return {
    server: resolve(v('server')),
    models: resolve(v('models')),
    client: resolve(v('client')),
    photo: resolve(v('photo')),
    providers: v('providers', 'cpu'),
    clients: v('clients', '1,16,64').split(',').map(Number),
    seconds: Number(v('seconds', '3')),
    configs,
    fronts: Number(v('fronts', '4')),
    everySize: v('every-size', 'on') !== 'off',
    out: v('out'),
  };
}

/** One request, answered 200 (a model's first load, its graph rewrites and the card's warm-up happen here). */
async function firstDetect(s: Server, body: string): Promise<{ ms: number; objects: number }> {
  const t0 = performance.now();
  for (;;) {
    const r = await fetch(`http://127.0.0.1:${s.port}/v1/vision/detect`, {
      method: 'POST',
      headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
      body,
      signal: AbortSignal.timeout(180_000),
    });
    const j = (await r.json()) as { objects?: unknown[]; error?: { message: string } };
    if (r.status === 200) return { ms: performance.now() - t0, objects: j.objects?.length ?? 0 };
    if (r.status !== 503 || performance.now() - t0 > 180_000)
      throw new Error(`detect answered ${r.status}: ${j.error?.message ?? JSON.stringify(j)}`);
    await new Promise((res) => setTimeout(res, 500));
  }
}

/** Where the model's loaded sessions run, as the server reports it (a GPU session that failed to load fell back). */
async function servingOf(
  s: Server,
  model: string,
): Promise<{ providers: unknown; devices: unknown; engine?: unknown; batch?: unknown; warmup?: unknown }> {
  try {
    const r = await fetch(`http://127.0.0.1:${s.port}/v1/models/${model}`, {
      headers: { authorization: `Bearer ${s.key}` },
      signal: AbortSignal.timeout(10_000),
    });
    const j = (await r.json()) as {
      serving?: { providers?: unknown; devices?: unknown; engine?: unknown; batch?: unknown; warmup?: unknown };
    };
    // The batch sizes its sessions keep to and the first session's warm-up (each size's first run, at load).
    return {
      providers: j.serving?.providers ?? null,
      devices: j.serving?.devices ?? null,
      // The binding or the native engine, and whether its sessions replay CUDA graphs (and why not).
      engine: j.serving?.engine ?? null,
      batch: j.serving?.batch ?? null,
      warmup: j.serving?.warmup ?? null,
    };
  } catch (e) {
    return { providers: `unknown (${(e as Error).message})`, devices: null };
  }
}

/** Changes a model's serving settings on the running server; its sessions load again at the next request. */
async function patchSettings(s: Server, model: string, settings: Record<string, unknown>): Promise<void> {
  const r = await fetch(`http://127.0.0.1:${s.port}/admin/v1/models/${model}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${s.adminToken}`, 'content-type': 'application/json' },
    body: JSON.stringify(settings),
    signal: AbortSignal.timeout(60_000),
  });
  if (r.status !== 200) throw new Error(`PATCH ${model} settings answered ${r.status}: ${await r.text()}`);
}

/**
 * The server's own GPU metrics on this host: a server with its metrics port on, its `NVIDIA GPUs` line and
 * one scrape's sightflow_gpu_* series, set beside what the driver's library tells the check itself (the same
 * cards by UUID, with the same memory). Without a driver both say none.
 */
async function serverMetrics(a: Args, dataDir: string): Promise<Record<string, unknown>> {
  const driver = await gpuStatus();
  const s = await startServer(a, dataDir, { SIGHTFLOW_METRICS_PORT: '0', SIGHTFLOW_METRICS_HOST: '127.0.0.1' });
  try {
    const logged = (msg: string) =>
      s.log
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, any>)
        .find((j) => j.msg === msg);
    // The cards' line comes after the server listens, once the library has started.
    for (let t = 0; driver.available && !logged('NVIDIA GPUs') && t < 100; t++)
      await new Promise((r) => setTimeout(r, 100));
    const port = logged('metrics listening')?.metricsPort as number | undefined;
    if (!port) return { error: 'the server logged no metrics port' };
    const r = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(10_000) });
    const text = await r.text();
    const lines = text.split('\n').filter((l) => l.startsWith('sightflow_gpu_'));
    const samples = parseExposition(text).filter((x) => x.name.startsWith('sightflow_gpu_'));
    const card = (d: { uuid: string; memoryTotalBytes?: number }) =>
      samples.some(
        (x) =>
          x.name === 'sightflow_gpu_memory_total_bytes' && x.labels.uuid === d.uuid && x.value === d.memoryTotalBytes,
      );
    const devices = sampleSum(samples, 'sightflow_gpu_devices');
    return {
      driver_devices: driver.devices.length,
      driver_reason: driver.reason ?? null,
      server_devices: devices,
      logged: logged('NVIDIA GPUs')?.gpus ?? null,
      series: [...new Set(samples.map((x) => x.name))],
      matches: devices === driver.devices.length && driver.devices.every(card),
      lines: lines.slice(0, 40),
    };
  } finally {
    await stopServer(s);
  }
}

const round = (x: number, d = 1) => (Number.isFinite(x) ? +x.toFixed(d) : null);

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  useServerAddon(a.server);
  const work = mkdtempSync(join(tmpdir(), 'sf-http-rows-'));
  const jpeg = readFileSync(a.photo);
  const models = ['centernet-coco', 'yolov8n-int8'].filter((m) => existsSync(join(a.models, m)));
  const rows: Array<Record<string, unknown>> = [];
  const servers: Array<Record<string, unknown>> = [];
  let metrics: Record<string, unknown> | null = null;
  // Written after every row as well: a check stopped from outside keeps the rows it made.
  const write = () =>
    writeFileSync(
      a.out,
      JSON.stringify(
        { route: 'POST /v1/vision/detect', photo: '640x480 JPEG', servers, rows, server_metrics: metrics },
        null,
        2,
      ) + '\n',
    );
  try {
    for (const name of a.configs) {
      const config = { label: CONFIGS[name]!.label(a), env: CONFIGS[name]!.env(a) };
      const dataDir = join(work, `data-${name}`);
      // yolov8n-int8 is a bring-your-own export: registered in the data dir before the server starts, as a
      // user drops a manifest in.
      if (models.includes('yolov8n-int8')) {
        const dir = join(a.models, 'yolov8n-int8');
        const file = readdirSync(dir).find((f) => f.endsWith('.onnx'));
        if (file) await writeByoManifest(dataDir, { id: 'yolov8n-int8', task: 'detect', file: join(dir, file) });
      }
      const t0 = performance.now();
      const fronts: number[] = [];
      const s = await startServer(a, dataDir, config.env, (line) => {
        if (line.includes('"front process listening"')) fronts.push((JSON.parse(line) as { pid: number }).pid);
      });
      const frontsCpu = () => fronts.reduce((n, pid) => n + liveThreadsCpuMs(pid), 0);
      const started = { config: config.label, env: config.env, start_ms: Math.round(performance.now() - t0) };
      try {
        for (const model of models) {
          const bodyFile = join(work, `body-${model}.json`);
          writeFileSync(
            bodyFile,
            JSON.stringify({ image_base64: `data:image/jpeg;base64,${jpeg.toString('base64')}`, model }),
          );
          const first = await firstDetect(s, readFileSync(bodyFile, 'utf8'));
          const entry: Record<string, unknown> = {
            ...started,
            model,
            image_threads: s.imageThreads,
            first_request_ms: Math.round(first.ms),
            objects: first.objects,
          };
          servers.push(entry);
          const measure = async (label: string, c: number) => {
            // A second at this level first: sessions and batches settle before the measured run.
            await postClients(a.client, s, bodyFile, c, 1000);
            const main0 = threadCpuMs(s.child.pid!);
            const all0 = cpuMs(s.child.pid!);
            const fronts0 = frontsCpu();
            const card = sampleGpu();
            const o = await postClients(a.client, s, bodyFile, c, a.seconds * 1000);
            const gpu = await card.stop();
            const mainMs = threadCpuMs(s.child.pid!) - main0;
            const allMs = cpuMs(s.child.pid!) - all0;
            const frontsMs = frontsCpu() - fronts0;
            const row = {
              config: label,
              model,
              providers: s.providers,
              clients: c,
              images_per_s: round(o.ok / (o.wall_ms / 1000)),
              p50_ms: round(percentile(o.ms, 0.5)),
              p99_ms: round(percentile(o.ms, 0.99)),
              ok: o.ok,
              refused: o.refused,
              errors: o.errors,
              main_thread_ms_per_image: o.ok > 0 ? round(mainMs / o.ok, 2) : null,
              process_cpu_ms_per_image: o.ok > 0 ? round(allMs / o.ok, 2) : null,
              fronts: fronts.length,
              fronts_cpu_ms_per_image: o.ok > 0 && fronts.length > 0 ? round(frontsMs / o.ok, 2) : null,
              // The card meanwhile (null without a driver): near 1 the card is the bound, well below it the host.
              gpu,
            };
            rows.push(row);
            process.stderr.write(`http: ${JSON.stringify(row)}\n`);
            write();
          };
          for (const c of a.clients) await measure(config.label, c);
          // After the rows, when overlapping requests have loaded the further sessions.
          entry.serving = await servingOf(s, model);
          // A batched configuration once more at its most clients with every batch size and no warm-up, its
          // settings changed on the running server (PATCH /admin/v1/models/:id): what the padding to a few
          // sizes and the warm-up gain or cost against the shapes they save, on the same server and card.
          if (a.everySize && (name === 'batched' || name === 'fronts')) {
            await patchSettings(s, model, { batch_sizes: 'all', warmup: 'off' });
            await firstDetect(s, readFileSync(bodyFile, 'utf8'));
            await measure(`${config.label}; every batch size, no warm-up`, Math.max(...a.clients));
            entry.every_size_serving = await servingOf(s, model);
            await patchSettings(s, model, { batch_sizes: null, warmup: null });
          }
        }
      } finally {
        await stopServer(s);
      }
    }
    metrics = await serverMetrics(a, join(work, 'data-metrics'));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  write();
}

await main();
