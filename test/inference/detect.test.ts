// Detection with the built-in CenterNet, prepared offline into a temp data dir, on labelled COCO photos:
// the labelled objects come back with their class, boxes in source pixels and a colour attribute.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ModelRegistry } from '../../src/inference/registry.js';
import { InferenceRuntime } from '../../src/inference/runtime.js';
import { COCO_CLASSES } from '../../src/detection/coco-classes.js';
import { Detector, modelInput } from '../../src/detection/detect.js';
import type { ModelInputSpec } from '../../src/detection/detector-config.js';
import { colorName } from '../../src/media/colour.js';
import { iou } from '../../src/detection/yolo.js';
import { shrink } from '../../src/native/image.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { collectingLog, loadRgb, tempDataDir } from '../helpers/inference.js';

/** YOLO label file -> [class, [x1,y1,x2,y2]] in pixels. */
function labels(name: string, w: number, h: number): [string, number[]][] {
  return readFileSync(join(cocoDir(), 'labels', `${name}.txt`), 'utf8')
    .trim()
    .split('\n')
    .map((l) => {
      const [c, cx, cy, bw, bh] = l.split(' ').map(Number);
      return [COCO_CLASSES[c], [(cx - bw / 2) * w, (cy - bh / 2) * h, (cx + bw / 2) * w, (cy + bh / 2) * h]];
    });
}

test('CenterNet finds the labelled objects in COCO photos', { skip: cocoSkip }, async (t) => {
  const dataDir = await tempDataDir(t);
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare('centernet-coco');
  const runtime = new InferenceRuntime({ providers: ['cpu'], log: collectingLog() });
  t.after(() => runtime.release());
  const det = await Detector.create(runtime, registry);
  assert.equal(det.labels.length, 80);

  for (const [name, cls] of [
    ['000000000025', 'giraffe'],
    ['000000000034', 'zebra'],
    ['000000000081', 'airplane'],
  ] as const) {
    const img = await loadRgb(join(cocoDir(), 'images', `${name}.jpg`));
    const objs = await det.detect(img);
    const found = objs.find((o) => o.class === cls);
    assert.ok(found, `${name}: expected a ${cls}, got ${JSON.stringify(objs)}`);
    assert.ok(found.confidence >= 0.5 && found.confidence <= 1);
    const [x1, y1, x2, y2] = found.bbox;
    assert.ok(x1 >= 0 && y1 >= 0 && x2 <= img.width && y2 <= img.height && x2 > x1 && y2 > y1, `bbox ${found.bbox}`);
    const best = Math.max(
      ...labels(name, img.width, img.height)
        .filter(([c]) => c === cls)
        .map(([, b]) => iou(b, found.bbox)),
    );
    assert.ok(best >= 0.5, `${name}: IoU with the labelled ${cls} is ${best.toFixed(2)}`);
    assert.equal(typeof found.attributes.color, 'string');
    for (const o of objs) assert.ok(o.confidence >= 0.5);
  }

  // classes filter, threshold, raw path and the 400 for unknown classes
  const img = await loadRgb(join(cocoDir(), 'images', '000000000071.jpg'));
  const trains = await det.detect(img, { classes: ['train'], confidence_threshold: 0.3 });
  assert.ok(trains.length >= 1 && trains.every((o) => o.class === 'train'));
  const raw = await det.detectRaw(img, 0, 0);
  assert.equal(raw.length, 100, 'the raw path is the graph output as is');
  assert.ok(raw.every((r) => r.box[2] <= img.width && r.box[3] <= img.height));
  await assert.rejects(det.detect(img, { classes: ['train', 'dragon'] }), (e: unknown) => {
    const err = e as { status: number; type: string; code: string; param: string; message: string };
    assert.deepEqual(
      [err.status, err.type, err.code, err.param],
      [400, 'invalid_request_error', 'unknown_class', 'classes'],
    );
    assert.match(err.message, /^Unknown class "dragon"; valid classes: person, bicycle, car, /);
    return true;
  });
  await assert.rejects(
    det.detect(img, { confidence_threshold: 2 }),
    (e: unknown) => (e as { status: number }).status === 400,
  );
});

test('runs that overlap on one detector (its inputs reused from earlier runs) each answer for their own image', {
  skip: cocoSkip,
}, async (t) => {
  const dataDir = await tempDataDir(t);
  const registry = await ModelRegistry.open(dataDir);
  await registry.prepare('centernet-coco');
  const runtime = new InferenceRuntime({ providers: ['cpu'], intraOpThreads: 2, sessions: 2, log: collectingLog() });
  t.after(() => runtime.release());
  const det = await Detector.create(runtime, registry);
  const imgs = await Promise.all(
    ['000000000025', '000000000034', '000000000081'].map((n) => loadRgb(join(cocoDir(), 'images', `${n}.jpg`))),
  );
  type Raw = Awaited<ReturnType<Detector['detectRaw']>>;
  const alone: Raw[] = [];
  for (const img of imgs) alone.push(await det.detectRaw(img, 0.3));
  // Each detection of one answer at or above 0.4 is in the other (same class, the same box, score within
  // 1e-3): the sessions split threads differently, so scores may differ in the last bits, never the objects.
  const within = (a: Raw, b: Raw, what: string) => {
    for (const d of a.filter((x) => x.score >= 0.4)) {
      assert.ok(
        b.some((e) => e.classId === d.classId && Math.abs(e.score - d.score) < 1e-3 && iou(e.box, d.box) > 0.99),
        `${what}: ${JSON.stringify(d)}`,
      );
    }
  };
  assert.ok(
    alone.every((a) => a.some((d) => d.score >= 0.4)),
    'each photo has a confident detection',
  );
  // Three rounds of all three at once: more runs in flight than the sessions, so inputs are made ahead and
  // reused from finished runs; every answer must be the one its image gets alone.
  for (let round = 0; round < 3; round++) {
    const together = await Promise.all(imgs.map((img) => det.detectRaw(img, 0.3)));
    together.forEach((got, i) => {
      within(alone[i]!, got, `round ${round}, image ${i}, alone in together`);
      within(got, alone[i]!, `round ${round}, image ${i}, together in alone`);
    });
  }
});

test('colour names', () => {
  assert.equal(colorName(250, 20, 20), 'red');
  assert.equal(colorName(20, 200, 40), 'green');
  assert.equal(colorName(30, 60, 220), 'blue');
  assert.equal(colorName(250, 250, 245), 'white');
  assert.equal(colorName(10, 10, 12), 'black');
  assert.equal(colorName(128, 128, 128), 'gray');
  assert.equal(colorName(240, 220, 30), 'yellow');
});

test('stretched model input: one native pass at up to 2x shrink (exact at the model size), a box shrink first beyond', async () => {
  const spec = {
    inputName: 'x',
    width: 4,
    height: 2,
    resize: 'stretch',
    layout: 'nchw',
    scale: 1 / 255,
    channelOrder: 'bgr',
    mean: [0.5, 0.5, 0.5],
    std: [0.25, 0.25, 0.25],
  } as unknown as ModelInputSpec;
  const px = Uint8Array.from({ length: 4 * 2 * 3 }, (_, i) => (i * 37) % 256);
  const same = await modelInput({ data: px, width: 4, height: 2, channels: 3 }, spec);
  assert.deepEqual(same.tensor.dims, [1, 3, 2, 4]);
  const data = same.tensor.data as Float32Array;
  for (let i = 0; i < 8; i++) {
    for (let c = 0; c < 3; c++) {
      const want = (px[3 * i + (2 - c)]! / 255 - 0.5) / 0.25;
      assert.ok(Math.abs(data[c * 8 + i]! - want) < 1e-5, `pixel ${i} channel ${c}: ${data[c * 8 + i]} vs ${want}`);
    }
  }
  // A flat image stays flat whichever path scales it (2x: the pass alone; 3x and 5x: a box shrink first).
  for (const k of [2, 3, 5]) {
    const flat = {
      data: new Uint8Array(4 * k * 2 * k * 3).fill(200),
      width: 4 * k,
      height: 2 * k,
      channels: 3 as const,
    };
    const out = (await modelInput(flat, spec)).tensor.data as Float32Array;
    const want = (200 / 255 - 0.5) / 0.25;
    assert.ok(
      out.every((v) => Math.abs(v - want) < 1e-5),
      `${k}x shrink`,
    );
  }
  // Beyond 2x every source pixel counts: a 3x-wide checker of black and white columns averages to grey
  // (bilinear sampling alone would read only some columns).
  const wide = { data: new Uint8Array(12 * 2 * 3), width: 12, height: 2, channels: 3 as const };
  for (let y = 0; y < 2; y++)
    for (let x = 0; x < 12; x++) if (x % 3 === 0) wide.data.fill(255, (y * 12 + x) * 3, (y * 12 + x) * 3 + 3);
  const grey = (await modelInput(wide, spec)).tensor.data as Float32Array;
  const want = (85 / 255 - 0.5) / 0.25;
  assert.ok(
    grey.every((v) => Math.abs(v - want) < 0.02),
    `checker: ${[...grey].map((v) => v.toFixed(3)).join(' ')}`,
  );
});

test('box shrink: means of whole blocks, the last partial ones dropped; into a scratch buffer; bad factors or a short buffer are a 400', () => {
  const px = Uint8Array.from([0, 10, 20, 2, 12, 22, 100, 100, 100, 50, 50, 50, 7, 7, 7]);
  // 5x1 by 2x1: two blocks (the fifth pixel dropped), each the rounded mean of its pair.
  const out = shrink({ data: px, width: 5, height: 1, channels: 3 }, 2, 1);
  assert.equal(out.width, 2);
  assert.equal(out.height, 1);
  assert.deepEqual([...out.data], [1, 11, 21, 75, 75, 75]);
  // 2x2 blocks through the general path.
  const sq = Uint8Array.from(
    { length: 4 * 2 * 3 },
    (_, i) => (Math.floor(i / 3) % 4 < 2 ? 10 : 30) + (i >= 12 ? 20 : 0),
  );
  const q = shrink({ data: sq, width: 4, height: 2, channels: 3 }, 2, 2);
  assert.deepEqual([...q.data], [20, 20, 20, 40, 40, 40]);
  for (const [fx, fy] of [
    [0, 1],
    [1, 1.5],
    [6, 1],
    [1, 2],
  ] as const) {
    assert.throws(
      () => shrink({ data: px, width: 5, height: 1, channels: 3 }, fx, fy),
      (e: unknown) => (e as { status?: number }).status === 400,
      `${fx} x ${fy}`,
    );
  }
  // Into a scratch buffer: a larger one is used from its start (the same values), a smaller one is a 400.
  const scratch = new Uint8Array(32).fill(255);
  const into = shrink({ data: px, width: 5, height: 1, channels: 3 }, 2, 1, scratch);
  assert.equal(into.data.buffer, scratch.buffer);
  assert.deepEqual([...into.data], [1, 11, 21, 75, 75, 75]);
  assert.throws(
    () => shrink({ data: px, width: 5, height: 1, channels: 3 }, 2, 1, new Uint8Array(5)),
    (e: unknown) => (e as { status?: number }).status === 400,
  );
});
