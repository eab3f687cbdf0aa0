// `npm run bench -- models [--quick] [--json]`: memory of a model's life in the runtime. Our runtime loads
// the model in its worker thread, runs it, and after the idle time (SIGHTFLOW_MODEL_IDLE_UNLOAD_S; here
// 0.5 s) releases the session and ends the worker; the process RSS is read before the load, while loaded,
// and after each unload, over several load/unload cycles (a leak would climb). The peer is onnxruntime-node
// used the plain way on the main thread: InferenceSession.create, run, release(). Goal: RSS after unload
// within 20% of the RSS before the load. "Before" is the process with onnxruntime already initialised (a
// tiny model loaded and unloaded once: its environment and thread pools stay for the process's life, as in
// any server that has served a model); the cold start figure is printed beside it.
// Each side is measured in a fresh process, twice: with glibc's defaults, whose dynamic mmap threshold keeps
// freed model buffers in the heap (RSS does not come back), and with MALLOC_MMAP_THRESHOLD_=131072 (what the
// docs/models.md recommends for idle unload: large buffers are mmapped and go back to the system when freed).
// The model is the yolov8n int8 export when the bring-your-own exports are there (eval/byo-dir.ts),
// else the prepared built-in CenterNet.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import ort from 'onnxruntime-node';
import { InferenceRuntime, Tensor } from '../../src/inference/runtime.js';
import { ModelRegistry } from '../../src/inference/registry.js';
import { projectRoot } from '../../src/base/paths.js';
import { BYO_MODELS, byoPath } from '../../eval/byo-dir.js';
import { tinyYoloOnnx } from '../../test/helpers/inference.js';
import { scriptArgs } from '../../test/helpers/node-script.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const MB = 1024 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function settledRss(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    gc();
    await sleep(100);
  }
  return process.memoryUsage.rss();
}

async function pickModel(): Promise<{ name: string; path: string; feeds: () => Record<string, ort.Tensor> }> {
  const yolo = byoPath(BYO_MODELS['yolov8n-int8']);
  if (existsSync(yolo)) {
    return {
      name: 'yolov8n-int8',
      path: yolo,
      feeds: () => ({ images: new Tensor('float32', new Float32Array(3 * 640 * 640).fill(0.5), [1, 3, 640, 640]) }),
    };
  }
  const registry = await ModelRegistry.open(join(projectRoot, 'data'));
  return {
    name: 'centernet-coco',
    path: await registry.onnxPath('centernet-coco'),
    feeds: () => ({ images: new Tensor('float32', new Float32Array(512 * 512 * 3).fill(0.5), [1, 512, 512, 3]) }),
  };
}

interface Measured {
  model: string;
  cold_mb: number;
  before_mb: number;
  loaded_mb: number[];
  after_mb: number[];
  after_over_before: number;
  peer: { before_mb: number; loaded_mb: number[]; after_mb: number[]; after_over_before: number };
}

/** One process's measurement (run as a child with the malloc setting under test). */
async function measure(quick: boolean): Promise<Measured> {
  const model = await pickModel();
  const cycles = quick ? 2 : 5;
  const runsPerCycle = quick ? 3 : 10;
  const runtime = new InferenceRuntime({ providers: ['cpu'], idleUnloadMs: IDLE_MS, log: { info() {}, warn() {} } });
  const cold = await settledRss();
  const tiny = runtime.register({
    id: 'tiny',
    load: async () => tinyYoloOnnx('yolov8', [{ cx: 1, cy: 1, w: 1, h: 1, cls: 0, score: 1 }], 2, 32),
  });
  await tiny.run({ images: new Tensor('float32', new Float32Array(3 * 32 * 32), [1, 3, 32, 32]) });
  await tiny.unload();
  const before = await settledRss();
  const loaded: number[] = [];
  const after: number[] = [];
  for (let c = 0; c < cycles; c++) {
    const h = runtime.register({ id: model.name, load: async () => model.path });
    for (let i = 0; i < runsPerCycle; i++) await h.run(model.feeds());
    loaded.push(process.memoryUsage.rss());
    const t0 = Date.now();
    while (h.state().state !== 'unloaded' && Date.now() - t0 < IDLE_MS * 10) await sleep(50);
    if (h.state().state !== 'unloaded') throw new Error('the model was not unloaded after its idle time');
    after.push(await settledRss());
  }
  await runtime.close();
  const peerBefore = await settledRss();
  const peerLoaded: number[] = [];
  const peerAfter: number[] = [];
  for (let c = 0; c < cycles; c++) {
    const s = await ort.InferenceSession.create(model.path, { executionProviders: ['cpu'] });
    for (let i = 0; i < runsPerCycle; i++) await s.run(model.feeds());
    peerLoaded.push(process.memoryUsage.rss());
    await s.release();
    peerAfter.push(await settledRss());
  }
  const mb = (n: number) => Math.round((n / MB) * 10) / 10;
  return {
    model: model.name,
    cold_mb: mb(cold),
    before_mb: mb(before),
    loaded_mb: loaded.map(mb),
    after_mb: after.map(mb),
    after_over_before: Math.round((Math.max(...after) / before) * 1000) / 1000,
    peer: {
      before_mb: mb(peerBefore),
      loaded_mb: peerLoaded.map(mb),
      after_mb: peerAfter.map(mb),
      after_over_before: Math.round((Math.max(...peerAfter) / peerBefore) * 1000) / 1000,
    },
  };
}

const IDLE_MS = 500;
const SETTINGS: Record<string, Record<string, string>> = {
  'glibc defaults': {},
  'MALLOC_MMAP_THRESHOLD_=131072': { MALLOC_MMAP_THRESHOLD_: '131072' },
};

export async function run({ quick, json }: { quick: boolean; json: boolean; args: string[] }): Promise<void> {
  const results: Record<string, Measured> = {};
  for (const [name, env] of Object.entries(SETTINGS)) {
    const { MALLOC_MMAP_THRESHOLD_: _unset, ...base } = process.env;
    const out = execFileSync(
      process.execPath,
      [...scriptArgs(fileURLToPath(import.meta.url)), '--child', quick ? '--quick' : ''],
      {
        env: { ...base, ...env },
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const m = JSON.parse(out.trim().split('\n').at(-1)!) as Measured;
    results[name] = m;
    const f = (n: number) => `${n.toFixed(0)} MB`;
    console.log(`${name}: model ${m.model}, idle unload after ${IDLE_MS} ms; cold start ${f(m.cold_mb)}`);
    console.log(
      `  sightflow: before load ${f(m.before_mb)}, loaded ${m.loaded_mb.map(f).join(' / ')}, after idle unload ${m.after_mb.map(f).join(' / ')}: ` +
        `${(m.after_over_before * 100).toFixed(0)}% of before (goal <= 120%)`,
    );
    console.log(
      `  peer (session.release() on the main thread): before ${f(m.peer.before_mb)}, loaded ${m.peer.loaded_mb.map(f).join(' / ')}, ` +
        `after release ${m.peer.after_mb.map(f).join(' / ')}: ${(m.peer.after_over_before * 100).toFixed(0)}% of before`,
    );
  }
  const tuned = results['MALLOC_MMAP_THRESHOLD_=131072']!;
  if (json) {
    console.log(
      JSON.stringify({
        suite: 'models',
        idle_unload_ms: IDLE_MS,
        settings: results,
        sightflow: { after_over_before: tuned.after_over_before },
        peer: { name: 'onnxruntime-node session.release()', after_over_before: tuned.peer.after_over_before },
        ratio: Math.round((tuned.after_over_before / tuned.peer.after_over_before) * 1000) / 1000,
        within_goal: tuned.after_over_before <= 1.2,
      }),
    );
  }
}

if (process.argv.includes('--child')) {
  console.log(JSON.stringify(await measure(process.argv.includes('--quick'))));
}
