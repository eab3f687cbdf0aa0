// The Node half of scripts/gpu-check.sh, bundled beside it (scripts/device-bundle.sh): what the host has, the
// reference on the same ONNX models, and the report (the HTTP and camera rows come from http-rows.ts and
// camera-rows.ts). Runs on a host with nothing but the bundle.
//   node gpu-check.js probe OUT.json
//   node gpu-check.js batch-graph IN.onnx OUT.onnx        (the float graph with a free batch axis, for the reference)
//   node gpu-check.js fp16-graph IN.onnx OUT.onnx         (that graph in float16, where the host cannot convert it)
//   node gpu-check.js trtexec TRTEXEC MODEL.onnx BATCHES SECONDS WORKDIR OUT.json
//   node gpu-check.js report WORKDIR OUTDIR              (gpu-check.json and gpu-check.md)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { withBatchAxis } from '../../src/inference/batch-axis.js';
import { dequantizeGraph } from '../../src/inference/dequantize-graph.js';
import { withFloat16 } from '../../src/inference/fp16-graph.js';
import { readOnnxInfo } from '../../src/inference/onnx-metadata.js';
import { visibleGpuCount } from '../../src/inference/gpu-devices.js';
import { stepFailure } from './step-failure.js';

/** A command's standard output, or null when it is missing, fails or takes too long. */
function run(cmd: string, args: string[], timeoutMs = 20_000): string | null {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', timeout: timeoutMs, stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    return null;
  }
}

const py = (code: string) => run('python3', ['-c', code], 60_000);

/** What the host offers: the driver and GPU, CUDA, TensorRT, ONNX Runtime and PyTorch, each present or not. */
function probe(): Record<string, unknown> {
  const smi = run('nvidia-smi', ['--query-gpu=name,driver_version,memory.total,compute_cap', '--format=csv,noheader']);
  const smiHeader = run('nvidia-smi', []);
  const ldconfig = run('ldconfig', ['-p']) ?? '';
  const lib = (name: string) =>
    ldconfig
      .split('\n')
      .filter((l) => l.includes(name))
      .map((l) => l.trim().split(' => ')[1])
      .filter(Boolean);
  const trtexec =
    ['trtexec', '/usr/src/tensorrt/bin/trtexec', '/usr/local/tensorrt/bin/trtexec'].find(
      (p) => run(p, ['--help'], 10_000) !== null || existsSync(p),
    ) ?? null;
  const gpus = smi
    ? smi.split('\n').map((l) => {
        const [name, driver, memory, cc] = l.split(',').map((s) => s.trim());
        return { name, driver, memory, compute_capability: cc };
      })
    : [];
  return {
    date: new Date().toISOString(),
    cpu: { model: cpus()[0]?.model ?? null, cores: cpus().length },
    driver: gpus.length ? { gpus, cuda_driver_api: /CUDA Version: ([\d.]+)/.exec(smiHeader ?? '')?.[1] ?? null } : null,
    // The devices the server spreads sessions and decoders over (gpu-devices.ts), beside nvidia-smi's count.
    sightflow_devices: visibleGpuCount(process.env.CUDA_VISIBLE_DEVICES),
    cuda: {
      nvcc: /release ([\d.]+)/.exec(run('nvcc', ['--version']) ?? '')?.[1] ?? null,
      libcudart: lib('libcudart.so'),
      python_runtime: py('import nvidia.cuda_runtime, os; print(os.path.dirname(nvidia.cuda_runtime.__file__))'),
    },
    tensorrt: {
      trtexec,
      python: py('import tensorrt; print(tensorrt.__version__)'),
      libnvinfer: lib('libnvinfer.so'),
    },
    onnxruntime: (() => {
      const out = py('import onnxruntime as o; print(o.__version__); print(",".join(o.get_available_providers()))');
      if (!out) return null;
      const [version, providers] = out.split('\n');
      return { python: version, providers: providers?.split(',') ?? [] };
    })(),
    pytorch: (() => {
      const out = py(
        'import torch; print(torch.__version__); print(torch.version.cuda); print(torch.cuda.is_available())',
      );
      if (!out) return null;
      const [version, cuda, available] = out.split('\n');
      return { version, cuda, cuda_available: available === 'True' };
    })(),
  };
}

/** The model's first input: name and dims with the batch axis first. */
function inputOf(file: string): { name: string; dims: number[] } {
  const info = readOnnxInfo(new Uint8Array(readFileSync(file)));
  const i = info.inputs[0]!;
  return { name: i.name, dims: i.shape.map((d) => (typeof d === 'number' ? d : 1)) };
}

/**
 * TensorRT's own tool as the reference: one FP16 engine with a profile from batch 1 to the largest asked,
 * timed at each batch with CUDA graphs; images/s is its queries/s times the batch.
 */
function trtexec(
  tool: string,
  model: string,
  batches: number[],
  seconds: number,
  work: string,
): Record<string, unknown> {
  const { name, dims } = inputOf(model);
  const shape = (b: number) => `${name}:${[b, ...dims.slice(1)].join('x')}`;
  const max = Math.max(...batches);
  const engine = join(work, `${model.split('/').pop()}.plan`);
  const t0 = Date.now();
  const build = run(
    tool,
    [
      `--onnx=${model}`,
      '--fp16',
      `--minShapes=${shape(1)}`,
      `--optShapes=${shape(Math.min(8, max))}`,
      `--maxShapes=${shape(max)}`,
      `--saveEngine=${engine}`,
      '--skipInference',
    ],
    600_000,
  );
  if (build === null) return { engine: 'trtexec', error: 'the engine build failed' };
  const rows = batches.map((b) => {
    const out =
      run(
        tool,
        [
          `--loadEngine=${engine}`,
          `--shapes=${shape(b)}`,
          `--duration=${seconds}`,
          '--useCudaGraph',
          '--noDataTransfers',
        ],
        300_000,
      ) ?? '';
    const qps = Number(/Throughput: ([\d.]+) qps/.exec(out)?.[1] ?? NaN);
    const median = Number(/Latency: .*?median = ([\d.]+) ms/.exec(out)?.[1] ?? NaN);
    return { batch: b, images_per_s: +(qps * b).toFixed(1), p50_ms: median };
  });
  return { engine: 'trtexec', precision: 'fp16', build_s: (Date.now() - t0) / 1000, rows };
}

/** The report: one JSON file with everything and a Markdown table, sightflow and the reference side by side. */
function report(work: string, outDir: string): void {
  const read = (f: string) => (existsSync(join(work, f)) ? JSON.parse(readFileSync(join(work, f), 'utf8')) : null);
  const probeJson = read('probe.json');
  // The rows as a GPU server runs each model come first; each step's own rows later, as time allows: one list.
  const sightflow = mergedSteps(read('sightflow.json'), read('sightflow-detail.json'));
  const references: Record<string, unknown> = {};
  for (const f of readdirSync(work).filter((n) => n.startsWith('reference-') && n.endsWith('.json'))) {
    references[f.slice('reference-'.length, -'.json'.length)] = read(f);
  }
  const meta = read('meta.json') ?? {};
  // Written again after every step, so a check stopped from outside still leaves what it measured.
  const steps = read('steps.json') as { done: string[]; running?: string } | null;
  const http = read('http.json');
  const cameras = read('cameras.json');
  const sweep = read('sweep.json');
  const native = read('native.json');
  const result: Record<string, unknown> = {
    ...meta,
    ...(steps ? { steps } : {}),
    probe: probeJson,
    sightflow,
    native,
    sweep,
    http,
    cameras,
    reference: references,
  };
  writeFileSync(join(outDir, 'gpu-check.json'), JSON.stringify(result, null, 2) + '\n');

  const gpu = probeJson?.driver?.gpus?.[0];
  const lines = [
    `# gpu-check ${meta.dry_run ? '(dry run on the CPU)' : ''}`.trim(),
    '',
    `${probeJson?.date ?? ''}; ${gpu ? `${gpu.name}, driver ${gpu.driver}` : 'no NVIDIA driver'}; ${probeJson?.cpu?.cores ?? '?'} cores; devices the server sees ${probeJson?.sightflow_devices ?? '?'} of nvidia-smi's ${probeJson?.driver?.gpus?.length ?? 0}`,
    `CUDA ${probeJson?.cuda?.nvcc ?? probeJson?.driver?.cuda_driver_api ?? 'none'}; TensorRT ${probeJson?.tensorrt?.python ?? (probeJson?.tensorrt?.trtexec ? 'trtexec' : 'none')}; ONNX Runtime (Python) ${probeJson?.onnxruntime ? `${probeJson.onnxruntime.python} [${probeJson.onnxruntime.providers.join(', ')}]` : 'none'}; PyTorch ${probeJson?.pytorch ? `${probeJson.pytorch.version}${probeJson.pytorch.cuda_available ? ' (CUDA)' : ''}` : 'none'}`,
    '',
    '| model | providers | sessions | batch | sightflow images/s | p50 ms | p99 ms | images/call | first run ms: 1 / batch | batched = alone | reference | reference images/s | ratio |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  // The binding's rows, then the native engine's (their providers marked `[native...]`): one table, one ceiling.
  const batchRows = [...(sightflow?.batch_rows ?? []), ...(native?.batch_rows ?? [])] as Array<Record<string, any>>;
  for (const r of batchRows) {
    const ref = references[baseModel(r.model)] as Record<string, any> | null | undefined;
    const refRow = (ref?.rows as Array<Record<string, any>> | undefined)?.find((x) => x.batch === r.batch);
    const ratio = refRow && refRow.images_per_s > 0 ? (r.images_per_s / refRow.images_per_s).toFixed(2) : '-';
    lines.push(
      `| ${r.model} | ${r.providers} | ${r.sessions} | ${r.batch} | ${r.images_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.images_per_call}${r.padded_per_call ? ` (+${r.padded_per_call} blank)` : ''} | ${r.first_run_ms ?? '-'} / ${r.first_batch_ms ?? '-'} | ${r.error ? `failed: ${r.error}` : (r.same_as_alone ?? (r.refused ? 'one a call' : '-'))} | ${ref?.engine ?? 'none'}${ref?.precision ? ` ${ref.precision}` : ''} | ${refRow?.images_per_s ?? ref?.error ?? ref?.reason ?? '-'} | ${ratio} |`,
    );
  }
  // The in-process ceiling (the best row) against the reference's best, per model: the issue's goal is 0.7.
  const ceilings: Record<string, unknown> = {};
  lines.push('');
  // A step that failed as a whole (its rows never came) says so; a row that failed says why in its line.
  if (steps?.running) lines.push(`- unfinished: the check stopped during "${steps.running}"; the figures are up to it`);
  if (sightflow?.error) lines.push(`- in-process rows failed: ${sightflow.error}`);
  if (sweep?.error) lines.push(`- unbatched rows failed: ${sweep.error}`);
  if (native?.error) lines.push(`- native engine rows: ${native.error}`);
  // Rows the check's time budget left out (bench/device/providers.ts --until), by step.
  for (const [step, s] of [
    ['in-process', sightflow],
    ['native engine', native],
    ['unbatched', sweep],
  ] as const) {
    const skipped = (s?.skipped_rows ?? []) as string[];
    if (skipped.length) lines.push(`- ${step} rows not run (the check's time was spent): ${skipped.join('; ')}`);
  }
  for (const model of [...new Set(batchRows.filter((r) => !r.error).map((r) => r.model as string))]) {
    const rows = batchRows.filter((r) => r.model === model && !r.error);
    const best = rows.reduce((a, b) => (b.images_per_s > a.images_per_s ? b : a));
    const ref = references[baseModel(model)] as Record<string, any> | null | undefined;
    const refBest = ((ref?.rows ?? []) as Array<Record<string, any>>).reduce(
      (a: Record<string, any> | null, b) => (!a || b.images_per_s > a.images_per_s ? b : a),
      null,
    );
    const ratio = refBest && refBest.images_per_s > 0 ? +(best.images_per_s / refBest.images_per_s).toFixed(2) : null;
    ceilings[model] = {
      sightflow: {
        images_per_s: best.images_per_s,
        sessions: best.sessions,
        batch: best.batch,
        providers: best.providers,
      },
      reference: refBest,
      ratio,
    };
    lines.push(
      `- ${model}: in-process ceiling ${best.images_per_s} images/s (${best.providers}, ${best.sessions} session(s), batch ${best.batch})${refBest ? `, reference ${refBest.images_per_s} at batch ${refBest.batch}: ${ratio} of it` : ', no reference'}`,
    );
  }
  result.ceilings = ceilings;
  // Each float16 row against the float32 row of the same graph, providers, sessions and batch; each row decoded
  // from the reduced output against the same decoded from the whole output.
  const fp16 = sideBySide(batchRows, float32Of, 'float32', 'float16');
  result.fp16 = fp16;
  for (const model of new Set(fp16.map((x) => x.model as string))) {
    const mine = fp16.filter((x) => x.model === model);
    lines.push(
      `- ${model} in float16 against float32: ${mine.map((x) => `${x.providers} ${x.sessions} session(s) batch ${x.batch} ${x.float16}/${x.float32} images/s = ${x.ratio}x`).join('; ')}`,
    );
  }
  const reduced = sideBySide(batchRows, wholeOutputOf, 'whole', 'reduced');
  result.reduced_output = reduced;
  for (const model of new Set(reduced.map((x) => x.model as string))) {
    const mine = reduced.filter((x) => x.model === model);
    lines.push(
      `- ${baseModel(model)} decoded from its reduced output against its whole output: ${mine.map((x) => `${x.providers} ${x.sessions} session(s) batch ${x.batch} ${x.reduced}/${x.whole} images/s = ${x.ratio}x`).join('; ')}`,
    );
  }
  // Each native engine row against the binding's row of the same model, providers, sessions and batch: the route.
  const routes = nativeAgainstBinding(batchRows);
  result.native_vs_binding = routes;
  for (const model of new Set(routes.map((x) => x.model as string))) {
    const mine = routes.filter((x) => x.model === model);
    lines.push(
      `- ${model} on the native engine against the binding: ${mine.map((x) => `${x.providers} ${x.sessions} session(s) batch ${x.batch} ${x.native}/${x.binding} images/s = ${x.ratio}x${nativeChecksText(x)}`).join('; ')}`,
    );
  }
  for (const [model, note] of new Set(
    batchRows.filter((r) => r.cuda_graph_note).map((r) => [r.model as string, r.cuda_graph_note as string] as const),
  ))
    lines.push(`- ${model}: no CUDA graphs (${note})`);
  // Unbatched, one to eight sessions, and whether the GPU's outputs match the CPU's (detections as a set).
  for (const r of (sweep?.rows ?? []) as Array<Record<string, any>>) {
    lines.push(
      r.error
        ? `- unbatched: ${r.model} on ${r.providers}, ${r.sessions} session(s): failed: ${r.error}`
        : `- unbatched: ${r.model} on ${r.providers}, ${r.sessions} session(s), ${r.clients} client(s): ${r.images_per_s} images/s, p50 ${r.p50_ms} ms`,
    );
  }
  for (const c of (sweep?.checks ?? []) as Array<Record<string, any>>) {
    const d = c.detections;
    lines.push(
      `- ${c.model} on ${c.provider} against cpu: output relative L2 ${c.rel_l2}${d ? `; detections as a set ${d.matched}/${d.detections} (least IoU ${d.min_iou}, scores within ${d.max_score_diff})` : ''}`,
    );
  }
  result.http_goals = httpLines(http, references, lines);
  result.camera_goals = cameraLines(cameras, lines);
  writeFileSync(join(outDir, 'gpu-check.json'), JSON.stringify(result, null, 2) + '\n');
  lines.push('');
  writeFileSync(join(outDir, 'gpu-check.md'), lines.join('\n'));
  process.stdout.write(lines.join('\n'));
}

/**
 * The in-process rows of the two binding steps as one (the server's rows, then each step's own), with the rows
 * either left out and an error of either; null where neither ran.
 */
function mergedSteps(first: any, detail: any): Record<string, any> | null {
  if (!first && !detail) return null;
  if (!detail) return first;
  if (!first) return detail;
  const errors = [first.error, detail.error && `each step's own rows: ${detail.error}`].filter(Boolean);
  const skipped = [...(first.skipped_rows ?? []), ...(detail.skipped_rows ?? [])];
  return {
    ...detail,
    ...first,
    batch_rows: [...(first.batch_rows ?? []), ...(detail.batch_rows ?? [])],
    ...(skipped.length ? { skipped_rows: skipped } : {}),
    ...(errors.length ? { error: errors.join('; ') } : {}),
  };
}

/**
 * The server over HTTP: a table of the rows, then per model and configuration the figures the goals name (images/s
 * and p99 at the most clients, one client's p50, the reference's best), and what one main thread allows.
 */
function httpLines(
  http: Record<string, any> | null,
  references: Record<string, unknown>,
  lines: string[],
): Array<Record<string, unknown>> {
  lines.push('', '## sightflow over HTTP (POST /v1/vision/detect, a 640x480 JPEG, C clients)', '');
  if (!http) {
    lines.push('- not run');
    return [];
  }
  // A step stopped or failed part way keeps the rows it made (written after each): the error, then those rows.
  if (http.error) {
    lines.push(`- failed: ${http.error}`);
    if (!http.rows?.length) return [];
    lines.push('');
  }
  lines.push(
    '| configuration | model | providers | clients | images/s | p50 ms | p99 ms | refused | main thread ms/image | one main thread allows | fronts CPU ms/image | card busy (mean, max) | card memory MiB |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  );
  const rows = (http.rows ?? []) as Array<Record<string, any>>;
  for (const r of rows) {
    const cap = r.main_thread_ms_per_image > 0 ? Math.round(1000 / r.main_thread_ms_per_image) : '-';
    lines.push(
      `| ${r.config} | ${r.model} | ${r.providers} | ${r.clients} | ${r.images_per_s} | ${r.p50_ms} | ${r.p99_ms} | ${r.refused} | ${r.main_thread_ms_per_image} | ${cap} images/s | ${r.fronts_cpu_ms_per_image ?? '-'} | ${cardBusy(r.gpu)} | ${r.gpu?.memory_used_max_mib ?? '-'} |`,
    );
  }
  const goals: Array<Record<string, unknown>> = [];
  lines.push('');
  const EVERY = '; every batch size, no warm-up';
  for (const key of new Set(rows.filter((r) => !r.config.endsWith(EVERY)).map((r) => `${r.config}\u0000${r.model}`))) {
    const [config, model] = key.split('\u0000') as [string, string];
    const mine = rows.filter((r) => r.config === config && r.model === model);
    const most = mine.reduce((a, b) => (b.clients > a.clients ? b : a));
    const one = mine.find((r) => r.clients === 1);
    const ref = references[model] as Record<string, any> | null | undefined;
    const refRows = (ref?.rows ?? []) as Array<Record<string, any>>;
    const refBest = refRows.reduce(
      (a: Record<string, any> | null, b) => (!a || b.images_per_s > a.images_per_s ? b : a),
      null,
    );
    const g = {
      config,
      model,
      clients: most.clients,
      images_per_s: most.images_per_s,
      p99_ms: most.p99_ms,
      one_client_p50_ms: one?.p50_ms ?? null,
      of_reference: refBest && refBest.images_per_s > 0 ? +(most.images_per_s / refBest.images_per_s).toFixed(2) : null,
    };
    goals.push(g);
    // Where its sessions ran as the server reports it: a GPU session that failed to load fell back to the CPU.
    const serving = ((http.servers ?? []) as Array<Record<string, any>>).find(
      (x) => x.config === config && x.model === model,
    )?.serving;
    const where = serving
      ? `; sessions on ${Array.isArray(serving.providers) ? serving.providers.join(', ') : serving.providers}${Array.isArray(serving.devices) ? ` (devices ${serving.devices.join(', ')})` : ''}${engineText(serving)}${warmupText(serving)}`
      : '';
    lines.push(
      `- ${model}, ${config}: ${g.images_per_s} images/s at ${g.clients} clients (goal >= 1500${g.of_reference !== null ? `; ${g.of_reference} of the reference's best, goal >= 0.5` : ''}), p99 ${g.p99_ms} ms (goal <= 50 at 64), one client p50 ${g.one_client_p50_ms} ms${where}`,
    );
  }
  const m = http.server_metrics as Record<string, any> | null | undefined;
  if (m)
    lines.push(
      m.error
        ? `- the server's GPU metrics: ${m.error}`
        : `- the server's GPU metrics (SIGHTFLOW_METRICS_PORT): ${m.server_devices} card(s) against the driver's ${m.driver_devices}${m.driver_reason ? ` (${m.driver_reason})` : ''}, ${m.matches ? 'the same cards and memory' : 'NOT the same cards or memory'}; series ${(m.series as string[]).join(', ') || 'none'}`,
    );
  // The batched configurations' own padding and warm-up against every batch size without warm-up, same server.
  for (const r of rows.filter((x) => x.config.endsWith(EVERY))) {
    const base = rows.find(
      (x) => x.config === r.config.slice(0, -EVERY.length) && x.model === r.model && x.clients === r.clients,
    );
    if (!base) continue;
    lines.push(
      `- ${r.model}, ${base.config}, ${r.clients} clients: its batch sizes and warm-up ${base.images_per_s} images/s (p99 ${base.p99_ms} ms) against every batch size without warm-up ${r.images_per_s} (p99 ${r.p99_ms} ms)`,
    );
  }
  return goals;
}

/** A row's card utilisation as a percentage, mean and max over the row ('-' without a driver). */
function cardBusy(g: Record<string, any> | null | undefined): string {
  if (!g || g.utilization_mean === null) return '-';
  return `${Math.round(g.utilization_mean * 100)}%, ${Math.round(g.utilization_max * 100)}%`;
}

/** The native engine, its CUDA graphs and page-locked inputs as the server reports them; nothing for the binding. */
function engineText(serving: Record<string, any>): string {
  const e = serving.engine;
  if (e?.kind !== 'native') return '';
  const g = e.cuda_graphs;
  const graphs = g ? (g.on ? ', CUDA graphs' : `, no CUDA graphs (${g.note ?? 'off'})`) : '';
  return `; native engine${graphs}${e.pinned_inputs ? ', page-locked inputs' : ''}`;
}

/** A server's batch sizes and its first session's warm-up (each size's first run, at load), as it reports them. */
function warmupText(serving: Record<string, any>): string {
  const sizes = serving.batch?.sizes;
  const w = serving.warmup;
  const most = serving.batch?.max_size;
  const bs = !(most > 1)
    ? '; one image a call'
    : Array.isArray(sizes)
      ? `; batch sizes ${sizes.join(', ')}`
      : `; every batch size to ${most}`;
  if (!w) return `${bs}; no warm-up`;
  if (w.skipped) return `${bs}; warm-up skipped: ${w.skipped}`;
  const each = (w.batch_sizes as number[]).map((b, i) => `${b}: ${w.ms[i]}`).join(', ');
  return `${bs}; warm-up at load ms by batch size ${each}`;
}

/**
 * The camera rows: a table, then the goals (>= 50 cameras a GPU host holds with the NVIDIA decoder, lag p95 under
 * 1 s, drops only by the "never behind" policy) and the server's CPU per camera frame with NVDEC against
 * software at the same number of cameras.
 */
function cameraLines(cameras: Record<string, any> | null, lines: string[]): Record<string, unknown> | null {
  lines.push('', '## Cameras (live H.264 1080p, detect + track at 5 fps, NVDEC against software)', '');
  if (!cameras) {
    lines.push('- not run');
    return null;
  }
  if (cameras.error || cameras.skipped) {
    lines.push(`- ${cameras.error ? `failed: ${cameras.error}` : `skipped: ${cameras.skipped}`}`);
    if (!cameras.rows?.length) return null;
    lines.push('');
  }
  lines.push(
    `${cameras.source}; sampled at ${cameras.sample_fps} fps; ${cameras.steps}. Lag: a chunk's arrival at an SSE subscriber minus its received_at_ms (when the decoder received the frame).`,
    '',
    '| asked | cameras | decoder path | FFmpeg | frames/s per camera (median, min) | lag p50 ms | lag p95 ms | late drops per camera | drops by policy | server CPU ms per processed frame | per camera frame | main thread ms per processed frame | server cores | NVDEC % | card busy (mean, max) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  );
  const rows = (cameras.rows ?? []) as Array<Record<string, any>>;
  for (const r of rows) {
    const paths = Object.entries(r.decoder_paths ?? {})
      .map(([k, n]) => `${k} ${n}`)
      .join(', ');
    lines.push(
      `| ${r.hwaccel} | ${r.cameras} | ${paths}${r.fallback ? ` (fallback: ${r.fallback})` : ''} | ${r.ffmpeg} | ${r.fps_per_camera_median}, ${r.fps_per_camera_min} | ${r.lag_p50_ms} | ${r.lag_p95_ms} | ${r.late_drops_per_camera} | ${r.drops_by_policy ? 'yes' : `no: ${r.drops_not_by_policy}`} | ${r.cpu_ms_per_frame} | ${r.cpu_ms_per_camera_frame} | ${r.main_thread_ms_per_frame ?? '-'} | ${r.server_cores} | ${r.nvdec_utilisation_pct ?? '-'} | ${cardBusy(r.gpu)} |`,
    );
  }
  // A number of cameras holds when every camera keeps >= 90% of the sampling rate, lag p95 is under 1 s and
  // every loss was a drop by the policy.
  const holds = (r: Record<string, any>) =>
    r.fps_per_camera_min >= 0.9 * cameras.sample_fps && r.lag_p95_ms < 1000 && r.drops_by_policy === true;
  const nvdec = rows.filter((r) => r.hwaccel !== 'none' && r.decoder_paths?.cuda === r.cameras);
  const most = (xs: Array<Record<string, any>>) => Math.max(0, ...xs.filter(holds).map((r) => r.cameras as number));
  const cpu: Array<Record<string, unknown>> = [];
  for (const h of nvdec) {
    const sw = rows.find((r) => r.hwaccel === 'none' && r.cameras === h.cameras);
    if (sw && sw.cpu_ms_per_camera_frame > 0)
      cpu.push({
        cameras: h.cameras,
        nvdec: h.cpu_ms_per_camera_frame,
        software: sw.cpu_ms_per_camera_frame,
        ratio: +(h.cpu_ms_per_camera_frame / sw.cpu_ms_per_camera_frame).toFixed(2),
      });
  }
  const goals = {
    most_cameras_nvdec: nvdec.length ? most(nvdec) : null,
    most_cameras_software: most(rows.filter((r) => r.hwaccel === 'none')),
    lag_p95_ms: Object.fromEntries(rows.map((r) => [`${r.hwaccel} ${r.cameras}`, r.lag_p95_ms])),
    cpu_per_camera_frame: cpu,
  };
  lines.push(
    '',
    `- cameras held with NVDEC: ${goals.most_cameras_nvdec ?? 'no row took the NVIDIA decoder'} (goal >= 50); in software: ${goals.most_cameras_software}`,
    `- lag p95: ${rows.map((r) => `${r.hwaccel} x${r.cameras} ${r.lag_p95_ms} ms`).join(', ')} (goal < 1000)`,
    `- drops only by the policy: ${rows.map((r) => `${r.hwaccel} x${r.cameras} ${r.drops_by_policy ? 'yes' : 'no'}`).join(', ')}`,
    `- server CPU per camera frame, NVDEC against software: ${cpu.length ? cpu.map((c) => `x${c.cameras} ${c.nvdec}/${c.software} ms = ${c.ratio}`).join('; ') : 'no NVDEC row beside a software row'}`,
  );
  return goals;
}

/** A row's model id without its variant (`yolov8n-int8 (float, fp16)` -> `yolov8n-int8`): the reference's key. */
const baseModel = (name: string) => name.replace(/ \(.*\)$/, '');

/**
 * Each row that has a partner (`partnerOf` its name) of the same providers, sessions and batch, beside it:
 * { model: the partner's, `base`: the partner's images/s, `variant`: the row's, ratio }.
 */
function sideBySide(
  rows: Array<Record<string, any>>,
  partnerOf: (name: string) => string | undefined,
  base: string,
  variant: string,
): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const h of rows.filter((r) => partnerOf(r.model) !== undefined && !r.error)) {
    const f = rows.find(
      (r) =>
        r.model === partnerOf(h.model) &&
        r.providers === h.providers &&
        r.sessions === h.sessions &&
        r.batch === h.batch,
    );
    if (!f || !(f.images_per_s > 0)) continue;
    out.push({
      model: f.model,
      providers: h.providers,
      sessions: h.sessions,
      batch: h.batch,
      [base]: f.images_per_s,
      [variant]: h.images_per_s,
      ratio: +(h.images_per_s / f.images_per_s).toFixed(2),
    });
  }
  return out;
}

/** A native row's checks: its answer after the timed runs against its first, and against the CPU's. */
function nativeChecksText(x: Record<string, any>): string {
  const parts: string[] = [];
  if (x.again_same !== undefined)
    parts.push(x.again_same ? 'same answer after its runs' : 'ANSWER CHANGED after its runs');
  const d = x.vs_cpu?.detections;
  if (d) parts.push(`against the CPU ${d.matched}/${d.detections} boxes (least IoU ${d.min_iou})`);
  else if (x.vs_cpu?.rel_l2 !== undefined) parts.push(`against the CPU relative L2 ${x.vs_cpu.rel_l2}`);
  return parts.length ? ` (${parts.join(', ')})` : '';
}

/** Each native engine row (providers `<list> [native...]`) beside the binding's row of the same model, providers, sessions and batch. */
function nativeAgainstBinding(rows: Array<Record<string, any>>): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = [];
  for (const n of rows.filter((r) => / \[native/.test(r.providers ?? '') && !r.error)) {
    const plain = (n.providers as string).replace(/ \[native.*$/, '');
    const b = rows.find(
      (r) =>
        r.model === n.model && r.providers === plain && r.sessions === n.sessions && r.batch === n.batch && !r.error,
    );
    if (!b || !(b.images_per_s > 0)) continue;
    out.push({
      model: n.model,
      providers: n.providers,
      sessions: n.sessions,
      batch: n.batch,
      binding: b.images_per_s,
      native: n.images_per_s,
      ratio: +(n.images_per_s / b.images_per_s).toFixed(2),
      ...(n.again_same !== undefined ? { again_same: n.again_same } : {}),
      ...(n.vs_cpu ? { vs_cpu: n.vs_cpu } : {}),
    });
  }
  return out;
}

/** The whole-output row's name for a row decoded from the reduced output (`x (..., decoded)`), else undefined. */
const wholeOutputOf = (name: string): string | undefined =>
  name.endsWith(', decoded)') ? `${name.slice(0, -1)}, whole output)` : undefined;

/** The float32 row's name for a float16 row's (`x (fp16)` -> `x`, `x (float, fp16)` -> `x (float)`), else undefined. */
function float32Of(name: string): string | undefined {
  if (name.endsWith(' (fp16)')) return name.slice(0, -' (fp16)'.length);
  if (name.endsWith(', fp16)')) return `${name.slice(0, -', fp16)'.length)})`;
  return undefined;
}

const [cmd, ...rest] = process.argv.slice(2);
if (cmd === 'probe') {
  writeFileSync(rest[0]!, JSON.stringify(probe(), null, 2) + '\n');
} else if (cmd === 'batch-graph') {
  // An int8 export made float first, as a GPU provider loads it (dequantize-graph.ts).
  const source = new Uint8Array(readFileSync(rest[0]!));
  const float = dequantizeGraph(source);
  const r = withBatchAxis(float.ok && float.changed ? float.bytes : source);
  if (!r.ok) {
    console.error(`no batch axis: ${r.reason}`);
    process.exit(3);
  }
  writeFileSync(rest[1]!, r.bytes);
  const i = inputOf(rest[1]!);
  console.log(
    JSON.stringify({
      input: i.name,
      dims: i.dims,
      ...(r.coupled ? { coupled: r.coupled } : {}),
      ...(float.ok && float.changed ? { dequantized: true } : {}),
    }),
  );
} else if (cmd === 'fp16-graph') {
  const r = withFloat16(new Uint8Array(readFileSync(rest[0]!)));
  if (!r.ok) {
    console.error(`no float16 graph: ${r.reason}`);
    process.exit(3);
  }
  writeFileSync(rest[1]!, r.bytes);
} else if (cmd === 'trtexec') {
  const [tool, model, batches, seconds, work, out] = rest;
  writeFileSync(
    out!,
    JSON.stringify(trtexec(tool!, model!, batches!.split(',').map(Number), Number(seconds), work!), null, 2) + '\n',
  );
} else if (cmd === 'report') {
  report(rest[0]!, rest[1]!);
} else if (cmd === 'failure') {
  // A step that failed as a whole: its error, as the report shows it, beside the rows it wrote before it stopped
  // (PARTIAL: its --json-file), if any.
  // --stopped: `timeout` ended it at its share of the check's time (--budget), which its stderr does not say.
  const stopped = rest[0] === '--stopped';
  const [stderr, json] = stopped ? rest.slice(1) : rest;
  const error = stopped
    ? "stopped: it ran past its share of the check's time (--budget); the rows it made before are kept"
    : stepFailure(existsSync(stderr!) ? readFileSync(stderr!, 'utf8') : '');
  let partial: Record<string, unknown> = {};
  try {
    if (json && existsSync(json)) partial = JSON.parse(readFileSync(json, 'utf8'));
  } catch {
    // A file cut off mid-write: only the error.
  }
  console.log(JSON.stringify({ ...partial, error }));
} else {
  console.error(
    'usage: gpu-check.js probe OUT | batch-graph IN OUT | fp16-graph IN OUT | trtexec TOOL MODEL BATCHES SECONDS WORK OUT | report WORK OUTDIR | failure [--stopped] STDERR [PARTIAL_JSON]',
  );
  process.exit(2);
}
