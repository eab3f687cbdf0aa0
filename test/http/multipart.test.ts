// The multipart/form-data parser: well-formed bodies give their parts byte for byte; hostile or malformed
// ones (no boundary, unterminated parts, huge headers, thousands of parts, over-size parts) are the
// catalogue's 400 (413 for an over-size file), never a partial result or a hang.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { multipartBoundary, parseMultipart } from '../../src/http/multipart.js';
import { readImageUpload } from '../../src/http/image-upload.js';
import { DetectBody } from '../../src/vision/schemas.js';
import { isApiError } from '../../src/base/errors.js';

const B = 'XyZ-boundary';
const CT = `multipart/form-data; boundary=${B}`;

function body(
  parts: Array<{ headers: string[]; data: string | Buffer }>,
  opts: { close?: boolean; preamble?: string } = {},
): Buffer {
  const chunks: Buffer[] = [];
  if (opts.preamble !== undefined) chunks.push(Buffer.from(`${opts.preamble}\r\n`));
  for (const p of parts) {
    chunks.push(Buffer.from(`--${B}\r\n${p.headers.join('\r\n')}\r\n\r\n`));
    chunks.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data));
    chunks.push(Buffer.from('\r\n'));
  }
  if (opts.close !== false) chunks.push(Buffer.from(`--${B}--\r\n`));
  return Buffer.concat(chunks);
}
const field = (name: string, value: string) => ({
  headers: [`Content-Disposition: form-data; name="${name}"`],
  data: value,
});
const file = (name: string, data: Buffer, filename = 'a.jpg') => ({
  headers: [`Content-Disposition: form-data; name="${name}"; filename="${filename}"`, 'Content-Type: image/jpeg'],
  data,
});

function rejects(fn: () => unknown, status: number, re: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(isApiError(e), `not an ApiError: ${String(e)}`);
    assert.equal(e.status, status);
    assert.match(e.message, re);
    return true;
  });
}

test('boundary from the Content-Type: token or quoted; missing or malformed is a 400', () => {
  assert.equal(multipartBoundary(CT), B);
  assert.equal(multipartBoundary('multipart/form-data; charset=utf-8; boundary="a b:c"'), 'a b:c');
  rejects(() => multipartBoundary('multipart/form-data'), 400, /no boundary/);
  rejects(() => multipartBoundary('multipart/form-data; boundary='), 400, /boundary/);
  rejects(() => multipartBoundary(`multipart/form-data; boundary=${'x'.repeat(71)}`), 400, /boundary/);
  rejects(() => multipartBoundary('multipart/form-data; boundary="unterminated'), 400, /unterminated/);
  rejects(() => multipartBoundary('multipart/mixed; boundary=x'), 400, /multipart\/form-data/);
});

test('fields and files come back byte for byte, binary data with CRLF and dashes intact', () => {
  const bin = Buffer.from([0xff, 0xd8, 0x0d, 0x0a, 0x2d, 0x2d, 0x00, 0x0d, 0x0a, 0xff, 0xd9]);
  const parts = parseMultipart(
    body([field('classes', '["person"]'), file('image', bin), field('empty', '')], { preamble: 'ignored' }),
    B,
  );
  assert.deepEqual(
    parts.map((p) => [p.name, p.filename, p.contentType]),
    [
      ['classes', null, null],
      ['image', 'a.jpg', 'image/jpeg'],
      ['empty', null, null],
    ],
  );
  assert.equal(parts[0]!.data.toString(), '["person"]');
  assert.ok(parts[1]!.data.equals(bin));
  assert.equal(parts[2]!.data.length, 0);
  // A data chunk that contains the boundary text without the leading CRLF is data, not a delimiter.
  const tricky = parseMultipart(body([field('a', `x--${B}y`)]), B);
  assert.equal(tricky[0]!.data.toString(), `x--${B}y`);
  // Quoted names with escapes and UTF-8.
  const named = parseMultipart(
    body([{ headers: ['content-disposition: form-data; name="we\\"ird"; filename="caf\u00e9.png"'], data: 'v' }]),
    B,
  );
  assert.equal(named[0]!.name, 'we"ird');
});

test('hostile and malformed bodies are 400s', () => {
  rejects(() => parseMultipart(Buffer.from('no boundary here'), B), 400, /opening boundary/);
  rejects(() => parseMultipart(Buffer.from(`--${B}--\r\n`), B), 400, /no parts/);
  // Unterminated: the last part never meets a delimiter, or the closing one is missing.
  rejects(
    () => parseMultipart(Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="a"\r\n\r\nvalue`), B),
    400,
    /not terminated/,
  );
  rejects(() => parseMultipart(body([field('a', 'v')], { close: false }), B), 400, /not terminated/);
  rejects(
    () => parseMultipart(Buffer.concat([body([field('a', 'v')], { close: false }), Buffer.from(`--${B}`)]), B),
    400,
    /CRLF/,
  );
  rejects(
    () => parseMultipart(Buffer.from(`--${B}\r\nContent-Disposition: form-data; name="a"`), B),
    400,
    /inside its headers/,
  );
  // LF-only framing is not multipart.
  rejects(
    () => parseMultipart(Buffer.from(`--${B}\nContent-Disposition: form-data; name="a"\n\nv\n--${B}--\n`), B),
    400,
    /CRLF/,
  );
  // Huge headers: refused after the limit, without scanning the rest.
  const huge = body([
    { headers: [`Content-Disposition: form-data; name="a"`, `X-Pad: ${'p'.repeat(100_000)}`], data: 'v' },
  ]);
  rejects(() => parseMultipart(huge, B), 400, /headers are longer than 8192/);
  rejects(
    () => parseMultipart(body([{ headers: ['Content-Type: text/plain'], data: 'v' }]), B),
    400,
    /no Content-Disposition/,
  );
  rejects(
    () => parseMultipart(body([{ headers: ['Content-Disposition: attachment; name="a"'], data: 'v' }]), B),
    400,
    /form-data/,
  );
  rejects(() => parseMultipart(body([{ headers: ['Content-Disposition: form-data'], data: 'v' }]), B), 400, /no name/);
  rejects(
    () =>
      parseMultipart(
        body([
          {
            headers: ['Content-Disposition: form-data; name="a"', 'Content-Disposition: form-data; name="b"'],
            data: 'v',
          },
        ]),
        B,
      ),
    400,
    /two Content-Disposition/,
  );
  rejects(
    () => parseMultipart(body([{ headers: ['Content-Disposition: form-data;', ' name="a"'], data: 'v' }]), B),
    400,
    /folded/,
  );
  rejects(
    () => parseMultipart(body([{ headers: ['Content-Disposition: form-data; name="a"; name="b"'], data: 'v' }]), B),
    400,
    /twice/,
  );
});

test('10 000 parts stop at the part limit; over-size fields and files are refused', () => {
  const many = body(Array.from({ length: 10_000 }, (_, i) => field(`f${i}`, 'x')));
  const started = performance.now();
  rejects(() => parseMultipart(many, B), 400, /more than 100 parts/);
  assert.ok(performance.now() - started < 500, 'the part limit stops parsing early');
  rejects(
    () => parseMultipart(body([field('a', 'x'.repeat(2000))]), B, { maxFieldBytes: 1000 }),
    400,
    /longer than 1000 bytes/,
  );
  rejects(
    () => parseMultipart(body([file('image', Buffer.alloc(2000))]), B, { maxFileBytes: 1000, fileWhat: 'image' }),
    413,
    /image is larger than the limit of 1000/,
  );
});

test('an upload becomes the JSON body: typed fields, repeated or JSON arrays, one image part', () => {
  const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xd9]);
  const a = readImageUpload(
    CT,
    'multipart/form-data',
    body([
      file('image', jpeg),
      field('classes', 'person'),
      field('classes', 'car'),
      field('confidence_threshold', '0.25'),
    ]),
    new URLSearchParams(),
    DetectBody,
  );
  assert.deepEqual(a.fields, { classes: ['person', 'car'], confidence_threshold: 0.25, image_base64: 'binary' });
  assert.ok(a.image!.equals(jpeg));
  const b = readImageUpload(
    CT,
    'multipart/form-data',
    body([file('image', jpeg), field('classes', '["person","car"]')]),
    new URLSearchParams(),
    DetectBody,
  );
  assert.deepEqual(b.fields.classes, ['person', 'car']);
  // A plain text `image` part is a URL, as in JSON; no file means no bytes.
  const c = readImageUpload(
    CT,
    'multipart/form-data',
    body([field('image', 'https://example.com/a.jpg')]),
    new URLSearchParams(),
    DetectBody,
  );
  assert.deepEqual(c, { fields: { image: 'https://example.com/a.jpg' }, image: null });
  rejects(
    () =>
      readImageUpload(
        CT,
        'multipart/form-data',
        body([file('image', jpeg), file('image', jpeg)]),
        new URLSearchParams(),
        DetectBody,
      ),
    400,
    /more than one image part/,
  );
  rejects(
    () => readImageUpload(CT, 'multipart/form-data', body([file('other', jpeg)]), new URLSearchParams(), DetectBody),
    400,
    /only the image part/,
  );
  rejects(
    () =>
      readImageUpload(
        CT,
        'multipart/form-data',
        body([file('image', jpeg), field('confidence_threshold', '0.1'), field('confidence_threshold', '0.2')]),
        new URLSearchParams(),
        DetectBody,
      ),
    400,
    /given 2 times/,
  );
  // A part named __proto__ is an ordinary (unknown) field, as it is in JSON.
  const proto = readImageUpload(
    CT,
    'multipart/form-data',
    body([file('image', jpeg), field('__proto__', '{"polluted":true}')]),
    new URLSearchParams(),
    DetectBody,
  );
  assert.ok(Object.hasOwn(proto.fields, '__proto__'));
  assert.equal(DetectBody.safeParse(proto.fields).success, false);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
  // Raw body: fields from the query string.
  const raw = readImageUpload(
    'image/jpeg',
    'image/jpeg',
    jpeg,
    new URLSearchParams('classes=person&confidence_threshold=0.3'),
    DetectBody,
  );
  assert.deepEqual(raw.fields, { classes: ['person'], confidence_threshold: 0.3, image_base64: 'binary' });
});
