import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import https from 'node:https';
import { lookup } from 'node:dns/promises';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { ApiError, type ErrorBody } from '../../src/base/errors.js';
import { loadImage, parseImageInput, type ImageInput, type LoadImageOptions } from '../../src/media/image-input.js';
import { blockedAddressReason } from '../../src/media/url-policy.js';
import { decodeJpeg } from '../../src/native/image.js';
import { PixelPool } from '../../src/media/pixel-pool.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { stablePort } from '../helpers/ports.js';

const MiB = 1024 * 1024;

// ---- fixtures: real images made with sharp, plus hand-built files sharp cannot write ----

/** 8x6: left half red, right half blue, so orientation and pixel order are visible. */
async function twoTone(format: 'jpeg' | 'png' | 'webp', width = 8, height = 6): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) raw.set(x < width / 2 ? [255, 0, 0] : [0, 0, 255], (y * width + x) * 3);
  const img = sharp(raw, { raw: { width, height, channels: 3 } });
  if (format === 'jpeg') return img.jpeg({ quality: 95, chromaSubsampling: '4:4:4' }).toBuffer();
  if (format === 'webp') return img.webp({ lossless: true }).toBuffer();
  return img.png().toBuffer();
}

function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([len, body, crc]);
}

/** A genuine 20000x20000 1-bit greyscale PNG: ~50 KB on disk, 400 megapixels decoded. */
function decompressionBomb(): Buffer {
  const side = 20000;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // greyscale
  const rows = Buffer.alloc((1 + side / 8) * side); // filter byte + packed bits per row, all zero
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    sig,
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', zlib.deflateSync(rows, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A 2x2 24-bit BMP (sharp reads but cannot write BMP). */
function bmp(): Buffer {
  const rowSize = 8; // 2 px * 3 bytes, padded to 4
  const pixels = Buffer.alloc(rowSize * 2, 0x80);
  const header = Buffer.alloc(54);
  header.write('BM', 0, 'latin1');
  header.writeUInt32LE(54 + pixels.length, 2);
  header.writeUInt32LE(54, 10);
  header.writeUInt32LE(40, 14);
  header.writeInt32LE(2, 18);
  header.writeInt32LE(2, 22);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(24, 28);
  header.writeUInt32LE(pixels.length, 34);
  return Buffer.concat([header, pixels]);
}

const body = (e: unknown): ErrorBody => {
  assert.ok(e instanceof ApiError, `expected an ApiError, got ${String(e)}`);
  return e.toBody();
};

async function rejectsWith(p: Promise<unknown> | (() => unknown), status: number, expected: ErrorBody['error']) {
  let caught: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    caught = e;
  }
  assert.ok(caught !== undefined, 'expected a rejection');
  assert.deepEqual(body(caught), { error: expected });
  assert.equal((caught as ApiError).status, status);
}

const b64 = (bytes: Buffer) => ({ kind: 'base64', bytes, param: 'image_base64' }) as ImageInput;
const parsed = (image: string) => parseImageInput({ image });
const noPrivate: LoadImageOptions = { allowPrivate: false };
const testOnly: LoadImageOptions = { allowPrivate: true };

/** Mean absolute distance between two RGB colours. */
const dist = (data: Buffer, offset: number, rgb: number[]) =>
  rgb.reduce((s, v, i) => s + Math.abs(data[offset + i] - v), 0) / 3;

// ---- a real HTTP server on 127.0.0.1 ----

type Route = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const routes = new Map<string, Route>();
const hits: string[] = [];
let server: http.Server;
let base: string;
let port: number;
const files: Record<string, Buffer> = {};

before(async () => {
  files.jpeg = await twoTone('jpeg');
  files.png = await twoTone('png');
  files.webp = await twoTone('webp');
  server = http.createServer((req, res) => {
    hits.push(req.url ?? '');
    const route = routes.get(new URL(req.url ?? '/', 'http://x').pathname);
    if (route) return route(req, res);
    res.writeHead(404).end('nope');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  for (const f of ['jpeg', 'png', 'webp'])
    routes.set(`/img.${f}`, (_q, res) => res.writeHead(200, { 'content-type': `image/${f}` }).end(files[f]));
  // redirect chains: /hop/<n> -> /hop/<n-1> ... -> /img.png
  for (let n = 1; n <= 5; n++)
    routes.set(`/hop/${n}`, (_q, res) =>
      res.writeHead(302, { location: n === 1 ? '/img.png' : `/hop/${n - 1}` }).end(),
    );
  routes.set('/to-metadata', (_q, res) =>
    res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
  );
  routes.set('/to-mapped-private', (_q, res) =>
    res.writeHead(307, { location: 'http://[::ffff:10.0.0.1]/x.png' }).end(),
  );
  routes.set('/to-localhost', (_q, res) => res.writeHead(301, { location: `http://localhost:${port}/img.png` }).end());
  routes.set('/to-ftp', (_q, res) => res.writeHead(302, { location: 'ftp://example.com/a.png' }).end());
  routes.set('/hang', () => {}); // never answers
  routes.set('/big-declared', (_q, res) => {
    res.writeHead(200, { 'content-length': String(21 * MiB) });
    res.end(Buffer.alloc(21 * MiB));
  });
  routes.set('/big-chunked', (_q, res) => {
    // No Content-Length: the cap must trip while streaming. Stop writing once the client goes away.
    res.writeHead(200, { 'content-type': 'image/png' });
    const chunk = Buffer.alloc(MiB, 1);
    let sent = 0;
    const pump = () => {
      while (sent < 21 && !res.destroyed) {
        sent++;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!res.destroyed) res.end();
    };
    res.on('close', () => {
      sent = 99;
    });
    pump();
  });
  routes.set('/cut-short', (_q, res) => {
    res.writeHead(200, { 'content-length': '1000' });
    res.write(files.png.subarray(0, 20));
    setTimeout(() => res.destroy(), 20);
  });
});

after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

// ---- parsing ----

test('exactly one of image and image_base64', () => {
  assert.throws(
    () => parseImageInput({ image: 'http://a/b.png', image_base64: 'AAAA' }),
    (e) => {
      assert.deepEqual(body(e), {
        error: {
          type: 'invalid_request_error',
          code: 'invalid_image_input',
          message: 'Expected exactly one of image, image_base64 but received both',
          param: 'image_base64',
        },
      });
      return (e as ApiError).status === 400;
    },
  );
  assert.throws(
    () => parseImageInput({}),
    (e) => {
      assert.deepEqual(body(e), {
        error: {
          type: 'invalid_request_error',
          code: 'invalid_image_input',
          message: 'Expected exactly one of image, image_base64 but received neither',
          param: 'image',
        },
      });
      return (e as ApiError).status === 400;
    },
  );
  assert.throws(() => parseImageInput({ image: null, image_base64: undefined }), /neither/);
});

test('bad base64 is invalid_base64', async () => {
  const expected = {
    type: 'invalid_request_error',
    code: 'invalid_base64',
    message: 'Expected image_base64 to be a data URI or base64 string but it could not be decoded',
    param: 'image_base64',
  } as const;
  for (const bad of [
    'not base64!!',
    'data:image/png,iVBORw0K',
    'data:image/png;base64,@@@@',
    'QUJDRA=A',
    'QUJDRA===',
    '=QUJDRA=',
    'QUJDR',
    '',
    42,
    'QUJD+Q_-',
  ]) {
    await rejectsWith(() => parseImageInput({ image_base64: bad }), 400, expected);
  }
});

test('base64 accepted as data URI, bare, URL-safe and line-wrapped', () => {
  const bytes = Buffer.from([0xfb, 0xff, 0xfe, 1, 2, 3, 4]);
  const std = bytes.toString('base64');
  for (const s of [
    std,
    `data:image/png;base64,${std}`,
    `DATA:image/png;charset=x;base64,${std}`,
    bytes.toString('base64url'),
    `${std.slice(0, 4)}\r\n${std.slice(4)}`,
    std.replace(/=+$/, ''),
  ]) {
    const input = parseImageInput({ image_base64: s });
    assert.equal(input.kind, 'base64');
    assert.deepEqual(input.kind === 'base64' && input.bytes, bytes, s);
  }
});

test('image must be an http(s) URL', async () => {
  const cases: Array<[unknown, string]> = [
    ['ftp://example.com/a.png', 'the scheme ftp is not supported'],
    ['not a url', 'it is not a valid absolute URL'],
    [42, 'received number'],
    ['file:///etc/passwd', 'the scheme file is not supported'],
    ['data:image/png;base64,iVBORw0K', 'a data URI belongs in image_base64'],
  ];
  for (const [image, detail] of cases)
    await rejectsWith(() => parseImageInput({ image }), 400, {
      type: 'invalid_request_error',
      code: 'invalid_image_url',
      message: `Expected image to be an http(s) URL: ${detail}`,
      param: 'image',
    });
});

test('nested params name the field in errors', async () => {
  await rejectsWith(
    () =>
      parseImageInput({ image_base64: '!' }, { params: { url: 'items[2].image', base64: 'items[2].image_base64' } }),
    400,
    {
      type: 'invalid_request_error',
      code: 'invalid_base64',
      message: 'Expected items[2].image_base64 to be a data URI or base64 string but it could not be decoded',
      param: 'items[2].image_base64',
    },
  );
});

test('a 21 MiB base64 image is 413 before decoding', async () => {
  const big = Buffer.alloc(21 * MiB).toString('base64');
  await rejectsWith(() => parseImageInput({ image_base64: big }), 413, {
    type: 'invalid_request_error',
    code: 'payload_too_large',
    message: `The image is larger than the limit of ${20 * MiB} bytes`,
    param: null,
  });
  await rejectsWith(loadImage(b64(Buffer.alloc(21 * MiB))), 413, {
    type: 'invalid_request_error',
    code: 'payload_too_large',
    message: `The image is larger than the limit of ${20 * MiB} bytes`,
    param: null,
  });
});

// ---- format and decoding ----

test('GIF and BMP are unsupported_image_format', async () => {
  const gif = await sharp({ create: { width: 4, height: 4, channels: 3, background: 'green' } })
    .gif()
    .toBuffer();
  await rejectsWith(
    loadImage(parseImageInput({ image_base64: `data:image/png;base64,${gif.toString('base64')}` })),
    400,
    {
      type: 'invalid_request_error',
      code: 'unsupported_image_format',
      message: 'Expected a JPEG, PNG or WEBP image but received gif',
      param: 'image_base64',
    },
  );
  await rejectsWith(loadImage(b64(bmp())), 400, {
    type: 'invalid_request_error',
    code: 'unsupported_image_format',
    message: 'Expected a JPEG, PNG or WEBP image but received bmp',
    param: 'image_base64',
  });
  await rejectsWith(loadImage(b64(Buffer.from('hello world'))), 400, {
    type: 'invalid_request_error',
    code: 'unsupported_image_format',
    message: 'Expected a JPEG, PNG or WEBP image but received an unrecognised format',
    param: 'image_base64',
  });
});

test('truncated JPEG and PNG are invalid_image, not silently grey', async () => {
  const jpeg = await sharp({
    create: {
      width: 200,
      height: 150,
      channels: 3,
      background: 'black',
      noise: { type: 'gaussian', mean: 128, sigma: 30 },
    },
  })
    .jpeg()
    .toBuffer();
  await rejectsWith(loadImage(b64(jpeg.subarray(0, jpeg.length >> 1))), 400, {
    type: 'invalid_request_error',
    code: 'invalid_image',
    message: 'The image could not be decoded: jpeg: premature end of JPEG image',
    param: 'image_base64',
  });
  const png = await sharp({
    create: {
      width: 200,
      height: 150,
      channels: 3,
      background: 'black',
      noise: { type: 'gaussian', mean: 128, sigma: 30 },
    },
  })
    .png()
    .toBuffer();
  await rejectsWith(loadImage(b64(png.subarray(0, png.length >> 1))), 400, {
    type: 'invalid_request_error',
    code: 'invalid_image',
    message: 'The image could not be decoded: png: libpng read error',
    param: 'image_base64',
  });
});

test('20000x20000 PNG decompression bomb is image_too_large with its real pixel count', async () => {
  const bomb = decompressionBomb();
  assert.ok(bomb.length < 200_000, `bomb is ${bomb.length} bytes`);
  await rejectsWith(loadImage(b64(bomb)), 400, {
    type: 'invalid_request_error',
    code: 'image_too_large',
    message: 'Expected at most 50000000 pixels but the image has 400000000',
    param: 'image_base64',
  });
  await rejectsWith(loadImage(b64(files.png), { maxPixels: 40 }), 400, {
    type: 'invalid_request_error',
    code: 'image_too_large',
    message: 'Expected at most 40 pixels but the image has 48',
    param: 'image_base64',
  });
});

test('valid JPEG, PNG and WEBP by base64 decode to the right size and pixels', async () => {
  for (const format of ['jpeg', 'png', 'webp'] as const) {
    const img = await loadImage(
      parseImageInput({ image_base64: `data:image/${format};base64,${files[format].toString('base64')}` }),
    );
    assert.equal(img.format, format);
    assert.deepEqual([img.width, img.height, img.channels, img.data.length], [8, 6, 3, 8 * 6 * 3]);
    assert.deepEqual(img.bytes, files[format]);
    const tolerance = format === 'jpeg' ? 12 : 0;
    assert.ok(dist(img.data, 0, [255, 0, 0]) <= tolerance, `${format} top-left is red`);
    assert.ok(dist(img.data, (5 * 8 + 7) * 3, [0, 0, 255]) <= tolerance, `${format} bottom-right is blue`);
  }
});

test('EXIF orientation 6 is applied', async () => {
  // Stored 8 wide x 6 high, red left / blue right; orientation 6 = rotate 90 degrees clockwise to display.
  const jpeg = await sharp(await twoTone('png'))
    .jpeg({ quality: 95, chromaSubsampling: '4:4:4' })
    .withMetadata({ orientation: 6 })
    .toBuffer();
  const img = await loadImage(b64(jpeg));
  assert.deepEqual([img.width, img.height], [6, 8]);
  assert.ok(dist(img.data, 0, [255, 0, 0]) <= 12, 'top row was the left column: red');
  assert.ok(dist(img.data, (7 * 6 + 5) * 3, [0, 0, 255]) <= 12, 'bottom row was the right column: blue');
});

test('alpha is flattened on white; greyscale becomes RGB', async () => {
  const rgba = await sharp({ create: { width: 2, height: 2, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } })
    .png()
    .toBuffer();
  const img = await loadImage(b64(rgba));
  assert.deepEqual([...img.data], new Array(12).fill(255));
  const grey = await sharp({ create: { width: 2, height: 1, channels: 3, background: { r: 77, g: 77, b: 77 } } })
    .toColourspace('b-w')
    .png()
    .toBuffer();
  const g = await loadImage(b64(grey));
  assert.deepEqual([g.channels, g.data.length], [3, 6]);
  assert.deepEqual([...g.data], [77, 77, 77, 77, 77, 77]);
});

/** sharp's own decode of the same bytes (rotated, colour-managed): what loadImage must match. */
async function sharpPixels(bytes: Buffer): Promise<Buffer> {
  return sharp(bytes).rotate().flatten({ background: '#ffffff' }).toColourspace('srgb').raw().toBuffer();
}

/** A 96x64 photo-like gradient: enough texture that two decoders would show any difference. */
async function gradientJpeg(
  opts: { progressive?: boolean; icc?: string; grey?: boolean; cmyk?: boolean } = {},
): Promise<Buffer> {
  const width = 96,
    height = 64;
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < width * height; i++) raw.set([(i * 7) & 255, (i >> 3) & 255, (i * 13 + 40) & 255], i * 3);
  let img = sharp(raw, { raw: { width, height, channels: 3 } });
  if (opts.grey) img = img.toColourspace('b-w');
  if (opts.cmyk) img = img.toColourspace('cmyk');
  if (opts.icc) img = img.withIccProfile(opts.icc);
  return img.jpeg({ quality: 90, progressive: opts.progressive ?? false }).toBuffer();
}

test('plain JPEGs decode natively with the pixels sharp gives; profiled and CMYK ones go through sharp', async () => {
  for (const opts of [{}, { progressive: true }, { grey: true }, { icc: 'srgb' }]) {
    const bytes = await gradientJpeg(opts);
    const native = await decodeJpeg(bytes, 1e6);
    assert.ok(native, `${JSON.stringify(opts)}: the native decoder takes it`);
    const expected = await sharpPixels(bytes);
    assert.ok(native.data.equals(expected), `${JSON.stringify(opts)}: native pixels equal sharp's`);
    assert.ok((await loadImage(b64(bytes))).data.equals(expected), `${JSON.stringify(opts)}: loadImage gives the same`);
  }
  // A Display P3 profile must be applied: loadImage follows sharp, not the unmanaged pixels.
  const p3 = await gradientJpeg({ icc: 'p3' });
  const managed = await sharpPixels(p3);
  const unmanaged = (await decodeJpeg(p3, 1e6))!.data;
  assert.ok(!managed.equals(unmanaged), 'the profile changes pixels');
  assert.ok((await loadImage(b64(p3))).data.equals(managed), 'P3 goes through colour management');
  // CMYK: the native decoder declines it; loadImage still gives RGB.
  const cmyk = await gradientJpeg({ cmyk: true });
  assert.equal(await decodeJpeg(cmyk, 1e6), null);
  const rgb = await loadImage(b64(cmyk));
  assert.deepEqual([rgb.channels, rgb.data.length], [3, 96 * 64 * 3]);
  // The native decoder's own limits, below loadImage's header check.
  await assert.rejects(decodeJpeg(await gradientJpeg(), 96 * 64 - 1), {
    code: 'ERR_SIGHTFLOW_IMAGE_FAILED',
    message: 'image of 6144 pixels is over the limit of 6143',
  });
  await assert.rejects(decodeJpeg(Buffer.from('not a jpeg'), 1e6), { code: 'ERR_SIGHTFLOW_IMAGE_FAILED' });
  await assert.rejects(decodeJpeg(Buffer.alloc(0), 1e6), ApiError);
});

test('a JPEG decodes into memory it is given when that holds the image, else into its own', async () => {
  const bytes = await gradientJpeg();
  const expected = await sharpPixels(bytes);
  const big = Buffer.alloc(96 * 64 * 3 + 100, 7);
  const into = (await decodeJpeg(bytes, 1e6, big))!;
  assert.equal(into.data.buffer, big.buffer, 'written where it was asked');
  assert.equal(into.data.length, 96 * 64 * 3);
  assert.ok(into.data.equals(expected));
  assert.equal(big[96 * 64 * 3], 7, 'nothing past the image is touched');
  const small = Buffer.alloc(100);
  const own = (await decodeJpeg(bytes, 1e6, small))!;
  assert.notEqual(own.data.buffer, small.buffer, 'too small: the decoder takes memory of its own');
  assert.ok(own.data.equals(expected));
  await assert.rejects(decodeJpeg(bytes.subarray(0, bytes.length / 2), 1e6, big), {
    code: 'ERR_SIGHTFLOW_IMAGE_FAILED',
    message: /premature end/,
  });
  await assert.rejects(decodeJpeg(bytes, 1e6, Buffer.alloc(0)), ApiError);
  await assert.rejects(decodeJpeg(bytes, 1e6, 'memory' as never), ApiError);
});

test('loadImage with a pool: pixels in pooled memory, given back once, reused; failures give it back', async () => {
  const pool = new PixelPool(1 << 20, 4 << 20);
  const bytes = await gradientJpeg();
  const expected = await sharpPixels(bytes);
  const a = await loadImage(b64(bytes), { pixels: pool });
  assert.ok(a.data.equals(expected));
  assert.equal(typeof a.release, 'function');
  assert.deepEqual(pool.idle, { buffers: 0, bytes: 0 }, 'lent out while the image is in use');
  a.release!();
  a.release!();
  assert.deepEqual(pool.idle, { buffers: 1, bytes: 96 * 64 * 3 });
  const b = await loadImage(b64(bytes), { pixels: pool });
  assert.equal(b.data.buffer, a.data.buffer, 'the next image reuses the memory');
  b.release!();
  // What the native decoder does not take (CMYK, a profile to apply, PNG) gets memory of its own, and the pool
  // keeps what it lent for it; so does a corrupt JPEG, which is still the documented 400.
  for (const other of [await gradientJpeg({ cmyk: true }), await gradientJpeg({ icc: 'p3' }), await twoTone('png')]) {
    const img = await loadImage(b64(other), { pixels: pool });
    assert.equal(img.release, undefined);
    assert.deepEqual(pool.idle, { buffers: 1, bytes: 96 * 64 * 3 });
  }
  const cut = bytes.subarray(0, bytes.length - 200);
  await assert.rejects(
    loadImage(b64(cut), { pixels: pool }),
    (e: ApiError) => e.status === 400 && e.code === 'invalid_image',
  );
  assert.deepEqual(pool.idle, { buffers: 1, bytes: 96 * 64 * 3 });
});

test('every COCO photo loads to exactly the pixels sharp gives (plain, sRGB-profiled and Adobe/Apple-profiled alike)', {
  skip: cocoSkip,
}, async () => {
  const dir = join(cocoDir(), 'images');
  const files = readdirSync(dir).filter((f) => f.endsWith('.jpg'));
  assert.ok(files.length >= 60, `found ${files.length} photos`);
  let native = 0;
  for (const f of files) {
    const bytes = readFileSync(join(dir, f));
    const expected = await sharpPixels(bytes);
    assert.ok((await loadImage(b64(bytes))).data.equals(expected), f);
    const n = await decodeJpeg(bytes, 1e8);
    if (n?.data.equals(expected)) native++;
  }
  assert.ok(
    native >= 40,
    `the native decoder alone matches on ${native} of ${files.length}: most photos take the fast path`,
  );
});

// ---- URL fetch ----

test('valid JPEG, PNG and WEBP by URL', async () => {
  for (const format of ['jpeg', 'png', 'webp'] as const) {
    const img = await loadImage(parsed(`${base}/img.${format}`), testOnly);
    assert.equal(img.format, format);
    assert.deepEqual([img.width, img.height], [8, 6]);
    assert.deepEqual(img.bytes, files[format]);
    assert.ok(dist(img.data, 0, [255, 0, 0]) <= (format === 'jpeg' ? 12 : 0));
  }
});

test('URL answering 404 is image_fetch_failed with the upstream status', async () => {
  await rejectsWith(loadImage(parsed(`${base}/missing.png`), testOnly), 400, {
    type: 'invalid_request_error',
    code: 'image_fetch_failed',
    message: 'The image URL could not be fetched: upstream answered 404',
    param: 'image',
  });
});

test('unreachable URL (closed port) is image_fetch_failed', async () => {
  // Below the ephemeral range: no test's listen(0) can open it meanwhile, nor can our own connection's local
  // port be this one (a socket connected to itself).
  const closed = await stablePort();
  await rejectsWith(loadImage(parsed(`http://127.0.0.1:${closed}/a.png`), testOnly), 400, {
    type: 'invalid_request_error',
    code: 'image_fetch_failed',
    message: `The image URL could not be fetched: connection refused by 127.0.0.1:${closed}`,
    param: 'image',
  });
});

test('unresolvable host is image_fetch_failed', async () => {
  await rejectsWith(loadImage(parsed('http://no-such-host.invalid/a.png'), testOnly), 400, {
    type: 'invalid_request_error',
    code: 'image_fetch_failed',
    message: 'The image URL could not be fetched: could not resolve host no-such-host.invalid',
    param: 'image',
  });
});

// Self-signed for 127.0.0.1, valid until 2126; made with openssl req -x509 -newkey ec. Only used to fail verification.
const SELF_SIGNED_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgUMbQ0qfigdcQ5+nH
uJCg8qqXXQtGBBZccIu9JFG+twShRANCAAS3O9xatK0ra3lYJdYGRYmRIRCL0P58
zVXXAL0ByGUjSbJ2MtqRCNs1qwlpU6il4UaCch5RDrcvXgqLJjkjMXB6
-----END PRIVATE KEY-----`;
const SELF_SIGNED_CERT = `-----BEGIN CERTIFICATE-----
MIIBkDCCATagAwIBAgIUdGRdzSveG0O3Dgj9yJlmYb0zFk8wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJMTI3LjAuMC4xMCAXDTI2MTEyMTA2MDkwNFoYDzIxMjYxMDI4
MDYwOTA0WjAUMRIwEAYDVQQDDAkxMjcuMC4wLjEwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAS3O9xatK0ra3lYJdYGRYmRIRCL0P58zVXXAL0ByGUjSbJ2MtqRCNs1
qwlpU6il4UaCch5RDrcvXgqLJjkjMXB6o2QwYjAdBgNVHQ4EFgQUSQeQo3nxd2Ok
g7NiA8OYPbI269EwHwYDVR0jBBgwFoAUSQeQo3nxd2Okg7NiA8OYPbI269EwDwYD
VR0TAQH/BAUwAwEB/zAPBgNVHREECDAGhwR/AAABMAoGCCqGSM49BAMCA0gAMEUC
IBlALMSg7cQQS2oZ3NQJjvH8RIlUDflT5Heq1EhpcvJBAiEA1NmBaTVM8k+iVQO5
QZL8gHi/qwK4tO2UuPGzO/48aVQ=
-----END CERTIFICATE-----`;

test('an https URL whose certificate does not verify is image_fetch_failed', async () => {
  const tls = https.createServer({ key: SELF_SIGNED_KEY, cert: SELF_SIGNED_CERT }, (_q, res) => res.end(files.png));
  await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
  const tlsPort = (tls.address() as AddressInfo).port;
  try {
    await rejectsWith(loadImage(parsed(`https://127.0.0.1:${tlsPort}/img.png`), testOnly), 400, {
      type: 'invalid_request_error',
      code: 'image_fetch_failed',
      message: `The image URL could not be fetched: TLS handshake with 127.0.0.1:${tlsPort} failed (DEPTH_ZERO_SELF_SIGNED_CERT)`,
      param: 'image',
    });
  } finally {
    tls.closeAllConnections();
    await new Promise((r) => tls.close(r));
  }
});

test('loopback URL without the flag is url_not_allowed and never contacted', async () => {
  const before = hits.length;
  const refused = (detail: string) =>
    ({
      type: 'invalid_request_error',
      code: 'url_not_allowed',
      message: `The URL points to a private, loopback or link-local address, which is not allowed: ${detail}`,
      param: 'image',
    }) as const;
  await rejectsWith(loadImage(parsed(`${base}/img.png`), noPrivate), 400, refused('127.0.0.1 is loopback'));
  await rejectsWith(
    loadImage(parsed(`http://[::ffff:127.0.0.1]:${port}/img.png`), noPrivate),
    400,
    refused('::ffff:7f00:1 is IPv4-mapped loopback'),
  );
  await rejectsWith(
    loadImage(parsed(`http://2130706433:${port}/img.png`), noPrivate),
    400,
    refused('127.0.0.1 is loopback'),
  );
  await rejectsWith(
    loadImage(parsed('http://169.254.169.254/latest/meta-data/'), noPrivate),
    400,
    refused('169.254.169.254 is link-local / metadata'),
  );
  // A hostname is checked on the address DNS gives for it.
  const first = (await lookup('localhost', { all: true, verbatim: true }))[0].address;
  await rejectsWith(
    loadImage(parsed(`http://localhost:${port}/img.png`), noPrivate),
    400,
    refused(`localhost resolves to ${first} (${blockedAddressReason(first)})`),
  );
  assert.equal(hits.length, before, 'the server saw no request');
});

test('without an explicit policy private addresses are refused; the caller passes its policy', async () => {
  await assert.rejects(loadImage(parsed(`${base}/img.png`)), (e) => body(e).error.code === 'url_not_allowed');
  assert.equal((await loadImage(parsed(`${base}/img.png`), { allowPrivate: true })).width, 8);
});

test('a redirect to a private address is refused on the redirect hop', async () => {
  // The test server stands in for a public host: only its exact address is allowed, every other private
  // address keeps the default refusal, so the redirect target is judged exactly as in production.
  const publicish: LoadImageOptions = { allowPrivate: false, allowAddresses: ['127.0.0.1'] };
  const refused = (detail: string) =>
    ({
      type: 'invalid_request_error',
      code: 'url_not_allowed',
      message: `The URL points to a private, loopback or link-local address, which is not allowed: ${detail}`,
      param: 'image',
    }) as const;
  assert.equal((await loadImage(parsed(`${base}/hop/1`), publicish)).width, 8, 'the allowed host itself works');
  await rejectsWith(
    loadImage(parsed(`${base}/to-metadata`), publicish),
    400,
    refused('169.254.169.254 is link-local / metadata'),
  );
  await rejectsWith(
    loadImage(parsed(`${base}/to-mapped-private`), publicish),
    400,
    refused('::ffff:a00:1 is IPv4-mapped private'),
  );
  await rejectsWith(loadImage(parsed(`${base}/to-ftp`), publicish), 400, {
    type: 'invalid_request_error',
    code: 'image_fetch_failed',
    message: 'The image URL could not be fetched: upstream redirected to an unsupported ftp URL',
    param: 'image',
  });
});

test('a redirect to a hostname that resolves to loopback is refused after DNS', async (t) => {
  // 127.0.0.2 plays the public host; the redirect names "localhost", which only DNS reveals as loopback.
  const publicHost = http.createServer((_q, res) =>
    res.writeHead(302, { location: `http://localhost:${port}/img.png` }).end(),
  );
  try {
    await new Promise<void>((r, j) => publicHost.once('error', j).listen(0, '127.0.0.2', r));
  } catch {
    return t.skip('cannot bind 127.0.0.2 on this machine');
  }
  try {
    const publicPort = (publicHost.address() as AddressInfo).port;
    const first = (await lookup('localhost', { all: true, verbatim: true }))[0].address;
    const seen = hits.length;
    await rejectsWith(
      loadImage(parsed(`http://127.0.0.2:${publicPort}/`), { allowPrivate: false, allowAddresses: ['127.0.0.2'] }),
      400,
      {
        type: 'invalid_request_error',
        code: 'url_not_allowed',
        message: `The URL points to a private, loopback or link-local address, which is not allowed: localhost resolves to ${first} (${blockedAddressReason(first)})`,
        param: 'image',
      },
    );
    assert.equal(hits.length, seen, 'the loopback server saw no request');
  } finally {
    await new Promise((r) => publicHost.close(r));
  }
});

test('with allowPrivate a redirect from 127.0.0.1 to localhost is followed', async () => {
  const img = await loadImage(parsed(`${base}/to-localhost`), testOnly);
  assert.deepEqual([img.format, img.width, img.height], ['png', 8, 6]);
});

test('at most 3 redirects', async () => {
  assert.equal((await loadImage(parsed(`${base}/hop/3`), testOnly)).width, 8);
  await rejectsWith(loadImage(parsed(`${base}/hop/4`), testOnly), 400, {
    type: 'invalid_request_error',
    code: 'image_fetch_failed',
    message: 'The image URL could not be fetched: more than 3 redirects',
    param: 'image',
  });
});

test('a 21 MiB download is 413, declared or streamed', async () => {
  const expected = {
    type: 'invalid_request_error',
    code: 'payload_too_large',
    message: `The image is larger than the limit of ${20 * MiB} bytes`,
    param: null,
  } as const;
  await rejectsWith(loadImage(parsed(`${base}/big-declared`), testOnly), 413, expected);
  await rejectsWith(loadImage(parsed(`${base}/big-chunked`), testOnly), 413, expected);
});

test('a body cut short is image_fetch_failed', async () => {
  await rejectsWith(loadImage(parsed(`${base}/cut-short`), testOnly), 400, {
    type: 'invalid_request_error',
    code: 'image_fetch_failed',
    message: `The image URL could not be fetched: 127.0.0.1:${port} closed the connection before the body was complete`,
    param: 'image',
  });
});

test('a server that never answers times out', async () => {
  await rejectsWith(loadImage(parsed(`${base}/hang`), { ...testOnly, timeoutMs: 300 }), 400, {
    type: 'invalid_request_error',
    code: 'image_fetch_failed',
    message: 'The image URL could not be fetched: no complete answer within 300 ms',
    param: 'image',
  });
});

test('an aborted signal stops the fetch with its reason', async () => {
  const ac = new AbortController();
  const reason = new Error('client went away');
  setTimeout(() => ac.abort(reason), 100);
  await assert.rejects(loadImage(parsed(`${base}/hang`), { ...testOnly, signal: ac.signal }), (e) => e === reason);
});

test('address classification', () => {
  const table: Array<[string, string | null]> = [
    ['8.8.8.8', null],
    ['2606:4700::1111', null],
    ['100.128.0.1', null],
    ['172.32.0.1', null],
    ['::ffff:8.8.8.8', null],
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local / metadata'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'this-network'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['::1', 'loopback'],
    ['::', 'unspecified'],
    ['fd00::1', 'unique local (private)'],
    ['fc00::1', 'unique local (private)'],
    ['fe80::1%eth0', 'link-local'],
    ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:a9fe:a9fe', 'IPv4-mapped link-local / metadata'],
    ['64:ff9b::a00:1', 'NAT64 private'],
    ['2002:c0a8:101::1', '6to4 private'],
    ['localhost', 'not an IP address'],
  ];
  for (const [addr, reason] of table) assert.equal(blockedAddressReason(addr), reason, addr);
});
