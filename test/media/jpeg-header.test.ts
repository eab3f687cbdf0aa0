// The JPEG header reader against sharp's metadata: the same size, components, orientation and profile verdict
// on every COCO photo and on made variants (grey, progressive, CMYK, EXIF-rotated, sRGB and P3 profiles);
// null (sharp decides) for what it does not follow; never a throw on cut or mutated headers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp, { type Metadata } from 'sharp';
import { isPlainJpeg, readJpegHeader, type JpegHeader } from '../../src/media/jpeg-header.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { exifOrientation, insertSegment } from '../helpers/exif.js';

function sharpVerdict(
  m: Metadata,
): Pick<JpegHeader, 'width' | 'height' | 'orientation' | 'icc'> & { components: number } {
  const icc = m.icc;
  return {
    width: m.width!,
    height: m.height!,
    components: m.channels!,
    orientation: m.orientation ?? 1,
    icc: !icc
      ? 'none'
      : icc.length >= 56 && icc.toString('latin1', 48, 52) === 'IEC ' && icc.toString('latin1', 52, 56) === 'sRGB'
        ? 'srgb'
        : 'other',
  };
}

async function agrees(bytes: Buffer, what: string): Promise<JpegHeader | null> {
  const h = readJpegHeader(bytes);
  if (h) assert.deepEqual({ ...h }, sharpVerdict(await sharp(bytes).metadata()), what);
  return h;
}

async function made(
  opts: { grey?: boolean; progressive?: boolean; cmyk?: boolean; icc?: string; orientation?: number } = {},
): Promise<Buffer> {
  const width = 40,
    height = 24;
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 37) & 255;
  let img = sharp(raw, { raw: { width, height, channels: 3 } });
  if (opts.grey) img = img.toColourspace('b-w');
  if (opts.cmyk) img = img.toColourspace('cmyk');
  if (opts.icc) img = img.withIccProfile(opts.icc);
  if (opts.orientation) img = img.withMetadata({ orientation: opts.orientation });
  return img.jpeg({ quality: 90, progressive: opts.progressive ?? false }).toBuffer();
}

test('made variants: read as sharp reads them, and plain exactly where no profile applies', async () => {
  const cases: Array<[string, Parameters<typeof made>[0], boolean]> = [
    ['baseline', {}, true],
    ['progressive', { progressive: true }, true],
    ['grey', { grey: true }, true],
    // libvips' own sRGB profile is not the IEC61966-2.1 one by its header: sharp applies it (COCO's photos
    // carry the IEC one; the next test sees those read as plain).
    ['libvips sRGB profile', { icc: 'srgb' }, false],
    ['P3 profile', { icc: 'p3' }, false],
    ['CMYK', { cmyk: true }, false],
    // sharp writes its own sRGB profile with the EXIF block: not plain for the profile (a bare EXIF block is, below).
    ['EXIF orientation 6', { orientation: 6 }, false],
  ];
  for (const [what, opts, plain] of cases) {
    const h = await agrees(await made(opts), what);
    assert.ok(h, `${what}: read`);
    assert.equal(isPlainJpeg(h), plain, what);
  }
});

test('every COCO photo: the same size and verdict as sharp, and nearly all read without it', {
  skip: cocoSkip,
}, async () => {
  const dir = join(cocoDir(), 'images');
  const files = readdirSync(dir).filter((f) => f.endsWith('.jpg'));
  let read = 0,
    srgb = 0;
  for (const f of files) {
    const h = await agrees(readFileSync(join(dir, f)), f);
    if (h) read++;
    if (h?.icc === 'srgb') srgb++;
  }
  assert.ok(read >= files.length - 2, `read ${read} of ${files.length}`);
  assert.ok(srgb > 0, 'photos with the IEC sRGB profile are among them');
});

/** A JPEG with `segment` (marker, payload) inserted after SOI. */
async function withSegment(marker: number, payload: Buffer, base?: Buffer): Promise<Buffer> {
  return insertSegment(base ?? (await made()), marker, payload);
}

const exif = (order: 'II' | 'MM', orientation: number, type = 3) => exifOrientation(orientation, order, type);

test('hand-built headers: both byte orders of EXIF; what it does not follow is left to sharp', async () => {
  for (const order of ['II', 'MM'] as const) {
    const rotated = await withSegment(0xe1, exif(order, 8));
    assert.equal(readJpegHeader(rotated)?.orientation, 8, order);
    await agrees(rotated, `${order} orientation 8`);
  }
  const upright = await withSegment(0xe1, exif('II', 1));
  assert.ok(isPlainJpeg((await agrees(upright, 'orientation 1'))!), 'EXIF orientation 1 is plain');
  const turned = await withSegment(0xe1, exif('MM', 6));
  assert.ok(isPlainJpeg((await agrees(turned, 'orientation 6'))!), 'so is 6: the addon turns it upright');
  assert.equal(readJpegHeader(await withSegment(0xe1, exif('II', 3, 4))), null, 'orientation that is not a SHORT');
  assert.equal(readJpegHeader(await withSegment(0xe1, exif('II', 9))), null, 'orientation out of range');
  assert.equal(
    readJpegHeader(await withSegment(0xe1, Buffer.from('Exif\0\0II*\0\xff\xff\xff\xff', 'latin1'))),
    null,
    'IFD outside the data',
  );
  assert.equal(
    readJpegHeader(await withSegment(0xe1, exif('II', 1), await withSegment(0xe1, exif('II', 6)))),
    null,
    'two EXIF segments',
  );
  const iccTail = Buffer.concat([Buffer.from('ICC_PROFILE\0', 'latin1'), Buffer.from([2, 2]), Buffer.alloc(80)]);
  assert.equal(readJpegHeader(await withSegment(0xe2, iccTail)), null, 'an ICC profile without its first chunk');
  // A lossless frame (SOF3) instead of the baseline one.
  const base = await made();
  const sof = base.indexOf(Buffer.from([0xff, 0xc0]));
  const lossless = Buffer.from(base);
  lossless[sof + 1] = 0xc3;
  assert.equal(readJpegHeader(lossless), null, 'lossless');
  // Fill bytes before a marker are allowed.
  const filled = Buffer.concat([base.subarray(0, 2), Buffer.from([0xff, 0xff]), base.subarray(2)]);
  assert.deepEqual(readJpegHeader(filled), readJpegHeader(base));
  for (const junk of [
    Buffer.alloc(0),
    Buffer.from([0xff, 0xd8]),
    Buffer.from('not a jpeg'),
    Buffer.from([0xff, 0xd8, 0xff, 0xd9]),
  ]) {
    assert.equal(readJpegHeader(junk), null);
  }
});

test('cut and mutated headers never throw; what it reads has a size and a known component count', async () => {
  const src = await made({ icc: 'srgb', orientation: 1 });
  const sos = src.indexOf(Buffer.from([0xff, 0xda]));
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const inputs: Buffer[] = [];
  for (let n = 0; n <= sos + 4; n++) inputs.push(src.subarray(0, n));
  for (let k = 0; k < 3000; k++) {
    const m = Buffer.from(src);
    for (let j = 0; j < 1 + Math.floor(rand() * 4); j++) m[Math.floor(rand() * (sos + 4))] = Math.floor(rand() * 256);
    inputs.push(m);
  }
  let read = 0;
  for (const b of inputs) {
    const h = readJpegHeader(b);
    if (!h) continue;
    read++;
    assert.ok(
      h.width > 0 && h.height > 0 && [1, 3, 4].includes(h.components) && h.orientation >= 1 && h.orientation <= 8,
    );
  }
  assert.ok(read > 0 && read < inputs.length, `read ${read} of ${inputs.length}`);
});
