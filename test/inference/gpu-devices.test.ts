// Several GPUs: which devices the process sees and uses, a model's sessions spread over them (each asking the
// real ONNX Runtime binding for its device, and falling back to the CPU here, where no CUDA provider loads),
// and video decoders taking the cards in turn.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chooseGpuDevices, parseGpuDevices, sessionDevice, visibleGpuCount } from '../../src/inference/gpu-devices.js';
import { sessionProviders } from '../../src/inference/execution-providers.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { DecoderDevices } from '../../src/video/worker/decoder-devices.js';
import { ConfigError, loadConfig } from '../../src/config/index.js';
import { affineModel, affineRow, collectingLog } from '../helpers/inference.js';

/** A driver's view of a host: /proc/driver/nvidia/gpus with `proc` cards and /dev with `nodes` nvidiaN nodes. */
function host(t: { after: (fn: () => void) => void }, proc: number, nodes: number) {
  const root = mkdtempSync(join(tmpdir(), 'sf-gpus-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const procGpus = join(root, 'gpus');
  const dev = join(root, 'dev');
  mkdirSync(dev);
  if (proc) mkdirSync(procGpus);
  for (let i = 0; i < proc; i++) mkdirSync(join(procGpus, `0000:${(0x18 + i).toString(16)}:00.0`));
  for (let i = 0; i < nodes; i++) writeFileSync(join(dev, `nvidia${i}`), '');
  writeFileSync(join(dev, 'nvidiactl'), '');
  writeFileSync(join(dev, 'nvidia-uvm'), '');
  return { procGpus, dev };
}

test("the devices a process sees: the driver's cards, narrowed as CUDA narrows them", (t) => {
  assert.equal(visibleGpuCount(undefined, host(t, 0, 0)), 0, 'no driver, no devices');
  assert.equal(visibleGpuCount(undefined, host(t, 4, 4)), 4);
  assert.equal(visibleGpuCount(undefined, host(t, 8, 2)), 2, "a container given two of the host's eight cards");
  assert.equal(visibleGpuCount(undefined, host(t, 0, 3)), 3, 'no /proc list: the device nodes');
  const four = host(t, 4, 4);
  assert.equal(visibleGpuCount('2,3', four), 2);
  assert.equal(visibleGpuCount('', four), 0, 'an empty value hides every device');
  assert.equal(visibleGpuCount('1,-1,2', four), 1, 'CUDA stops at the first invalid entry');
  assert.equal(visibleGpuCount('0,7', four), 1, 'an ordinal past the cards ends the list');
  assert.equal(visibleGpuCount('GPU-8f1c2b4e-0000,MIG-1234', four), 2, 'UUIDs count');
  assert.equal(visibleGpuCount('0,1', host(t, 0, 0)), 0, 'no driver whatever CUDA is told');
});

test('SIGHTFLOW_GPU_DEVICES: all, or ordinals that exist (others warned about); junk stops the start', () => {
  assert.equal(parseGpuDevices(undefined), 'all');
  assert.equal(parseGpuDevices(' ALL '), 'all');
  assert.deepEqual(parseGpuDevices('2, 0,2'), [2, 0]);
  for (const bad of ['gpu0', '-1', '1;2', '0,,1', '1.5'])
    assert.throws(() => parseGpuDevices(bad), /not a device ordinal/, bad);
  assert.deepEqual(loadConfig({}).inference.gpuDevices, 'all');
  assert.deepEqual(loadConfig({ SIGHTFLOW_GPU_DEVICES: '1,3' }).inference.gpuDevices, [1, 3]);
  assert.equal(loadConfig({ CUDA_VISIBLE_DEVICES: '' }).inference.cudaVisibleDevices, '', 'blank kept: it hides all');
  assert.equal(loadConfig({}).inference.cudaVisibleDevices, undefined);
  assert.throws(
    () => loadConfig({ SIGHTFLOW_GPU_DEVICES: 'first' }),
    (e: unknown) => e instanceof ConfigError && e.variable === 'SIGHTFLOW_GPU_DEVICES' && /"first"/.test(e.message),
  );

  const log = collectingLog();
  assert.deepEqual(chooseGpuDevices('all', 3, log), [0, 1, 2]);
  assert.deepEqual(chooseGpuDevices('all', 0, log), []);
  assert.deepEqual(chooseGpuDevices([2, 0], 4, log), [2, 0]);
  assert.equal(log.lines.length, 0);
  assert.deepEqual(chooseGpuDevices([1, 5], 2, log), [1]);
  assert.match(log.lines[0]!.msg, /names device 5 but this process sees 2/);
});

test('sessions take the devices in turn, and a GPU provider is told its device', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4].map((k) => sessionDevice([0, 1, 2], k)),
    [0, 1, 2, 0, 1],
  );
  assert.deepEqual(
    [0, 1, 2].map((k) => sessionDevice([3, 1], k)),
    [3, 1, 3],
  );
  assert.equal(sessionDevice([], 2), undefined);
  assert.deepEqual(sessionProviders(['tensorrt', 'cuda', 'cpu'], 2), [
    { name: 'tensorrt', deviceId: 2 },
    { name: 'cuda', deviceId: 2 },
    'cpu',
  ]);
  assert.deepEqual(sessionProviders(['cuda', 'cpu'], undefined), ['cuda', 'cpu'], 'no device seen: the provider picks');
  assert.deepEqual(sessionProviders(['cpu'], 1), ['cpu']);
});

const row = affineRow;

/** A runtime on a host that claims CUDA and three cards, one session and one thread unless a GPU adds some. */
function threeCards(
  t: { after: (fn: () => Promise<void>) => void },
  providers: string[],
  log: ReturnType<typeof collectingLog>,
) {
  const runtime = new InferenceRuntime({
    providers,
    available: ['cuda', 'cpu'],
    visibleGpus: 3,
    sessions: 1,
    intraOpThreads: 1,
    log,
  });
  t.after(() => runtime.release());
  return runtime;
}

test('on a GPU provider a model gets a session per device, each loaded on its own device (here each falls back to the CPU)', async (t) => {
  const log = collectingLog();
  // A host that claims CUDA and three cards: the binding is asked for each device and, with no CUDA provider
  // library here, refuses, so each session falls back to the CPU and still answers.
  const runtime = threeCards(t, ['cuda', 'cpu'], log);
  assert.deepEqual(runtime.devices, [0, 1, 2]);
  assert.equal(runtime.sessions, 3, 'at least one session per device');
  assert.ok(log.lines.some((l) => /inference runs on cuda, cpu \(devices 0, 1, 2\)/.test(l.msg)));
  const model = runtime.register({ id: 'affine', load: async () => affineModel() });
  assert.equal(model.maxSessions, 3);
  // Overlapping runs load the further sessions, one at a time, each finishing after the runs that asked.
  for (const end = Date.now() + 30_000; model.loadedSessions < 3 && Date.now() < end; ) {
    const outs = await Promise.all(Array.from({ length: 6 }, (_, i) => model.run(row(i))));
    outs.forEach((o, i) =>
      assert.deepEqual(Array.from(o.y.data as Float32Array), [2 * i + 1, 2 * i + 3, 2 * i + 5, 2 * i + 7]),
    );
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(model.loadedSessions, 3, log.lines.map((l) => l.msg).join('\n'));
  const tried = log.lines
    .filter((l) => l.level === 'warn' && /could not start on cuda, cpu \(device \d\); falling back to cpu/.test(l.msg))
    .map((l) => (l.obj as { device: number }).device)
    .sort();
  assert.deepEqual(tried, [0, 1, 2], log.lines.map((l) => l.msg).join('\n'));
  const state = model.state();
  assert.deepEqual(state.providers, ['cpu']);
  assert.equal(state.devices, null, 'on the CPU no device is named');
});

test('more sessions than devices wrap round; the CPU and the shared worker keep their own counts', (t) => {
  const quiet = { info() {}, warn() {} };
  const gpu = new InferenceRuntime({
    providers: ['cuda', 'cpu'],
    available: ['cuda', 'cpu'],
    visibleGpus: 2,
    sessions: 5,
    log: quiet,
  });
  t.after(() => gpu.release());
  assert.equal(gpu.sessions, 5);
  const picked = new InferenceRuntime({
    providers: ['cuda', 'cpu'],
    available: ['cuda', 'cpu'],
    visibleGpus: 4,
    gpuDevices: [3, 1],
    sessions: 1,
    log: quiet,
  });
  t.after(() => picked.release());
  assert.deepEqual(picked.devices, [3, 1]);
  assert.equal(picked.sessions, 2);
  const cpu = new InferenceRuntime({ providers: ['cpu'], visibleGpus: 4, sessions: 1, log: quiet });
  t.after(() => cpu.release());
  assert.equal(cpu.sessions, 1, 'GPUs on the host do not add CPU sessions');
  const shared = new InferenceRuntime({
    providers: ['cuda', 'cpu'],
    available: ['cuda', 'cpu'],
    visibleGpus: 4,
    workers: 'shared',
    log: quiet,
  });
  t.after(() => shared.release());
  assert.equal(shared.sessions, 1, 'one shared worker runs one session at a time');
});

test('video decoders take the card with the fewest open, and give it back when they close', () => {
  const d = new DecoderDevices([0, 1, 2]);
  assert.deepEqual([d.take(), d.take(), d.take(), d.take()], [0, 1, 2, 0]);
  d.give(1);
  d.give(2);
  assert.equal(d.take(), 1, 'freed cards first');
  assert.deepEqual(d.counts(), { 0: 2, 1: 1, 2: 0 });
  d.give(undefined);
  d.give(7);
  assert.deepEqual(d.counts(), { 0: 2, 1: 1, 2: 0 }, 'nothing to give back changes nothing');
  const none = new DecoderDevices([]);
  assert.equal(none.take(), undefined);
});

test("a model's own devices: its sessions take those cards only; ordinals the host lacks are dropped with a warning", async (t) => {
  const log = collectingLog();
  // The server runs on the CPU; the model asks for cuda itself, on cards 2 and 9 of a three-card host.
  const runtime = threeCards(t, ['cpu'], log);
  const spec = { id: 'pinned', load: async () => affineModel(), providers: ['cuda', 'cpu'], devices: [2, 9] };
  assert.deepEqual(runtime.devicesFor(spec), [2]);
  assert.ok(log.lines.some((l) => /model pinned: its devices name device 9 but this process sees 3/.test(l.msg)));
  assert.deepEqual(runtime.devicesFor({ ...spec, devices: [7] }, true), [0, 1, 2], 'none left: the server’s');
  const model = runtime.register(spec);
  assert.equal(model.maxSessions, 1, 'one card: one session, as the server was told');
  assert.deepEqual(Array.from((await model.run(row(1))).y.data as Float32Array), [3, 5, 7, 9]);
  const tried = log.lines.find((l) => /model pinned could not start on cuda, cpu \(device 2\)/.test(l.msg));
  assert.ok(tried, log.lines.map((l) => l.msg).join('\n'));

  const wide = runtime.register({ ...spec, id: 'two-cards', devices: [0, 2] });
  assert.equal(wide.maxSessions, 2, 'a model on a GPU provider gets a session per card of its own');
});
