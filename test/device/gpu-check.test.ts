// scripts/gpu-check.sh --dry-run: the whole GPU check on the CPU, from the bundle laid out as it travels (the
// stripped Node binary, the bundled bench and check, the models with a real photo's input), so none of it rots
// before a GPU host runs it: the probe, the reference step (none here, and why), sightflow's in-process
// ceiling under dynamic batching with its batched = alone check (float inputs, the graph taking bytes, and each
// float graph in float16), the whole server over HTTP with the C clients, live cameras into that server (two
// in software, then two asking for NVDEC, which must fall back to software and say why), and the report's JSON
// and table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { projectRoot } from '../../src/base/paths.js';
import { BYO_MODELS, byoModelsSkip } from '../../eval/byo-dir.js';
import { buildNvmlStub } from '../helpers/nvml-stub.js';

// With the int8 export only (the model a GPU server is brought most): the check without it is the same code with
// one model fewer, and running it again in the suite's run without the exports took the longest of that run.
test('gpu-check.sh --dry-run runs the whole check on the CPU and writes its JSON and table', {
  skip: byoModelsSkip(BYO_MODELS['yolov8n-int8']),
  timeout: 600_000,
}, async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'sf-gpu-check-test-'));
  t.after(() => rm(out, { recursive: true, force: true }));
  // The driver's management library as a stand-in (two cards that run nothing): the check's readings of the
  // card beside each row and the server's GPU metrics go through the same calls as on a GPU host. The probe and
  // every provider still find no driver (no nvidia-smi, no /proc/driver/nvidia), so the rows run on the CPU.
  const nvml = buildNvmlStub();
  t.after(() => nvml.remove());
  await promisify(execFile)('bash', [join(projectRoot, 'scripts', 'gpu-check.sh'), '--dry-run', '--out', out], {
    cwd: projectRoot,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, LD_LIBRARY_PATH: [nvml.dir, process.env.LD_LIBRARY_PATH].filter(Boolean).join(':') },
  });
  const r = JSON.parse(await readFile(join(out, 'gpu-check.json'), 'utf8'));
  assert.equal(r.dry_run, true);
  assert.deepEqual(r.batches, [2]);
  for (const k of ['driver', 'cuda', 'tensorrt', 'onnxruntime', 'pytorch'])
    assert.ok(k in r.probe, `the probe reports ${k}`);
  assert.equal(r.probe.driver, null, 'no NVIDIA driver here');
  assert.equal(r.probe.sightflow_devices, 0, 'and no device for the server to spread over');

  const models = ['centernet-coco', 'yolov8n-int8'];
  // The reference through ONNX Runtime's C++ API (ort-reference.cc, the engine of a GPU host without TensorRT
  // or ONNX Runtime for Python) runs here on the CPU provider, each model's float graph with a batch axis.
  for (const m of models) {
    const ref = r.reference[m];
    assert.equal(ref.engine, 'ort-c-api', JSON.stringify(ref));
    assert.equal(ref.provider, 'cpu');
    assert.deepEqual(
      ref.rows.map((x: Record<string, any>) => x.batch),
      [2],
    );
    for (const x of ref.rows) assert.ok(x.images_per_s > 0 && x.p50_ms > 0 && !x.error, JSON.stringify(x));
  }
  const rows = r.sightflow.batch_rows as Array<Record<string, any>>;
  assert.deepEqual(
    rows.map((x) => `${x.model} ${x.providers} ${x.batch}`),
    [
      // First what a GPU server loads under auto: every step that applies, the bytes input last, decoded as the
      // detector decodes it (a YOLO output from its reduced twin)...
      'centernet-coco (fp16, uint8, decoded) cpu 2',
      'yolov8n-int8 (float, fp16, uint8, decoded) cpu 2',
      // ...then, after the HTTP and camera rows, each step's own rows (and the YOLO output decoded whole).
      ...models.flatMap((m) => [
        `${m} cpu 2`,
        ...(m === 'yolov8n-int8' ? [`${m} (float) cpu 2`, `${m} (float, fp16) cpu 2`] : [`${m} (fp16) cpu 2`]),
        ...(m === 'yolov8n-int8' ? [`${m} (float, fp16, uint8, decoded, whole output) cpu 2`] : []),
      ]),
    ],
  );
  // Every step ran (no budget in a dry run), in the order of what the goals need; none was left running.
  assert.deepEqual(r.steps, {
    done: [
      'probe',
      'reference',
      'in-process rows',
      'native engine rows',
      'HTTP rows',
      'camera rows',
      "each step's own rows",
      'unbatched rows',
    ],
  });
  assert.equal(r.budget_s, null);
  assert.equal(r.sightflow.skipped_rows, undefined);
  for (const x of rows) {
    assert.ok(x.images_per_s > 0 && x.p50_ms > 0, JSON.stringify(x));
    // What the first run of each shape cost (a GPU provider's kernel search): measured on every row.
    assert.ok(x.first_run_ms > 0 && x.first_batch_ms > 0, JSON.stringify(x));
  }
  const centernet2 = rows.find((x) => x.model === 'centernet-coco' && x.batch === 2)!;
  assert.equal(centernet2.same_as_alone, true, 'a batch of the built-in detector answers what a run alone does');
  assert.ok(centernet2.images_per_call > 1, 'its calls carried more than one image');
  const yolo2 = rows.find((x) => x.model === 'yolov8n-int8' && x.batch === 2);
  assert.equal(yolo2?.same_as_alone, true, 'the int8 export batched answers what a run alone does');
  // The int8 export's graph made float (what a GPU provider loads) batches alike.
  const float2 = rows.find((x) => x.model === 'yolov8n-int8 (float)' && x.batch === 2);
  assert.equal(float2?.same_as_alone, true, 'the float graph batched answers what a run alone does');
  // The float16 graphs batch alike, and the report sets each float16 row against its float32 row.
  const half2 = rows.find((x) => x.model === 'centernet-coco (fp16)' && x.batch === 2)!;
  assert.equal(half2.same_as_alone, true, 'a batch of the float16 graph answers what a run alone does');
  assert.equal(rows.find((x) => x.model === 'yolov8n-int8 (float, fp16)' && x.batch === 2)?.same_as_alone, true);
  assert.deepEqual(
    (r.fp16 as Array<Record<string, any>>).map((x) => `${x.model} ${x.batch}`),
    models.map((m) => (m === 'yolov8n-int8' ? `${m} (float) 2` : `${m} 2`)),
  );
  // The YOLO export decoded from its reduced output, set against the same decoded from its whole output.
  assert.deepEqual(
    (r.reduced_output as Array<Record<string, any>>).map((x) => `${x.model} ${x.batch} ${x.ratio > 0}`),
    ['yolov8n-int8 (float, fp16, uint8, decoded, whole output) 2 true'],
  );
  // The rows with the graph taking bytes (the photo's letterbox as the detector writes it) batch alike.
  for (const m of [
    'centernet-coco (fp16, uint8, decoded)',
    'yolov8n-int8 (float, fp16, uint8, decoded)',
    'yolov8n-int8 (float, fp16, uint8, decoded, whole output)',
  ]) {
    const bytes2 = rows.find((x) => x.model === m && x.batch === 2)!;
    assert.equal(bytes2.same_as_alone, true, `${m}: a batch of bytes inputs finds the boxes a run alone finds`);
  }

  // The unbatched sweep ran too (on the CPU only its CPU row per model; a GPU host adds its GPU rows and checks).
  assert.deepEqual(
    (r.sweep.rows as Array<Record<string, any>>).map((x) => `${x.model} ${x.providers}`),
    models.flatMap((m) =>
      m === 'yolov8n-int8'
        ? [`${m} cpu`, `${m} (float) cpu`, `${m} (float, fp16) cpu`]
        : [`${m} cpu`, `${m} (fp16) cpu`],
    ),
  );
  // The same ceiling on the native engine (the dry run: the built-in detector only), set against the binding's row.
  assert.equal(r.native.error, undefined, `the native engine rows ran: ${r.native.error}`);
  const nativeRows = r.native.batch_rows as Array<Record<string, any>>;
  assert.deepEqual(
    nativeRows.map((x) => `${x.model} ${x.providers} ${x.batch}`),
    ['centernet-coco (fp16, uint8, decoded) cpu [native] 2'],
  );
  assert.equal(nativeRows[0]!.same_as_alone, true, 'a batch on the native engine answers what a run alone does');
  assert.equal(nativeRows[0]!.cuda_graph_note, undefined, 'no CUDA graphs are asked of the CPU');
  // Its checks (on a card: after a CUDA graph's replays, and against the CPU's answer through the binding).
  assert.equal(nativeRows[0]!.again_same, true, 'the photo answered the same after the timed runs');
  const vsCpu = nativeRows[0]!.vs_cpu.detections;
  assert.ok(vsCpu.detections > 0 && vsCpu.matched === vsCpu.detections, JSON.stringify(vsCpu));
  assert.deepEqual(
    (r.native_vs_binding as Array<Record<string, any>>).map((x) => `${x.model} ${x.batch} ${x.ratio > 0}`),
    ['centernet-coco (fp16, uint8, decoded) 2 true'],
  );
  const table = await readFile(join(out, 'gpu-check.md'), 'utf8');
  assert.match(table, /\| centernet-coco \(fp16, uint8, decoded\) \| cpu \[native\] \| 2 \| 2 \| [\d.]+ \|/);
  assert.match(
    table,
    /centernet-coco \(fp16, uint8, decoded\) on the native engine against the binding: cpu \[native\] 2 session\(s\) batch 2 [\d.]+\/[\d.]+ images\/s = [\d.]+x \(same answer after its runs, against the CPU (\d+)\/\1 boxes/,
  );
  assert.match(table, /yolov8n-int8 decoded from its reduced output against its whole output: cpu 2 session/);
  assert.match(table, /unbatched: centernet-coco on cpu, 1 session\(s\), 1 client\(s\)/);
  assert.match(
    table,
    /\| centernet-coco \| cpu \| 2 \| 2 \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \| [\d.]+ \/ [\d.]+ \| true \|/,
    'two sessions, batch 2',
  );
  assert.match(
    table,
    /centernet-coco: in-process ceiling [\d.]+ images\/s \(cpu, 2 session\(s\), batch 2\), reference [\d.]+ at batch 2: [\d.]+ of it/,
  );
  assert.ok(r.ceilings['centernet-coco'].sightflow.images_per_s > 0);
  assert.match(
    table,
    /centernet-coco in float16 against float32: cpu 2 session\(s\) batch 2 [\d.]+\/[\d.]+ images\/s = /,
  );
  // The whole server over HTTP from the bundle's server/ (the addon built without FFmpeg, the C clients built
  // static): every detector answered every row, with the main thread's CPU per image beside it; then batched
  // behind two front processes (the bundled server forks itself as its fronts), their CPU beside it; then the same
  // on the native engine.
  assert.equal(r.http.error, undefined, `the HTTP rows ran: ${r.http.error}`);
  const http = r.http.rows as Array<Record<string, any>>;
  const frontsLabel = 'batch <= 32, 2 ms, queue 128, 2 fronts';
  const nativeLabel = `${frontsLabel}, native engine, CUDA graphs`;
  assert.deepEqual(
    http.map((x) => `${x.config} ${x.model} ${x.clients}`),
    [
      ...models.flatMap((m) => [`defaults ${m} 1`, `defaults ${m} 4`]),
      ...models.flatMap((m) => [
        `${frontsLabel} ${m} 1`,
        `${frontsLabel} ${m} 4`,
        // Once more with every batch size and no warm-up, set on the running server through the admin API.
        `${frontsLabel}; every batch size, no warm-up ${m} 4`,
      ]),
      ...models.flatMap((m) => [`${nativeLabel} ${m} 1`, `${nativeLabel} ${m} 4`]),
    ],
  );
  for (const x of http) {
    assert.ok(x.images_per_s > 0 && x.errors === 0 && x.p99_ms >= x.p50_ms, JSON.stringify(x));
    assert.ok(x.main_thread_ms_per_image > 0 && x.process_cpu_ms_per_image > x.main_thread_ms_per_image);
    if (x.config.startsWith(frontsLabel)) assert.ok(x.fronts === 2 && x.fronts_cpu_ms_per_image > 0, JSON.stringify(x));
    else assert.equal(x.fronts, 0);
    // The first card read through the row (the stand-in's fixed readings).
    assert.ok(x.gpu.samples >= 2, JSON.stringify(x.gpu));
    assert.deepEqual(
      { ...x.gpu, samples: 0 },
      {
        samples: 0,
        utilization_mean: 0.37,
        utilization_max: 0.37,
        decoder_utilization_mean: 0.12,
        memory_used_max_mib: 1024,
      },
    );
  }
  // The server's own GPU metrics against the check's readings: the same two cards with the same memory.
  const m = r.http.server_metrics;
  assert.deepEqual(
    { ...m, lines: m.lines.length },
    {
      driver_devices: 2,
      driver_reason: null,
      server_devices: 2,
      logged: [0, 1].map((i) => ({ index: i, name: `Stub GPU ${i}`, memoryTotalBytes: 80 * 2 ** 30 })),
      series: [
        'sightflow_gpu_devices',
        'sightflow_gpu_info',
        'sightflow_gpu_utilization_ratio',
        'sightflow_gpu_memory_used_bytes',
        'sightflow_gpu_memory_total_bytes',
        'sightflow_gpu_decoder_utilization_ratio',
        'sightflow_gpu_power_watts',
        'sightflow_gpu_temperature_celsius',
      ],
      matches: true,
      lines: 13,
    },
  );
  assert.match(table, /\| 37%, 37% \| 1024 \|$/m);
  assert.match(
    table,
    /- the server's GPU metrics \(SIGHTFLOW_METRICS_PORT\): 2 card\(s\) against the driver's 2, the same cards and memory;/,
  );
  // Each server started through the bundle's launcher (server/sightflow.cjs): its image pool one thread a core.
  for (const s of r.http.servers as Array<Record<string, any>>) {
    assert.ok(s.objects > 0, `${s.model} found objects in the photo over HTTP`);
    const given = Number(process.env.UV_THREADPOOL_SIZE);
    assert.equal(s.image_threads, given || Math.max(4, availableParallelism()), JSON.stringify(s));
    // Where its sessions ran, its batching and warm-up, as the server says (on the CPU every batch size, no
    // warm-up).
    assert.deepEqual(s.serving, {
      providers: ['cpu'],
      devices: null,
      // The native configuration's server runs its sessions on the native engine (no CUDA graphs on the CPU).
      engine:
        s.config === nativeLabel
          ? { kind: 'native', cuda_graphs: null, pinned_inputs: false }
          : { kind: 'binding', cuda_graphs: null, pinned_inputs: null },
      batch:
        s.config === frontsLabel || s.config === nativeLabel
          ? { max_size: 32, max_delay_ms: 2, sizes: null }
          : { max_size: 1, max_delay_ms: 0, sizes: null },
      warmup: null,
    });
  }
  assert.match(table, /\| defaults \| centernet-coco \| cpu \| 4 \| [\d.]+ \|/);
  assert.match(
    table,
    /- centernet-coco, batch <= 32, 2 ms, queue 128, 2 fronts, 4 clients: its batch sizes and warm-up [\d.]+ images\/s \(p99 [\d.]+ ms\) against every batch size without warm-up [\d.]+ \(p99 [\d.]+ ms\)/,
  );
  for (const s of (r.http.servers as Array<Record<string, any>>).filter((x) => x.config === frontsLabel))
    assert.deepEqual(
      s.every_size_serving?.batch,
      { max_size: 32, max_delay_ms: 2, sizes: null },
      `${s.model}: the settings in force for that row`,
    );
  assert.match(
    table,
    /- centernet-coco, defaults: [\d.]+ images\/s at 4 clients \(goal >= 1500; [\d.]+ of the reference's best, goal >= 0\.5\), .*; sessions on cpu; one image a call; no warm-up$/m,
  );
  // Live cameras (bench/device/camera-rows.ts): the staged server with the addon built with FFmpeg, two endless
  // real-time H.264 1080p streams from the check's own process, detect + track at 5 fps.
  assert.equal(r.cameras.error, undefined, `the camera rows ran: ${r.cameras.error}`);
  const cams = r.cameras.rows as Array<Record<string, any>>;
  assert.deepEqual(
    cams.map((x) => `${x.hwaccel} ${x.cameras}`),
    ['none 2', 'auto 2'],
  );
  for (const x of cams) {
    assert.ok(x.processed > 0 && x.fps_per_camera_median > 0 && x.lag_p95_ms > 0, JSON.stringify(x));
    assert.ok(x.cpu_ms_per_frame > 0 && x.cpu_ms_per_camera_frame > 0, JSON.stringify(x));
    assert.ok(x.main_thread_ms_per_frame > 0 && x.main_thread_ms_per_frame < x.cpu_ms_per_frame, JSON.stringify(x));
    assert.equal(typeof x.drops_by_policy, 'boolean');
    // The card over the window: its decoders' share is the NVDEC column.
    assert.equal(x.gpu.decoder_utilization_mean, 0.12, JSON.stringify(x.gpu));
    assert.equal(x.nvdec_utilisation_pct, 12);
  }
  assert.deepEqual(cams[0]!.decoder_paths, { software: 2 });
  // Asked for NVDEC on a host without a CUDA device: software, with the decoder's reason.
  assert.deepEqual(cams[1]!.decoder_paths, { software: 2 }, 'auto fell back to software on every camera');
  assert.match(cams[1]!.fallback ?? '', /CUDA/, 'the fallback says why');
  assert.match(table, /## Cameras/);
  assert.match(table, /\| auto \| 2 \| software 2 \(fallback: [^)]*CUDA/);
  assert.match(table, /- cameras held with NVDEC: no row took the NVIDIA decoder \(goal >= 50\)/);
});

// A GPU host lends the check a few minutes once: with --budget it keeps to its time whatever each step costs there.
// Here a minute, with 4 s rows: the rows the goals need first, a step past its share stopped with its rows kept, the
// later steps left out and listed, and the report written all the same.
test('gpu-check.sh --budget: steps past their share are stopped or left out, and the report keeps what ran', {
  skip: byoModelsSkip(BYO_MODELS['yolov8n-int8']),
  timeout: 300_000,
}, async (t) => {
  const out = await mkdtemp(join(tmpdir(), 'sf-gpu-check-budget-'));
  t.after(() => rm(out, { recursive: true, force: true }));
  const { stderr } = await promisify(execFile)(
    'bash',
    [join(projectRoot, 'scripts', 'gpu-check.sh'), '--dry-run', '--budget', '60', '--seconds', '4', '--out', out],
    { cwd: projectRoot, maxBuffer: 64 * 1024 * 1024 },
  );
  const r = JSON.parse(await readFile(join(out, 'gpu-check.json'), 'utf8'));
  assert.equal(r.budget_s, 60);
  // Every step had its turn and the check ended, near its budget (the last step's margin beyond it).
  assert.equal(r.steps.running, undefined);
  assert.equal(r.steps.done.at(-1), 'unbatched rows');
  const ended = Number(/gpu-check \[(\d+) s\] done/.exec(stderr)?.[1]);
  assert.ok(ended <= 100, `the check ended at ${ended} s of a 60 s budget`);
  // The rows as a GPU server runs each model came first; each step's own rows, last, found the time spent.
  const rows = r.sightflow.batch_rows as Array<Record<string, any>>;
  assert.ok(rows.some((x) => x.model === 'centernet-coco (fp16, uint8, decoded)' && x.images_per_s > 0));
  assert.ok(
    (r.sightflow.skipped_rows as string[]).includes('centernet-coco cpu 2 session(s) batch 2'),
    JSON.stringify(r.sightflow.skipped_rows),
  );
  // The HTTP rows (4 s a level) ran past their share: stopped, with the rows made before kept.
  assert.match(r.http.error ?? '', /^stopped: it ran past its share/, JSON.stringify(r.http.error));
  assert.ok(r.http.rows.length >= 1 && r.http.rows.every((x: Record<string, any>) => x.images_per_s > 0));
  assert.match(r.cameras.skipped ?? '', /^late/);
  const table = await readFile(join(out, 'gpu-check.md'), 'utf8');
  assert.match(
    table,
    /- in-process rows not run \(the check's time was spent\): .*centernet-coco cpu 2 session\(s\) batch 2/,
  );
  // The HTTP rows made before the stop stand in the table under the reason.
  assert.match(table, /- failed: stopped: it ran past its share[^\n]*\n\n\| configuration \|/);
});
