// The NVIDIA decoder asked for (SIGHTFLOW_VIDEO_HWACCEL auto or cuda) on a host without a CUDA device: the
// decoder falls back to software cleanly, says so (info.hwaccel, and why in hwaccelFallback), and gives the
// same frames, indices and timestamps as a decoder that never asked. On a host with a GPU the same test
// checks the hardware path's frames against software's (H.264 decoding is bit-exact by its specification).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { VideoDecoder, type DecoderOptions } from '../../src/video/source/decoder.js';
import { ApiError } from '../../src/base/errors.js';
import { h264BFrames, h264Clip, vp9Clip } from '../helpers/media.js';

const hasGpu = existsSync('/dev/nvidia0');

async function decodeAll(input: string, options: DecoderOptions) {
  const d = await VideoDecoder.open(input, { sampling: { mode: 'fps', value: 5 }, ...options });
  try {
    const frames: { index: number; ptsMs: number; data: Buffer }[] = [];
    for await (const f of d.frames(4)) frames.push({ index: f.index, ptsMs: f.ptsMs, data: Buffer.from(f.data) });
    return { info: d.info, frames, stats: d.stats };
  } finally {
    await d.close();
  }
}

for (const [name, clip] of [
  ['H.264', h264Clip],
  ['H.264 with B-frames', h264BFrames],
  ['VP9', vp9Clip],
] as const) {
  test(`${name}: hwaccel auto and cuda give software's frames, indices and timestamps, and report the path taken`, async () => {
    const input = await clip();
    const soft = await decodeAll(input, { hwaccel: 'none' });
    assert.equal(soft.info.hwaccel, 'software');
    assert.equal(soft.info.hwaccelFallback, null, 'nothing was asked, so nothing fell back');
    assert.ok(soft.frames.length >= 5);
    for (const hw of ['auto', 'cuda'] as const) {
      const r = await decodeAll(input, { hwaccel: hw });
      if (!hasGpu) {
        assert.equal(r.info.hwaccel, 'software', `${hw} without a GPU decodes in software`);
        assert.match(r.info.hwaccelFallback ?? '', /no CUDA device|has no NVIDIA path/, `${hw}: why it fell back`);
        assert.equal(r.info.hwaccelDevice, null, `${hw}: no device decodes in software`);
      } else if (r.info.hwaccel === 'cuda') {
        assert.equal(r.info.hwaccelDevice, 0, `${hw}: the first device by default`);
      }
      assert.deepEqual(
        r.frames.map((f) => [f.index, f.ptsMs]),
        soft.frames.map((f) => [f.index, f.ptsMs]),
        `${hw}: indices and timestamps`,
      );
      r.frames.forEach((f, i) =>
        assert.ok(f.data.equals(soft.frames[i]!.data), `${hw}: frame ${f.index} has software's pixels`),
      );
      assert.deepEqual(r.stats, soft.stats, `${hw}: counters`);
    }
  });
}

test('an unknown hwaccel is a 400 naming the parameter', async () => {
  await assert.rejects(
    VideoDecoder.open(await h264Clip(), { hwaccel: 'vaapi' as never }),
    (e: unknown) => e instanceof ApiError && e.status === 400 && /hwaccel/.test(e.message),
  );
});

test('a device the host does not have sends the decoder to software, naming the device, with the same frames', async () => {
  const input = await h264Clip();
  const soft = await decodeAll(input, { hwaccel: 'none' });
  // No host here or on the GPU machines this is checked on has 200 cards.
  const r = await decodeAll(input, { hwaccel: 'cuda', hwaccelDevice: 200 });
  assert.equal(r.info.hwaccel, 'software');
  assert.equal(r.info.hwaccelDevice, null);
  assert.match(r.info.hwaccelFallback ?? '', /no CUDA device 200\b/);
  assert.deepEqual(
    r.frames.map((f) => [f.index, f.ptsMs]),
    soft.frames.map((f) => [f.index, f.ptsMs]),
  );
  r.frames.forEach((f, i) => assert.ok(f.data.equals(soft.frames[i]!.data), `frame ${f.index} has software's pixels`));
  if (!hasGpu) {
    // Each device's failure is its own: device 0 still reports its own reason, not device 200's.
    const zero = await decodeAll(input, { hwaccel: 'cuda', hwaccelDevice: 0 });
    assert.match(zero.info.hwaccelFallback ?? '', /no CUDA device 0\b/);
  }
});

test('a device that is no ordinal is a 400 naming the parameter', async () => {
  for (const bad of [-1, 1.5, 256, Number.NaN]) {
    await assert.rejects(
      VideoDecoder.open(await h264Clip(), { hwaccel: 'cuda', hwaccelDevice: bad }),
      (e: unknown) => e instanceof ApiError && e.status === 400 && /hwaccelDevice/.test(e.message),
      String(bad),
    );
  }
});
