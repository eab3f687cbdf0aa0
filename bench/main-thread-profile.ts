// Where a detect request's main-thread time goes: a real server (in this process, port 0) under the C clients
// (bench/peers/post-clients.c) at N connections, its main thread profiled by V8's sampling profiler (node:inspector)
// for the measured seconds, each sample put in the part of the request its innermost known frame belongs to. One
// event loop parses every request, so its milliseconds per image bound what one process serves whatever runs the
// model (docs/capacity.md, "One event loop's share of an image"); this says which of them a second event loop
// could take.
//   node --import tsx bench/main-thread-profile.ts [--clients 4] [--seconds 8] [--json]
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestApp } from '../test/helpers/app.js';
import { compilePeer } from './peers/compile.js';
import { threadCpuMs } from './proc-cpu.js';
import { projectRoot } from '../src/base/paths.js';
import { evalDir } from '../eval/dir.js';
import { argValue } from '../eval/lib/model-choice.js';

/** The parts of a request, by the file (or package) of a sample's innermost frame that names one. */
const PARTS: Array<[string, RegExp]> = [
  ['reply (JSON, write)', /\/src\/http\/send\.ts/],
  [
    'image in (base64, JPEG decode call, pixels)',
    /\/src\/(media|vision\/image-input|base\/base64)|\/native\/image\.ts/,
  ],
  ['model (input, queue, sessions, worker messages)', /\/src\/(detection|inference)\/|worker_threads|internal\/worker/],
  ['usage (tokens, rows)', /\/src\/usage\/|gpt-tokenizer|tokens\.ts/],
  ['database (PGlite)', /pglite|wasm/],
  ['request in (HTTP, auth, body, JSON, validation, log)', /\/src\/(http|auth|base\/log|tracing)\/|pino|zod/],
  ['vision service', /\/src\/vision\//],
];

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

const args = process.argv.slice(2);
const clients = Number(argValue(args, 'clients') ?? 4);
const seconds = Number(argValue(args, 'seconds') ?? 8);
const json = args.includes('--json');
let photo = join(projectRoot, 'assets', 'astronaut.jpg');
try {
  photo = join(evalDir('detection_coco128'), 'images', '000000000094.jpg');
} catch {
  // Without the evaluation data the bundled photo does.
}
const jpeg = await sharp(photo).resize(640, 480, { fit: 'fill' }).jpeg({ quality: 90 }).toBuffer();
const t = await startTestApp({
  SIGHTFLOW_LOG_LEVEL: 'silent',
  SIGHTFLOW_MODELS_DIR: join(projectRoot, 'data', 'models'),
});
const peer = compilePeer('post-clients', 'main-thread-profile');
if (!peer) throw new Error('main-thread-profile: no C compiler (cc) for the load clients');
try {
  await t.app.services.models.ready;
  const bodyFile = join(t.dataDir, 'body.json');
  writeFileSync(bodyFile, JSON.stringify({ image_base64: `data:image/jpeg;base64,${jpeg.toString('base64')}` }));
  const load = async (ms: number) => {
    const child = spawn(
      peer.exe,
      [new URL(t.url).port, '/v1/vision/detect', t.key, bodyFile, String(clients), String(ms)],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const out: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    await new Promise((r) => child.on('close', r));
    return JSON.parse(Buffer.concat(out).toString()) as { ok: number; wall_ms: number };
  };
  await load(2000);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  await session.post('Profiler.start');
  const cpu0 = threadCpuMs(process.pid);
  const o = await load(seconds * 1000);
  const cpuMs = threadCpuMs(process.pid) - cpu0;
  const { profile } = (await session.post('Profiler.stop')) as {
    profile: { nodes: ProfileNode[]; samples: number[] };
  };
  session.disconnect();

  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const counts = new Map<string, number>();
  let busy = 0;
  for (const s of profile.samples) {
    const leaf = nodes.get(s)!.callFrame.functionName;
    if (leaf === '(idle)') continue;
    busy++;
    let part =
      leaf === '(garbage collector)' ? 'garbage collector' : leaf === '(program)' ? 'native, unattributed' : 'other';
    for (let id: number | undefined = s; id !== undefined && part === 'other'; id = parent.get(id)) {
      const url = nodes.get(id)!.callFrame.url;
      const hit = PARTS.find(([, re]) => re.test(url));
      if (hit) part = hit[0];
    }
    counts.set(part, (counts.get(part) ?? 0) + 1);
  }
  const msPerImage = cpuMs / o.ok;
  const parts = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([part, n]) => ({ part, share: +(n / busy).toFixed(3), ms_per_image: +((n / busy) * msPerImage).toFixed(2) }));
  // The bound from the figure reported beside it: from the unrounded one, the two could disagree by one image/s.
  const reportedMs = +msPerImage.toFixed(2);
  const result = {
    clients,
    seconds,
    images: o.ok,
    images_per_s: +(o.ok / (o.wall_ms / 1000)).toFixed(1),
    main_thread_ms_per_image: reportedMs,
    one_event_loop_allows: Math.round(1000 / reportedMs),
    parts,
  };
  if (!json) {
    console.log(
      `main thread: ${result.main_thread_ms_per_image} ms an image at ${clients} clients (${result.images_per_s} images/s; one event loop allows ~${result.one_event_loop_allows}/s)`,
    );
    for (const p of parts)
      console.log(`  ${(p.share * 100).toFixed(1).padStart(5)}%  ${p.ms_per_image.toFixed(2)} ms  ${p.part}`);
  }
  console.log(JSON.stringify(result));
} finally {
  await t.close();
}
process.exit(0);
