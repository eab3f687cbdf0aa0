// Where the CPU of the process that owns the model sessions goes when front processes take the HTTP
// (SIGHTFLOW_HTTP_FRONTS): `sightflow serve` with N fronts under the C clients, its main thread sampled by
// Linux perf (CPU time, not wall time: V8's own profiler also counts time in calls that wait or are
// preempted), each sample put in the part its innermost known frame belongs to. docs/capacity.md, "Front
// processes", holds the figures; they say what must leave the owner for it to keep up with a GPU.
//   node --import tsx bench/owner-cpu-profile.ts [--fronts 2] [--clients 4] [--seconds 10] [--model tiny]
//     [--stacks FILE] [--json]
//   --stacks FILE: every sample's frames, named, innermost first (samples apart by a line '=='), to look
//   inside a part.
//   --model tiny: a detector whose model takes next to no CPU (bench fronts --model tiny), so the owner runs at
//   the rate its request path allows, as behind a GPU; --fronts 0: `serve` alone.
// Needs `perf` (Debian's linux-perf) and perf_event_paranoid <= 2. Run by hand, not by the suite.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Readable, Writable } from 'node:stream';
import { join } from 'node:path';
import { argValue } from '../eval/lib/model-choice.js';
import { compilePeer } from './peers/compile.js';
import { writeDetectBody } from './peers/detect-body.js';
import { postClients } from './peers/post-clients-run.js';
import { readPerfMap } from './perf-map.js';
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
try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  throw new Error('owner-cpu-profile: needs perf (apt-get install linux-perf)');
}
const peer = compilePeer('post-clients', 'owner-cpu-profile');
if (!peer) throw new Error('owner-cpu-profile: no C compiler (cc) for the load clients');
const work = mkdtempSync(join(tmpdir(), 'sightflow-owner-cpu-'));
const tiny = tinyModel ? await writeTinyDetector(work, [join(work, 'data')]) : undefined;
const s = await start(`serve + ${fronts} fronts`, fronts, join(work, 'data'), ['--perf-basic-prof-only-functions']);
try {
  const bodyFile = await writeDetectBody(work, undefined, tiny);
  await postClients(peer.exe, s, bodyFile, clients, 2000); // the model's first load and warm-up
  const pid = s.child.pid!;
  const data = join(work, 'perf.data');
  // -t: the main thread only (its id is the process's); the session threads are not the bound.
  // Sampling is switched on only once perf is attached (its control descriptors: enable, then its ack), so a
  // perf that starts slowly on a loaded machine still samples the whole run of the clients, and only it.
  const rec = spawn(
    'perf',
    ['record', '-F', '999', '-g', '-D', '-1', '--control', 'fd:3,4', '-t', String(pid), '-o', data],
    { stdio: ['ignore', 'ignore', 'inherit', 'pipe', 'pipe'] },
  );
  const recorded = new Promise<number | null>((r) => rec.on('close', r));
  const ctl = rec.stdio[3] as Writable;
  const ack = rec.stdio[4] as Readable;
  const command = (c: string) =>
    new Promise<void>((resolve, reject) => {
      const failed = () => reject(new Error(`owner-cpu-profile: perf did not acknowledge ${c}`));
      rec.once('close', failed);
      ack.once('data', () => {
        rec.off('close', failed);
        resolve();
      });
      ctl.write(`${c}\n`);
    });
  await command('enable');
  const cpu0 = threadCpuMs(pid);
  const o = await postClients(peer.exe, s, bodyFile, clients, seconds * 1000);
  const cpuMs = threadCpuMs(pid) - cpu0;
  await command('disable');
  rec.kill('SIGINT');
  const code = await recorded;
  if (code !== 0 && code !== null) throw new Error(`owner-cpu-profile: perf record exited with ${code}`);
  const scripted = spawnSync('perf', ['script', '-i', data, '-F', 'tid,ip,sym'], { maxBuffer: 256 * 1024 * 1024 });
  const script = scripted.stdout?.toString() ?? '';

  // perf script: a line with the thread id alone opens a sample (perf 6.1 pads it with spaces), its frames
  // follow indented, each an address and a symbol, innermost first. A JavaScript frame is named from V8's map
  // by the newest code at its address, not perf's first (bench/perf-map.ts).
  const jit = readPerfMap(`/tmp/perf-${pid}.map`);
  const frameName = (line: string) => {
    const m = /^([0-9a-f]+) (.*)$/.exec(line);
    return m ? (jit.name(Number.parseInt(m[1]!, 16)) ?? m[2]!) : line;
  };
  const counts = new Map<string, number>();
  let samples = 0;
  const stacks: string[] = [];
  const count = (frames: string[]) => {
    samples++;
    if (stacksFile) stacks.push(frames.join('\n'));
    let part = 'the rest (scheduling, allocation, event loop, garbage collector)';
    outer: for (const f of frames)
      for (const [name, re] of PARTS)
        if (re.test(f)) {
          part = name;
          break outer;
        }
    counts.set(part, (counts.get(part) ?? 0) + 1);
  };
  let frames: string[] | null = null;
  for (const line of script.split('\n')) {
    if (line === '') continue;
    if (/^\s*\d+\s*$/.test(line)) {
      if (frames) count(frames);
      frames = [];
    } else frames?.push(frameName(line.trim()));
  }
  if (frames) count(frames);
  if (samples === 0)
    throw new Error(
      `owner-cpu-profile: perf recorded no samples (the clients had ${o.ok} answers, ${o.errors} errors; perf.data ${statSync(data).size} bytes; perf script: ${String(scripted.stderr).trim().slice(0, 600)})`,
    );
  if (stacksFile) writeFileSync(stacksFile, `${stacks.join('\n==\n')}\n`);
  const msPerImage = cpuMs / o.ok;
  const parts = [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(([part, n]) => ({
      part,
      share: +(n / samples).toFixed(3),
      ms_per_image: +((n / samples) * msPerImage).toFixed(2),
    }));
  const result = {
    fronts,
    clients,
    seconds,
    images: o.ok,
    images_per_s: +(o.ok / (o.wall_ms / 1000)).toFixed(1),
    samples,
    main_thread_ms_per_image: +msPerImage.toFixed(2),
    parts,
  };
  if (!json) {
    console.log(
      `owner's main thread behind ${fronts} fronts: ${result.main_thread_ms_per_image} ms an image at ${clients} clients (${result.images_per_s} images/s, ${samples} samples)`,
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
