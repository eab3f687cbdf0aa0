// The addon's one error convention, called directly (around the TypeScript faces, which check first): every
// binding's bad arguments and options throw an Error with code ERR_SIGHTFLOW_<AREA>_INVALID_ARG and the message
// "Expected <type> <constraint> for <name> but received <value>" (TypeError for the wrong kind of value,
// RangeError for one out of bounds), never a crash or a silent default; core failures carry their own code.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeFailure, NativeDecoder } from '../../src/native/decode.js';
import { decodeJpeg } from '../../src/native/image.js';
import { isNativeError, loadAddon } from '../../src/native/load.js';

type Ctor = new (...args: never[]) => unknown;
// The addon untyped: these calls are deliberately wrong.
const addon = loadAddon<Record<string, (...args: unknown[]) => unknown> & Record<string, Ctor>>();
const Decoder = addon.Decoder as unknown as new () => {
  open(o?: unknown): Promise<unknown>;
  read(...a: unknown[]): Promise<unknown>;
  close(): Promise<void>;
};
const Tracker = addon.Tracker as unknown as new (o?: unknown) => { update(...a: unknown[]): unknown };
const VectorIndex = addon.VectorIndex as unknown as new (
  o?: unknown,
) => { load(p: unknown): void; search(...a: unknown[]): unknown };

function expectError(
  fn: () => unknown,
  kind: typeof TypeError | typeof RangeError,
  code: string,
  message: string,
): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof kind, `expected a ${kind.name}, got ${String(e)}`);
    assert.equal((e as { code?: string }).code, code);
    assert.equal((e as Error).message, message);
    assert.ok(isNativeError(e, code.split('_')[2] as 'DECODE'));
    return true;
  });
}

test('decode: bad open() options and read() arguments', async () => {
  const code = 'ERR_SIGHTFLOW_DECODE_INVALID_ARG';
  const d = new Decoder();
  expectError(() => d.open(), TypeError, code, 'Expected object for options but received undefined');
  expectError(
    () => d.open({ input: '' }),
    RangeError,
    code,
    'Expected string of at least 1 character for input but received ""',
  );
  expectError(
    () => d.open({ input: 7 }),
    TypeError,
    code,
    'Expected string of at least 1 character for input but received 7',
  );
  expectError(
    () => d.open({ input: 'a.mp4', mode: 'fast' }),
    RangeError,
    code,
    'Expected one of fps, interval, keyframe for mode but received "fast"',
  );
  expectError(
    () => d.open({ input: 'a.mp4', value: 0 }),
    RangeError,
    code,
    'Expected number greater than 0 and at most 1000000000 for value but received 0',
  );
  expectError(
    () => d.open({ input: 'a.mp4', start: 5, end: 2 }),
    RangeError,
    code,
    'Expected number greater than 5 and at most 1000000000000000 for end but received 2',
  );
  expectError(
    () => d.open({ input: 'a.mp4', maxFrames: 1.5 }),
    RangeError,
    code,
    'Expected integer between 1 and 1000000000 for maxFrames but received 1.5',
  );
  expectError(
    () => d.open({ input: 'a.mp4', width: 'wide' }),
    TypeError,
    code,
    'Expected integer between 1 and 16384 for width but received "wide"',
  );
  expectError(
    () => d.open({ input: 'a.mp4', keepAspect: 1 }),
    TypeError,
    code,
    'Expected boolean for keepAspect but received 1',
  );
  expectError(() => d.read(0), RangeError, code, 'Expected integer between 1 and 1000000000 for max but received 0');
  expectError(
    () => d.read(1, new Float32Array(4)),
    TypeError,
    code,
    'Expected Uint8Array for target but received Float32Array(4)',
  );
  await d.close();
});

test('decode: a failure rejects with the decoder reason in the code and the caller stack; the face maps it back', async () => {
  const d = new NativeDecoder();
  const e = await d.open('/nonexistent/video.mp4').then(
    () => null,
    (err: unknown) => err,
  );
  await d.close();
  assert.ok(e instanceof Error);
  assert.equal((e as { code?: string }).code, 'ERR_SIGHTFLOW_DECODE_INPUT_NOT_FOUND');
  assert.match(e.message, /does not exist/);
  assert.match(e.stack ?? '', /errors\.test\.ts/);
  assert.equal(decodeFailure(e), 'input_not_found');
  assert.equal(decodeFailure(new Error('other')), null);
});

test('image: a call made per image that fails rejects with a stack through the callers that await it', async () => {
  // No Error is made before these calls (they run for every image); the stack is made when one fails, from
  // the async functions awaiting it, so it still leads here.
  const decodeInHelper = async () => await decodeJpeg(Buffer.from('not a jpeg'), 1e6);
  let e: unknown;
  try {
    await decodeInHelper();
  } catch (err) {
    e = err;
  }
  assert.ok(isNativeError(e, 'IMAGE'), String(e));
  assert.match(e.message, /./);
  assert.match(e.stack ?? '', /^Error: /);
  assert.match(e.stack ?? '', /decodeInHelper/);
  assert.match(e.stack ?? '', /errors\.test\.ts/);
  assert.match(e.stack ?? '', /image\.ts/, 'the face the call went through');
});

test('image: bad sources, options and outputs', () => {
  const code = 'ERR_SIGHTFLOW_IMAGE_INVALID_ARG';
  const src = new Uint8Array(10 * 10 * 3);
  const out = new Float32Array(3 * 8 * 8);
  const opts = { dstWidth: 8, dstHeight: 8 };
  expectError(
    () => addon.imageLetterbox(src.subarray(0, 10), 10, 10, 30, opts, out),
    RangeError,
    code,
    'Expected Uint8Array of at least 300 bytes (stride x (height - 1) + 3 x width) for source but received Uint8Array(10)',
  );
  expectError(
    () => addon.imageLetterbox([1, 2, 3], 1, 1, 3, opts, out),
    TypeError,
    code,
    'Expected Uint8Array of at least 3 bytes (stride x (height - 1) + 3 x width) for source but received an array of 3',
  );
  expectError(
    () => addon.imageLetterbox(src, 0, 10, 30, opts, out),
    RangeError,
    code,
    'Expected integer between 1 and 32768 for width but received 0',
  );
  expectError(
    () => addon.imageLetterbox(src, 10, 10, 20, opts, out),
    RangeError,
    code,
    'Expected integer between 30 and 2147483647 for stride but received 20',
  );
  expectError(
    () => addon.imageLetterbox(src, 10, 10, 30, { dstWidth: 0 }, out),
    RangeError,
    code,
    'Expected integer between 1 and 32768 for dstWidth but received 0',
  );
  expectError(
    () => addon.imageLetterbox(src, 10, 10, 30, { ...opts, std: [1, 0, 1] }, out),
    RangeError,
    code,
    'Expected array of 3 finite non-zero numbers for std but received an array of 3',
  );
  expectError(
    () => addon.imageLetterbox(src, 10, 10, 30, { ...opts, center: 'yes' }, out),
    TypeError,
    code,
    'Expected boolean for center but received "yes"',
  );
  expectError(
    () => addon.imageLetterbox(src, 10, 10, 30, opts, new Float32Array(5)),
    RangeError,
    code,
    'Expected Float32Array of at least 192 elements for out but received Float32Array(5)',
  );
  // The async variant checks before it queues anything, and throws the same way.
  expectError(
    () => addon.imageLetterboxAsync(src, 10, 10, 30, null, out),
    TypeError,
    code,
    'Expected object for options but received null',
  );
  expectError(
    () => addon.imageCropResize(src, 10, 10, 30, new Float32Array(7), { width: 2, height: 2 }, out),
    RangeError,
    code,
    'Expected Float32Array of 4 values per roi for rois but received Float32Array(7)',
  );
  expectError(
    () => addon.imageCropResize(src, 10, 10, 30, new Float32Array(4), { height: 2 }, out),
    TypeError,
    code,
    'Expected integer between 1 and 32768 for width but received undefined',
  );
  expectError(
    () => addon.imageResize(src, 10, 10, 30, 4, 4, new Float32Array(48)),
    TypeError,
    code,
    'Expected Uint8Array of at least 48 bytes for out but received Float32Array(48)',
  );
  // What the core itself refuses is IMAGE_FAILED.
  assert.throws(
    () => addon.imageCropResize(src, 10, 10, 30, Float32Array.of(5, 5, 5, 8), { width: 2, height: 2 }, out),
    (e: unknown) =>
      (e as { code?: string }).code === 'ERR_SIGHTFLOW_IMAGE_FAILED' && /roi 0 has no area/.test((e as Error).message),
  );
});

test('track: bad options and update() arrays', () => {
  const code = 'ERR_SIGHTFLOW_TRACK_INVALID_ARG';
  expectError(
    () => new Tracker({ maxAge: -1 }),
    RangeError,
    code,
    'Expected integer between 0 and 100000 for maxAge but received -1',
  );
  expectError(
    () => new Tracker({ iouThreshold: '0.3' }),
    TypeError,
    code,
    'Expected number between 0.01 and 1 for iouThreshold but received "0.3"',
  );
  expectError(() => new Tracker({ byte: 1 }), TypeError, code, 'Expected boolean for byte but received 1');
  expectError(
    () => new Tracker({ highThresh: 0.3, lowThresh: 0.5 }),
    RangeError,
    code,
    'Expected number between 0 and 0.3 for lowThresh but received 0.5',
  );
  expectError(() => new Tracker([]), TypeError, code, 'Expected object for options but received an array of 0');
  const t = new Tracker();
  expectError(
    () => t.update(new Float32Array(4), new Float32Array(2), new Int32Array(2)),
    RangeError,
    code,
    'Expected Float32Array of 8 values (4 per score) for boxes but received Float32Array(4)',
  );
  expectError(
    () => t.update(new Float32Array(8), new Float32Array(2), new Float32Array(2)),
    TypeError,
    code,
    'Expected Int32Array of 2 values (one per score) for classes but received Float32Array(2)',
  );
  expectError(() => t.update(), TypeError, code, 'Expected Float32Array for scores but received undefined');
  assert.ok(t.update(new Float32Array(0), new Float32Array(0), new Int32Array(0)) instanceof Int32Array);
});

test('vectors: bad settings and arguments; a failing file is VECTORS_FAILED', () => {
  const code = 'ERR_SIGHTFLOW_VECTORS_INVALID_ARG';
  expectError(() => new VectorIndex(), TypeError, code, 'Expected object for settings but received undefined');
  expectError(
    () => new VectorIndex({}),
    TypeError,
    code,
    'Expected integer between 1 and 1000000 for dimensions but received undefined',
  );
  expectError(
    () => new VectorIndex({ dimensions: 4, connectivity: 0 }),
    RangeError,
    code,
    'Expected integer between 1 and 1000000 for connectivity but received 0',
  );
  const index = new VectorIndex({ dimensions: 4 });
  expectError(
    () => index.load(''),
    RangeError,
    code,
    'Expected string of at least 1 character for path but received ""',
  );
  expectError(
    () => index.search(new Float32Array(4), 2, 'deep'),
    TypeError,
    code,
    'Expected integer between 0 and 1000000 for expansion but received "deep"',
  );
  assert.throws(
    () => index.load('/nonexistent/index.usearch'),
    (e: unknown) =>
      (e as { code?: string }).code === 'ERR_SIGHTFLOW_VECTORS_FAILED' && /cannot open/.test((e as Error).message),
  );
});
