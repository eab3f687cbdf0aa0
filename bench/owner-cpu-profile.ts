// Where the CPU of the process that owns the model sessions goes when front processes take the HTTP
// (SIGHTFLOW_HTTP_FRONTS): `sightflow serve` with N fronts under the C clients, its main thread sampled by
// Linux perf (bench/perf-sample.ts), each sample put in the part its innermost known frame belongs to. docs/capacity.md, "Front
// processes", holds the figures; they say what must leave the owner for it to keep up with a GPU.
//   node --import tsx bench/owner-cpu-profile.ts [--fronts 2] [--clients 4] [--seconds 10] [--model tiny]
//     [--stacks FILE] [--json]
//   --stacks FILE: every sample's frames, named, innermost first (samples apart by a line '=='), to look
//   inside a part.
//   --model tiny: a detector whose model takes next to no CPU (bench fronts --model tiny), so the owner runs at
//   the rate its request path allows, as behind a GPU; --fronts 0: `serve` alone.
// Needs `perf` (Debian's linux-perf) and perf_event_paranoid <= 2. Run by hand, not by the suite.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { argValue } from '../eval/lib/model-choice.js';
import { compilePeer } from './peers/compile.js';
import { writeDetectBody } from './peers/detect-body.js';
import { postClients } from './peers/post-clients-run.js';
import { attribute, requirePerf, sampleThread } from './perf-sample.js';
import { threadCpuMs } from './proc-cpu.js';
import { start, writeTinyDetector } from './suites/fronts.js';

/** The parts, tried on each frame from the innermost out; the first frame that names one decides. */
const PARTS: Array<[string, RegExp]> = [
  ['usage: embedded database (PGlite)', /pglite|wasm/],
  ['usage: token counting', /gpt-tokenizer|usage\/tokens/],
  ['usage: ledger and bill', /src\/usage\//],
  ['pipe to the fronts (calls in, answers out)', /child_process|http\/fronts\/|serialization/],
  ['image: decode and stretch calls', /src\/native\/image|src\/media\/image-|pixel-pool/],
  ['detector: colours', /colour\.ts/],
  ['detector: input, outputs, boxes', /src\/detection\//],
  ['model queue, runtime, session thread messages', /src\/inference\/|internal\/worker|messageport/],
  ['vision service', /src\/vision\//],
];

const args = process.argv.slice(2);
const fronts = Number(argValue(args, 'fronts') ?? 2);
const clients = Number(argValue(args, 'clients') ?? 4);
const seconds = Number(argValue(args, 'seconds') ?? 10);
const json = args.includes('--json');
const tinyModel = argValue(args, 'model') === 'tiny';
const stacksFile = argValue(args, 'stacks');
requirePerf('owner-cpu-profile');
const peer = compilePeer('post-clients', 'owner-cpu-profile');
if (!peer) throw new Error('owner-cpu-profile: no C compiler (cc) for the load clients');
const work = mkdtempSync(join(tmpdir(), 'sightflow-owner-cpu-'));
const tiny = tinyModel ? await writeTinyDetector(work, [join(work, 'data')]) : undefined;
const s = await start(`serve + ${fronts} fronts`, fronts, join(work, 'data'), ['--perf-basic-prof-only-functions']);
try {
  const bodyFile = await writeDetectBody(work, undefined, tiny);
  await postClients(peer.exe, s, bodyFile, clients, 2000); // the model's first load and warm-up
  const pid = s.child.pid!;
  let cpuMs = 0;
  const { result: o, samples } = await sampleThread(pid, async () => {
    const cpu0 = threadCpuMs(pid);
    const x = await postClients(peer.exe, s, bodyFile, clients, seconds * 1000);
    cpuMs = threadCpuMs(pid) - cpu0;
    return x;
  }).catch((e: Error) => {
    throw new Error(`owner-cpu-profile: ${e.message}`);
  });
  if (stacksFile) writeFileSync(stacksFile, `${samples.map((f) => f.join('\n')).join('\n==\n')}\n`);
  const msPerImage = cpuMs / o.ok;
  const parts = attribute(
    samples,
    PARTS,
    'the rest (scheduling, allocation, event loop, garbage collector)',
    msPerImage,
  ).map(({ part, share, ms }) => ({ part, share, ms_per_image: ms }));
  const result = {
    fronts,
    clients,
    seconds,
    images: o.ok,
    images_per_s: +(o.ok / (o.wall_ms / 1000)).toFixed(1),
    samples: samples.length,
    main_thread_ms_per_image: +msPerImage.toFixed(2),
    parts,
  };
  if (!json) {
    console.log(
      `owner's main thread behind ${fronts} fronts: ${result.main_thread_ms_per_image} ms an image at ${clients} clients (${result.images_per_s} images/s, ${samples.length} samples)`,
    );
    for (const p of parts)
      console.log(`  ${(p.share * 100).toFixed(1).padStart(5)}%  ${p.ms_per_image.toFixed(2)} ms  ${p.part}`);
  }
  console.log(JSON.stringify(result));
} finally {
  s.child.kill('SIGTERM');
  await s.exited;
  rmSync(work, { recursive: true, force: true });
  rmSync(`/tmp/perf-${s.child.pid}.map`, { force: true });
}
