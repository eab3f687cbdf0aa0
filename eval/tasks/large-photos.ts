// `npm run eval -- large-photos [--model <id>] [--upscale 2,3,4,6] [--photos plain|turned|both] [--quick] [--json]`:
// detect on large JPEG photos, decoded at their full size (what a caller's own code does: decode, then resize to
// the model) and decoded no larger than the model's input needs (what POST /v1/vision/detect does: a JPEG at
// least twice that size is decoded at 1/2, 1/4 or 1/8 of it, src/media/image-decode.ts), both through the API's
// detect path on the same bytes. Each photo of detection_coco128 is enlarged F times (sharp, lanczos) and
// written as a JPEG (quality 90, 4:2:0); its labels scale with it. `plain` photos are stored upright; `turned`
// ones are stored turned a quarter with EXIF orientation 6, as cameras and phones write a portrait photo (the
// addon turns them upright, decoded smaller or not). Prints, per factor and kind,
// mAP@0.5 and mAP@0.5:0.95 against the labels and the CPU a photo of its decode and its resize to the model's
// input (process CPU time around the two: nothing else runs then). The smaller decode's mAP@0.5 must not fall
// more than 0.01 below the full decode's in any row: the run fails (exit 1) when it does. Default model: the
// built-in CenterNet (stretch to 512x512); a letterboxing export such as yolov8n-int8 takes --model. Default
// kinds: both; --quick: factor 4 alone, plain photos, every photo (on the first 8 alone mAP@0.5 moved by 0.006
// between the two decodes at factor 4).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { evalDir, skipWithoutEvalData } from '../dir.js';
import type { SuiteOptions } from '../../scripts/suite-runner.js';
import { argValue, chooseModel } from '../lib/model-choice.js';
import { evalImages, meanAp, median, readLabels, type Det, type Gt } from './detect.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { Detector, modelInput } from '../../src/detection/detect.js';
import { decodeShrink, decodeToRgb } from '../../src/media/image-decode.js';
import { withOrientation } from '../../test/helpers/exif.js';

/**
 * The most the smaller decode's mAP@0.5 may fall below the full decode's. Why not less: the same full decode of
 * the same photos scored up to 0.0075 apart written upright and written turned (two JPEG encodings of one image;
 * docs/capacity.md, "JPEG decoding"); a bound under that would flag the encoder's noise on 64 photos.
 */
const MAX_LOSS = 0.01;
const MAX_PIXELS = 100_000_000;

interface PathScore {
  map50: number;
  map50_95: number;
  /** CPU ms of the decode and the resize to the model's input a photo, median. */
  prepCpuMs: number;
}

export async function run({ quick, json, args }: SuiteOptions): Promise<void> {
  if (skipWithoutEvalData({ json }, 'detection_coco128')) return;
  const id = argValue(args, 'model') ?? 'centernet-coco';
  const factors = (argValue(args, 'upscale') ?? (quick ? '4' : '2,3,4,6')).split(',').map(Number);
  const kinds = argValue(args, 'photos') ?? (quick ? 'plain' : 'both');
  if (!['plain', 'turned', 'both'].includes(kinds))
    throw new Error(`--photos takes plain, turned or both, not ${kinds}`);
  for (const f of factors)
    if (!(f >= 1 && f <= 8)) throw new Error(`--upscale takes factors from 1 to 8, not ${argValue(args, 'upscale')}`);
  const chosen = await chooseModel(id, { json });
  if (!chosen) return;
  const runtime = new InferenceRuntime({ providers: ['cpu'], log: { info() {}, warn() {} } });
  try {
    const detector = await Detector.create(runtime, chosen.registry, id);
    const dir = evalDir('detection_coco128');
    const classes = readFileSync(join(dir, 'coco80_classes.txt'), 'utf8')
      .split('\n')
      .map((s) => s.trim())
      .filter(Boolean);
    const images = evalImages(false);
    const target = detector.decodeFor;
    console.log(
      `large-photos eval of ${id} (input ${target.width}x${target.height}, ${target.fit === 'contain' ? 'letterbox' : 'stretch'}) on ${images.length} photos of detection_coco128, enlarged and written as JPEG`,
    );
    const rows = [];
    let ok = true;
    for (const [factor, turned] of factors.flatMap((f) =>
      kinds === 'both'
        ? [
            [f, false],
            [f, true],
          ]
        : [[f, kinds === 'turned']],
    ) as [number, boolean][]) {
      const gts: Gt[] = [];
      const dets: { full: Det[]; shrunk: Det[] } = { full: [], shrunk: [] };
      const cpu: { full: number[]; shrunk: number[] } = { full: [], shrunk: [] };
      const shrinks = new Map<number, number>();
      let size = '';
      for (const f of images) {
        const { bytes, width, height } = await enlargedJpeg(join(dir, 'images', f), factor, turned);
        size ||= `${width}x${height}`;
        gts.push(...readLabels(join(dir, 'labels', f.replace(/\.jpg$/, '.txt')), f, width, height));
        const shrink = decodeShrink(width, height, target);
        shrinks.set(shrink, (shrinks.get(shrink) ?? 0) + 1);
        for (const path of ['full', 'shrunk'] as const) {
          const c0 = process.cpuUsage();
          const img = await decodeToRgb(
            bytes,
            'jpeg',
            'image',
            MAX_PIXELS,
            undefined,
            path === 'shrunk' ? target : undefined,
          );
          await modelInput(img, detector.pre);
          const c = process.cpuUsage(c0);
          cpu[path].push((c.user + c.system) / 1000);
          const objects = await detector.detect(img, { confidence_threshold: 0.001 });
          for (const o of objects) {
            const classId = classes.indexOf(o.class.toLowerCase());
            if (classId >= 0) dets[path].push({ image: f, classId, score: o.confidence, box: o.bbox });
          }
        }
      }
      const score = (path: 'full' | 'shrunk'): PathScore => ({
        ...meanAp(dets[path], gts),
        prepCpuMs: median(cpu[path]),
      });
      const full = score('full');
      const shrunk = score('shrunk');
      const loss = full.map50 - shrunk.map50;
      const within = loss <= MAX_LOSS;
      ok &&= within;
      const how = [...shrinks].map(([s, n]) => `1/${s} x${n}`).join(', ');
      console.log(`  x${factor}${turned ? ', stored turned' : ''} (${size}; decoded at ${how})`);
      for (const [name, m] of [
        ['full decode, then resize   ', full],
        ['decoded smaller, then resize', shrunk],
      ] as const)
        console.log(
          `    ${name}  mAP@0.5 ${m.map50.toFixed(4)}  mAP@0.5:0.95 ${m.map50_95.toFixed(4)}  decode + resize ${m.prepCpuMs.toFixed(1)} ms CPU p50`,
        );
      console.log(
        `    smaller - full: mAP@0.5 ${(-loss).toFixed(4)}, mAP@0.5:0.95 ${(shrunk.map50_95 - full.map50_95).toFixed(4)} (${within ? 'within' : 'BEYOND'} the ${MAX_LOSS} allowed); decode + resize CPU ${(shrunk.prepCpuMs / full.prepCpuMs).toFixed(2)}x`,
      );
      rows.push({
        factor,
        turned,
        size,
        full: rounded(full),
        shrunk: rounded(shrunk),
        map50_delta: round(-loss),
        ok: within,
      });
    }
    if (!ok) process.exitCode = 1;
    if (json)
      console.log(
        JSON.stringify({ task: 'large-photos', model: id, images: images.length, max_loss: MAX_LOSS, rows, ok }),
      );
  } finally {
    await runtime.release();
    chosen.cleanup();
  }
}

/**
 * A photo enlarged `factor` times and written as a JPEG (quality 90, 4:2:0); `turned`: stored turned a quarter
 * anticlockwise with EXIF orientation 6 (an APP1 block of its own, no profile), so upright it is the same photo
 * and its labels hold.
 */
async function enlargedJpeg(
  path: string,
  factor: number,
  turned: boolean,
): Promise<{ bytes: Buffer; width: number; height: number }> {
  const meta = await sharp(path).rotate().metadata();
  const width = Math.round((meta.autoOrient?.width ?? meta.width!) * factor);
  const height = Math.round((meta.autoOrient?.height ?? meta.height!) * factor);
  let image = sharp(path).rotate().removeAlpha().toColourspace('srgb').resize(width, height, { fit: 'fill' });
  if (turned) image = sharp(await image.raw().toBuffer(), { raw: { width, height, channels: 3 } }).rotate(270);
  const bytes = await image.jpeg({ quality: 90, chromaSubsampling: '4:2:0' }).toBuffer();
  return { bytes: turned ? withOrientation(bytes, 6) : bytes, width, height };
}

const round = (v: number, d = 4) => Math.round(v * 10 ** d) / 10 ** d;
const rounded = (m: PathScore) => ({
  map50: round(m.map50),
  map50_95: round(m.map50_95),
  prep_cpu_ms: round(m.prepCpuMs, 2),
});
