// `npm run bench -- vision [--quick] [--json]`: POST /v1/vision/{detect,ocr,describe} with a 640x480 JPEG
// (made from an eval photo with sharp), requests/s and p50/p95 latency at concurrency 1, 4 and 16, against
// the peer: the same work called in-process (decode the same base64, the same model calls, no HTTP, no
// auth, no ledger). At concurrency 1 the HTTP and in-process calls alternate, so load from other processes
// hits both alike; the ratio is in-process p50 / HTTP p50 (1 = no overhead; goal: HTTP <= 1.1x in-process).
// Then detect's three ways to send the image (base64 JSON, multipart/form-data, raw image/jpeg), alternated
// at concurrency 1: p50 of each, so the cost of base64 on the wire and in the server shows.
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import sharp from 'sharp';
import { evalDir, skipWithoutEvalData } from '../../eval/dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { startApp } from '../../src/app.js';
import { loadConfig } from '../../src/config/index.js';
import { createLogger } from '../../src/base/log.js';
import { projectRoot } from '../../src/base/paths.js';
import { loadImage, parseImageInput } from '../../src/media/image-input.js';
import { OcrEngine } from '../../src/ocr/engine.js';
import { describeImage } from '../../src/vision/describe/describer.js';

// OCR over the models setup prepared in data/ (the server hands the engine its own registry and runtime).
const { ocrImage } = OcrEngine.forDataDir(join(projectRoot, 'data'));

const ENDPOINTS = ['detect', 'ocr', 'describe'] as const;
type Endpoint = (typeof ENDPOINTS)[number];
const LEVELS = [1, 4, 16] as const;

interface Stats {
  n: number;
  rps: number;
  p50: number;
  p95: number;
  errors: number;
}

export async function run({ quick, json }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'detection_coco128/images/000000000094.jpg')) return;
  const photo = join(evalDir('detection_coco128'), 'images', '000000000094.jpg');
  const jpeg = await sharp(photo).resize(640, 480, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
  const image_base64 = `data:image/jpeg;base64,${jpeg.toString('base64')}`;
  // c1 alternates HTTP and in-process calls; a p50 of two samples is noise on a shared machine, so even the
  // quick run takes five of each.
  const counts = quick ? { 1: 5, 4: 4, 16: 16 } : { 1: 20, 4: 40, 16: 64 };

  const dataDir = mkdtempSync(join(tmpdir(), 'sightflow-bench-vision-'));
  const config = loadConfig(
    {
      ...process.env,
      SIGHTFLOW_LOG_LEVEL: 'silent',
      SIGHTFLOW_MODELS_DIR: process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models'),
    },
    { port: 0, host: '127.0.0.1', dataDir },
  );
  const app = await startApp(config, createLogger('silent'));
  try {
    await app.services.models.ready;
    const key = app.bootstrapKey!;
    const url = `http://127.0.0.1:${app.port}/v1/vision/`;
    // node:http with keep-alive rather than fetch: undici's WHATWG streams cost the client (which shares this
    // process and its CPU with the server) more than the server's whole HTTP path.
    const agent = new Agent({ keepAlive: true, maxSockets: 64 });
    // One request body for every call: a client's own allocations (a 140 KB string each time, which also
    // brings old-space GC into the timings) are not the server's overhead.
    const body = JSON.stringify({ image_base64 });
    const http =
      (endpoint: Endpoint, payload: string | Buffer = body, contentType = 'application/json') =>
      (): Promise<boolean> =>
        new Promise((resolve) => {
          const req = request(
            url + endpoint,
            {
              method: 'POST',
              agent,
              headers: {
                authorization: `Bearer ${key}`,
                'content-type': contentType,
                'content-length': Buffer.byteLength(payload),
              },
            },
            (res) => {
              res.resume();
              res.on('end', () => resolve(res.statusCode === 200));
              res.on('error', () => resolve(false));
            },
          );
          req.on('error', () => resolve(false));
          req.end(payload);
        });
    const detector = await app.services.taskModels.detector();
    const inProcess = (endpoint: Endpoint) => async (): Promise<boolean> => {
      const img = await loadImage(parseImageInput({ image_base64 }));
      if (endpoint === 'detect') await detector.detect(img);
      else if (endpoint === 'ocr') await ocrImage(img);
      else await describeImage({ detector, ocr: (i) => ocrImage(i) }, { image: img, language: 'en' });
      return true;
    };

    const ours: Record<string, Record<number, Stats>> = {};
    const peer: Record<string, Stats> = {};
    console.log(
      `vision: 640x480 JPEG (${(jpeg.length / 1024).toFixed(0)} KB), ${quick ? 'quick' : 'full'} run; latency in ms`,
    );
    for (const endpoint of ENDPOINTS) {
      // Warm-up of both paths: sessions (shared), ONNX Runtime's first runs (arena growth), JIT, key cache.
      for (let i = 0; i < 2; i++) {
        await http(endpoint)();
        await inProcess(endpoint)();
      }
      const [h1, p1] = await alternate(http(endpoint), inProcess(endpoint), counts[1]);
      ours[endpoint] = { 1: h1 };
      peer[endpoint] = p1;
      for (const c of [4, 16] as const) ours[endpoint]![c] = await load(http(endpoint), c, counts[c]);
      const row = LEVELS.map((c) => {
        const s = ours[endpoint]![c]!;
        return `c${c}: ${s.rps.toFixed(2)} req/s p50 ${s.p50.toFixed(0)} p95 ${s.p95.toFixed(0)}${s.errors ? ` (${s.errors} errors)` : ''}`;
      }).join(' | ');
      console.log(`  ${endpoint.padEnd(8)} http ${row}`);
      console.log(
        `  ${''.padEnd(8)} in-process c1: p50 ${p1.p50.toFixed(0)} p95 ${p1.p95.toFixed(0)} | HTTP overhead ${(h1.p50 / p1.p50).toFixed(2)}x`,
      );
    }
    // The same detect call with the image sent three ways, each body built once.
    const boundary = 'sightflow-bench-boundary';
    const multipart = Buffer.concat([
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="photo.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`,
      ),
      jpeg,
      Buffer.from(`\r\n--${boundary}--\r\n`),
    ]);
    const ways = {
      json: http('detect'),
      multipart: http('detect', multipart, `multipart/form-data; boundary=${boundary}`),
      raw: http('detect', jpeg, 'image/jpeg'),
    };
    for (const fn of Object.values(ways)) await fn();
    const upload = await alternateAll(ways, counts[1] * 2);
    console.log(
      `  detect upload c1 p50: base64 JSON ${upload.json!.p50.toFixed(1)} | multipart ${upload.multipart!.p50.toFixed(1)} | raw ${upload.raw!.p50.toFixed(1)}` +
        `${Object.values(upload).some((s) => s.errors) ? ' (some requests failed)' : ''}`,
    );
    const ratios = ENDPOINTS.map((e) => peer[e]!.p50 / ours[e]![1]!.p50);
    const ratio = Math.min(...ratios);
    const worst = ENDPOINTS[ratios.indexOf(ratio)]!;
    console.log(
      `  ratio (in-process p50 / http p50 at c1, worst endpoint ${worst}): ${ratio.toFixed(2)} -> HTTP overhead ${(1 / ratio).toFixed(2)}x (goal <= 1.1x)`,
    );
    if (Object.values(ours).some((byC) => Object.values(byC).some((s) => s.errors)))
      console.log('warning: some requests failed; see the error counts');
    if (json) {
      const sightflow = Object.fromEntries(
        ENDPOINTS.map((e) => [
          e,
          {
            c1_p50_ms: r1(ours[e]![1]!.p50),
            c1_p95_ms: r1(ours[e]![1]!.p95),
            c1_rps: r2(ours[e]![1]!.rps),
            c4_p50_ms: r1(ours[e]![4]!.p50),
            c4_p95_ms: r1(ours[e]![4]!.p95),
            c4_rps: r2(ours[e]![4]!.rps),
            c16_p50_ms: r1(ours[e]![16]!.p50),
            c16_p95_ms: r1(ours[e]![16]!.p95),
            c16_rps: r2(ours[e]![16]!.rps),
            errors: LEVELS.reduce((s, c) => s + ours[e]![c]!.errors, 0),
          },
        ]),
      );
      const peerOut = {
        name: 'in-process',
        ...Object.fromEntries(ENDPOINTS.map((e) => [e, { c1_p50_ms: r1(peer[e]!.p50), c1_p95_ms: r1(peer[e]!.p95) }])),
      };
      const detectUpload = Object.fromEntries(Object.entries(upload).map(([k, s]) => [`${k}_p50_ms`, r1(s.p50)]));
      console.log(
        JSON.stringify({
          suite: 'vision',
          sightflow: { ...sightflow, detect_upload: detectUpload },
          peer: peerOut,
          ratio: r2(ratio),
        }),
      );
    }
    agent.destroy();
  } finally {
    await app.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** n calls of each, one after the other, alternating: [http stats, in-process stats] at concurrency 1. */
async function alternate(a: () => Promise<boolean>, b: () => Promise<boolean>, n: number): Promise<[Stats, Stats]> {
  const ta: number[] = [];
  const tb: number[] = [];
  let ea = 0;
  let eb = 0;
  for (let i = 0; i < n; i++) {
    for (const [fn, times, isA] of [
      [a, ta, true],
      [b, tb, false],
    ] as const) {
      const t0 = performance.now();
      const ok = await fn().catch(() => false);
      times.push(performance.now() - t0);
      if (!ok) {
        if (isA) ea++;
        else eb++;
      }
    }
  }
  const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
  return [stats(ta, sum(ta), ea), stats(tb, sum(tb), eb)];
}

/** n rounds of one call of each, in turn, at concurrency 1: stats by name. */
async function alternateAll(fns: Record<string, () => Promise<boolean>>, n: number): Promise<Record<string, Stats>> {
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
  const errs: Record<string, number> = Object.fromEntries(Object.keys(fns).map((k) => [k, 0]));
  for (let i = 0; i < n; i++) {
    for (const [name, fn] of Object.entries(fns)) {
      const t0 = performance.now();
      if (!(await fn().catch(() => false))) errs[name]!++;
      times[name]!.push(performance.now() - t0);
    }
  }
  return Object.fromEntries(
    Object.entries(times).map(([k, ts]) => [
      k,
      stats(
        ts,
        ts.reduce((s, x) => s + x, 0),
        errs[k]!,
      ),
    ]),
  );
}

/** n calls with c in flight at a time. */
async function load(fn: () => Promise<boolean>, c: number, n: number): Promise<Stats> {
  const times: number[] = [];
  let next = 0;
  let errors = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      while (next < n) {
        next++;
        const t0 = performance.now();
        if (!(await fn().catch(() => false))) errors++;
        times.push(performance.now() - t0);
      }
    }),
  );
  return stats(times, performance.now() - started, errors);
}

function stats(times: number[], wallMs: number, errors: number): Stats {
  const s = [...times].sort((x, y) => x - y);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN;
  return { n: times.length, rps: times.length / (wallMs / 1000), p50: q(0.5), p95: q(0.95), errors };
}

const r1 = (v: number) => Math.round(v * 10) / 10;
const r2 = (v: number) => Math.round(v * 100) / 100;
