// The image operations through the real addon: letterbox geometry and values, crop batches, resize, and
// parameter errors raised in TypeScript.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { RgbImage } from '../../src/media/rgb-image.js';
import {
  cropResize,
  letterbox,
  letterboxAsync,
  resize,
  shrink,
  stretchAsync,
  unletterboxBox,
} from '../../src/native/image.js';
import { ApiError } from '../../src/base/errors.js';

function solid(width: number, height: number, rgb: [number, number, number]): RgbImage {
  const data = new Uint8Array(width * height * 3);
  for (let i = 0; i < data.length; i += 3) data.set(rgb, i);
  return { data, width, height, channels: 3 };
}

/** Left half one colour, right half another. */
function halves(
  width: number,
  height: number,
  left: [number, number, number],
  right: [number, number, number],
): RgbImage {
  const img = solid(width, height, left);
  for (let y = 0; y < height; y++) for (let x = width / 2; x < width; x++) img.data.set(right, (y * width + x) * 3);
  return img;
}

const near = (a: number, b: number, eps = 1e-4) => assert.ok(Math.abs(a - b) <= eps, `${a} != ${b}`);

test('letterbox of a 1920x1080 frame to 640x640 NCHW: geometry, padding, values', () => {
  const img = halves(1920, 1080, [255, 0, 0], [0, 0, 255]);
  const r = letterbox(img, { width: 640, height: 640 });
  assert.deepEqual(r.dims, [1, 3, 640, 640]);
  assert.equal(r.tensor.length, 3 * 640 * 640);
  near(r.scale, 1 / 3);
  assert.equal(r.padX, 0);
  assert.equal(r.padY, 140);
  assert.equal(r.contentWidth, 640);
  assert.equal(r.contentHeight, 360);
  const plane = 640 * 640;
  const at = (c: number, x: number, y: number) => r.tensor[c * plane + y * 640 + x];
  near(at(0, 10, 0), 114 / 255); // padding row
  near(at(2, 600, 639), 114 / 255);
  near(at(0, 100, 300), 1); // red half
  near(at(2, 100, 300), 0);
  near(at(0, 500, 300), 0); // blue half
  near(at(2, 500, 300), 1);
  // A box in tensor space maps back to the source frame.
  const back = unletterboxBox([100, 140, 200, 500], r, 1920, 1080);
  assert.deepEqual(
    back.map((v) => Math.round(v)),
    [300, 0, 600, 1080],
  );
});

test('letterbox NHWC, BGR, mean/std and the async variant agree', async () => {
  const img = solid(64, 32, [200, 100, 50]);
  const opts = {
    width: 32,
    height: 32,
    layout: 'nhwc' as const,
    channelOrder: 'bgr' as const,
    scale: 1,
    mean: [10, 20, 30] as const,
    std: [2, 4, 5] as const,
  };
  const a = letterbox(img, opts);
  assert.deepEqual(a.dims, [1, 32, 32, 3]);
  const mid = (16 * 32 + 16) * 3;
  near(a.tensor[mid], (50 - 10) / 2);
  near(a.tensor[mid + 1], (100 - 20) / 4);
  near(a.tensor[mid + 2], (200 - 30) / 5);
  const b = await letterboxAsync(img, opts);
  assert.deepEqual(Array.from(b.tensor), Array.from(a.tensor));
  assert.equal(b.padY, a.padY);
});

test('letterboxAsync of a full frame leaves the event loop free and reuses the output', async () => {
  const img = halves(1920, 1080, [0, 255, 0], [255, 255, 255]);
  const out = new Float32Array(3 * 640 * 640);
  const jobs = [
    letterboxAsync(img, { width: 640, height: 640, out }),
    letterboxAsync(img, { width: 640, height: 640, out }),
  ];
  const [r] = await Promise.all(jobs);
  assert.equal(r.tensor, out);
  near(out[640 * 640 + 300 * 640 + 100], 1); // green plane, left half
});

test('letterbox honours stride (padded rows) and scaleUp: false', () => {
  const width = 4,
    height = 2,
    stride = 16;
  const data = new Uint8Array(stride * height).fill(255);
  for (let y = 0; y < height; y++) for (let x = 0; x < width * 3; x++) data[y * stride + x] = 60;
  const r = letterbox({ data, width, height, channels: 3, stride }, { width: 8, height: 8, scaleUp: false, scale: 1 });
  near(r.scale, 1);
  assert.equal(r.padX, 2);
  assert.equal(r.padY, 3);
  near(r.tensor[3 * 8 + 2], 60); // first content pixel: row padding never leaks in
  near(r.tensor[3 * 8 + 5], 60);
});

test('cropResize: one batch tensor, one slot per roi, clamped at the frame edge', () => {
  const img = halves(200, 100, [255, 0, 0], [0, 0, 255]);
  const rois = [
    [0, 0, 80, 100],
    [120, 20, 200, 80],
    [-50, -50, 50, 50],
  ];
  const { tensor, dims } = cropResize(img, rois, { width: 16, height: 32 });
  assert.deepEqual(dims, [3, 3, 32, 16]);
  assert.equal(tensor.length, 3 * 3 * 32 * 16);
  const per = 3 * 32 * 16,
    plane = 32 * 16;
  for (let i = 0; i < plane; i++) {
    near(tensor[i], 1); // roi 0 red plane
    near(tensor[per + 2 * plane + i], 1); // roi 1 blue plane
    near(tensor[2 * per + i], 1); // roi 2: outside samples repeat the red edge
  }
  const nhwc = cropResize(img, rois.slice(0, 1), { width: 4, height: 4, layout: 'nhwc', scale: 1 });
  assert.deepEqual(nhwc.dims, [1, 4, 4, 3]);
  assert.deepEqual(Array.from(nhwc.tensor.slice(0, 3)), [255, 0, 0]);
  assert.deepEqual(cropResize(img, [], { width: 4, height: 4 }).dims, [0, 3, 4, 4]);
});

test('cropResize with halveWidth gives the tensor of shrink(2, 1) then cropResize, without the copy', () => {
  const w = 131,
    h = 37;
  const data = new Uint8Array(w * h * 3);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7919 + (i >> 5)) & 255;
  const img = { data, width: w, height: h, channels: 3 as const };
  const half = shrink(img, 2, 1);
  for (const opts of [
    { width: 64, height: 48 },
    { width: 20, height: 90, layout: 'nhwc' as const, channelOrder: 'bgr' as const },
  ]) {
    const roi = [
      [0, 0, half.width, h],
      [5.5, 3, 40, 30],
    ];
    const want = cropResize(half, roi, opts).tensor;
    const got = cropResize(img, roi, { ...opts, halveWidth: true }).tensor;
    assert.deepEqual(got, want);
  }
  assert.throws(
    () => cropResize(solid(1, 4, [1, 2, 3]), [[0, 0, 1, 4]], { width: 2, height: 2, halveWidth: true }),
    (e: unknown) => e instanceof ApiError && e.status === 400 && /halveWidth/.test(e.message),
  );
});

test("stretchAsync on the libuv pool gives cropResize's tensor of the whole (shrunk) image, into the caller's tensor", async () => {
  const w = 131,
    h = 97;
  const data = new Uint8Array(w * h * 3);
  for (let i = 0; i < data.length; i++) data[i] = (i * 7919 + (i >> 5)) & 255;
  const img = { data, width: w, height: h, channels: 3 as const };
  const before = Uint8Array.from(data);
  const formats = [
    { width: 40, height: 30 },
    {
      width: 20,
      height: 50,
      layout: 'nhwc' as const,
      channelOrder: 'bgr' as const,
      mean: [0.4, 0.5, 0.6] as [number, number, number],
      std: [0.2, 0.3, 0.25] as [number, number, number],
    },
  ];
  for (const opts of formats) {
    for (const [fx, fy] of [
      [1, 1],
      [2, 1],
      [3, 2],
      [1, 4],
    ] as const) {
      const shrunk = fx === 1 && fy === 1 ? img : shrink(img, fx, fy);
      const want = cropResize(shrunk, [[0, 0, shrunk.width, shrunk.height]], opts);
      const out = new Float32Array(3 * opts.width * opts.height + 5).fill(-7);
      const got = await stretchAsync(img, { ...opts, shrinkX: fx, shrinkY: fy, out });
      assert.deepEqual(
        got.dims,
        want.dims.map((d, i) => (i === 0 ? 1 : d)),
      );
      assert.deepEqual(got.tensor, want.tensor, `${fx}x${fy} ${JSON.stringify(opts)}`);
      assert.equal(got.tensor.buffer, out.buffer, "written into the caller's tensor");
      assert.equal(out[out.length - 1], -7, 'nothing past the tensor is touched');
    }
  }
  assert.deepEqual(data, before, 'the source is only read');
  // Several at once (the pool's threads, each with its own shrink scratch) give the same values.
  const want = (await stretchAsync(img, { width: 32, height: 32, shrinkX: 3, shrinkY: 2 })).tensor;
  const many = await Promise.all(
    Array.from({ length: 8 }, () => stretchAsync(img, { width: 32, height: 32, shrinkX: 3, shrinkY: 2 })),
  );
  for (const m of many) assert.deepEqual(m.tensor, want);
});

test('stretchAsync refuses bad factors and a short tensor with a 400 before any work', async () => {
  const img = solid(8, 6, [1, 2, 3]);
  const bad = (e: unknown, re: RegExp) => e instanceof ApiError && e.status === 400 && re.test(e.message);
  for (const [k, v] of [
    ['shrinkX', 0],
    ['shrinkX', 9],
    ['shrinkY', 1.5],
    ['shrinkY', 7],
  ] as const) {
    await assert.rejects(stretchAsync(img, { width: 4, height: 4, [k]: v }), (e) => bad(e, new RegExp(k)));
  }
  await assert.rejects(stretchAsync(img, { width: 4, height: 4, out: new Float32Array(47) }), (e) => bad(e, /out/));
  await assert.rejects(stretchAsync(img, { width: 0, height: 4 }), (e) => bad(e, /width/));
  await assert.rejects(stretchAsync({ ...img, data: new Uint8Array(10) }, { width: 4, height: 4 }), (e) =>
    bad(e, /RGB24 image/),
  );
});

test('resize keeps a solid colour and the layout of halves', () => {
  const img = halves(300, 200, [10, 200, 30], [250, 240, 5]);
  const r = resize(img, 30, 20);
  assert.equal(r.data.length, 30 * 20 * 3);
  assert.deepEqual(Array.from(r.data.slice(0, 3)), [10, 200, 30]);
  const last = (20 * 30 - 1) * 3;
  assert.deepEqual(Array.from(r.data.slice(last, last + 3)), [250, 240, 5]);
});

test('parameters are validated in TypeScript with the catalogue error', () => {
  const img = solid(10, 10, [1, 2, 3]);
  assert.throws(
    () => letterbox(img, { width: 0, height: 10 }),
    (e: unknown) =>
      e instanceof ApiError && /Expected integer between 1 and 32768 for width but received 0/.test(e.message),
  );
  assert.throws(() => letterbox(img, { width: 10, height: 10, std: [1, 0, 1] }), ApiError);
  assert.throws(
    () => letterbox({ ...img, data: img.data.subarray(0, 10) }, { width: 4, height: 4 }),
    /Expected at least 300 bytes/,
  );
  assert.throws(() => cropResize(img, [[5, 5, 5, 8]], { width: 2, height: 2 }), /rois\[0\]/);
});
