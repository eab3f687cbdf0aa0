// Resuming a file decode through VideoDecoder (DecodeOptions.resume): for every sampled frame k of an
// undisturbed decode (of vtest.avi, every 5th and those next to a change of key frame), a fresh decoder given
// frame k's cursor (after a trip through JSON, as a stored checkpoint makes) yields exactly frames k+1..n
// (index, time, pixels), the same finish and the same counters. Three inputs: a variable-rate H.264 clip with
// B-frames made here, and the evaluation videos vtest.avi (no presentation times) and TUD-Campus (skipped when
// the evaluation data is absent). Also: a cursor that fails its checks is a clear error, never a crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { DecodeError, VideoDecoder, type DecodedFrame, type DecoderCursor } from '../../src/video/source/decoder.js';
import type { DecodeOptions } from '../../src/native/decode.js';
import { ApiError } from '../../src/base/errors.js';
import { makeMedia } from '../helpers/media.js';
import { evalData } from '../helpers/eval-data.js';
import { evalDataSkip } from '../../eval/dir.js';

const VTEST = ['tracking', 'vtest_PETS09-S2L1_full', 'vtest.avi'];
const TUD = ['tracking', 'TUD-Campus', 'TUD-Campus.mp4'];

/** 250 frames of 320x240 H.264, up to 3 B-frames: 25 fps for 4 s, 10 fps for 10 s, then 30 fps; a key frame every 40. */
const vfrBFrames = () =>
  makeMedia('resume_vfr_bframes.mp4', [
    ...['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25:duration=10'],
    ...['-vf', "settb=1/1000,setpts='if(lt(N,100),N/25,if(lt(N,200),4+(N-100)/10,14+(N-200)/30))/TB'"],
    ...['-fps_mode', 'vfr', '-c:v', 'libx264', '-preset', 'veryfast', '-bf', '3', '-g', '40', '-keyint_min', '40'],
    ...['-sc_threshold', '0', '-pix_fmt', 'yuv420p'],
  ]);

interface Seen {
  index: number;
  ptsMs: number;
  /** SHA-1 of the pixels, computed here (the cursor's hash is the decoder's own). */
  pixels: string;
  cursor: DecoderCursor | null;
}

interface Decoded {
  frames: Seen[];
  decodedFrames: number;
  droppedFrames: number;
  finishReason: string | null;
  resumedBy: string | null;
}

const seen = (f: DecodedFrame): Seen => ({
  index: f.index,
  ptsMs: f.ptsMs,
  pixels: createHash('sha1').update(f.data).digest('hex'),
  cursor: f.cursor,
});

async function decode(input: string, options: DecodeOptions): Promise<Decoded> {
  const d = await VideoDecoder.open(input, { threads: 2, ...options });
  try {
    assert.deepEqual(d.cursor, options.resume ?? null, 'before the first frame, cursor is the one resumed from');
    const frames: Seen[] = [];
    for await (const f of d.frames(4, true)) {
      frames.push(seen(f));
      // The decoder's cursor follows the frames handed out, not its read-ahead.
      assert.equal(d.cursor, f.cursor);
    }
    return { frames, ...d.stats, finishReason: d.finishReason, resumedBy: d.info.resumedBy };
  } finally {
    await d.close();
  }
}

/**
 * Resumes after every `stride`-th frame, the last, and each frame on either side of a change of key frame
 * (where a seek lands elsewhere); with stride 1, after every frame. Returns the number of frames.
 */
async function resumeEverywhere(input: string, options: DecodeOptions, stride = 1): Promise<number> {
  const full = await decode(input, options);
  const n = full.frames.length;
  assert.ok(n >= 2);
  const keyTs = (k: number) => full.frames[k]?.cursor?.keyTs;
  for (let k = 0; k < n; k++) {
    const edge = k === n - 1 || (k > 0 && keyTs(k - 1) !== keyTs(k)) || (k < n - 1 && keyTs(k + 1) !== keyTs(k));
    if (k % stride !== 0 && !edge) continue;
    const cursor = JSON.parse(JSON.stringify(full.frames[k]!.cursor)) as DecoderCursor;
    assert.equal(cursor.index, full.frames[k]!.index);
    const resumed = await decode(input, { ...options, resume: cursor });
    const tail = full.frames.slice(k + 1);
    const msg = `resumed after frame ${k} (index ${cursor.index})`;
    assert.deepEqual(
      resumed.frames.map((f) => [f.index, f.ptsMs, f.pixels, f.cursor?.hash]),
      tail.map((f) => [f.index, f.ptsMs, f.pixels, f.cursor?.hash]),
      msg,
    );
    assert.deepEqual(
      [resumed.decodedFrames, resumed.droppedFrames, resumed.finishReason, resumed.resumedBy],
      [full.decodedFrames, full.droppedFrames, full.finishReason, 'seek'],
      msg,
    );
  }
  return full.frames.length;
}

test('variable-rate H.264 with B-frames: every resume continues exactly (fps 3, a seconds range, max_frames)', async () => {
  const clip = await vfrBFrames();
  await resumeEverywhere(clip, { sampling: { mode: 'fps', value: 3 } });
  await resumeEverywhere(clip, { sampling: { mode: 'fps', value: 2 }, range: { start: 2.3, end: 12.1 } });
  await resumeEverywhere(clip, { sampling: { mode: 'fps', value: 3 }, maxFrames: 7 });
});

// Every 5th frame and the key-frame edges (each resume decodes from a key frame to the end; the native suite's
// decode_resume runs the same video's resumes more densely, without the binding).
test('vtest.avi (no presentation times): resumes at 1 fps continue exactly', {
  skip: evalDataSkip(VTEST.join('/')),
}, async () => {
  assert.equal(await resumeEverywhere(evalData(...VTEST), { sampling: { mode: 'fps', value: 1 } }, 5), 80);
});

test('TUD-Campus: every resume at 5 fps continues exactly', { skip: evalDataSkip(TUD.join('/')) }, async () => {
  await resumeEverywhere(evalData(...TUD), { sampling: { mode: 'fps', value: 5 } });
});

test('a corrupted cursor: a seek that lands wrong replays, other pixels fail with resume_mismatch, garbage is a 400', async () => {
  const clip = await vfrBFrames();
  const options: DecodeOptions = { sampling: { mode: 'fps', value: 3 } };
  const full = await decode(clip, options);
  const k = full.frames.length - 6;
  const cursor = full.frames[k]!.cursor!;

  // A key frame past the cursor's frame: the seek passes it, the replay from the start finds it.
  const late = await decode(clip, { ...options, resume: { ...cursor, keyTs: cursor.keyTs + 60_000 } });
  assert.equal(late.resumedBy, 'replay');
  assert.deepEqual(
    late.frames.map((f) => f.pixels),
    full.frames.slice(k + 1).map((f) => f.pixels),
  );
  assert.deepEqual([late.decodedFrames, late.droppedFrames], [full.decodedFrames, full.droppedFrames]);

  // Other pixels: neither the seek nor the replay finds the frame.
  const hash = `${cursor.hash.slice(0, 15)}${cursor.hash.endsWith('0') ? '1' : '0'}`;
  await assert.rejects(
    VideoDecoder.open(clip, { ...options, resume: { ...cursor, hash } }),
    (e: unknown) => e instanceof DecodeError && e.code === 'resume_mismatch' && e.status === 500,
  );
  // A cursor of other options.
  await assert.rejects(
    VideoDecoder.open(clip, { sampling: { mode: 'fps', value: 4 }, resume: cursor }),
    (e: unknown) => e instanceof DecodeError && e.code === 'resume_mismatch' && /other sampling/.test(e.message),
  );

  // Not a cursor at all: a clear invalid_parameter on `resume`, before the addon sees it.
  const garbage: unknown[] = [
    null,
    'cursor',
    [],
    { ...cursor, v: 2 },
    { ...cursor, index: -1 },
    { ...cursor, pts: 1.5 },
    { ...cursor, keyTs: undefined },
    { ...cursor, emittedFrames: 0 },
    { ...cursor, nextSample: Number.NaN },
    { ...cursor, hash: 'zz' },
    { ...cursor, setup: 42 },
  ];
  for (const resume of garbage) {
    await assert.rejects(
      VideoDecoder.open(clip, { ...options, resume: resume as DecoderCursor }),
      (e: unknown) => e instanceof ApiError && e.code === 'invalid_parameter' && e.param === 'resume',
      JSON.stringify(resume),
    );
  }
});
