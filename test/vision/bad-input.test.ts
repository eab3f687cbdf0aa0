// Bad input on the three vision endpoints: the image-input matrix (both/neither, bad base64, GIF, truncated
// JPEG, URL 404, URL to loopback, bad scheme, too large) and wrong field values. Every case is a documented
// 4xx with the whole body asserted, nothing is billed, and the server keeps answering.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';

let t: TestApp;
let strict: TestApp; // SIGHTFLOW_ALLOW_PRIVATE_URLS=false
let host: Server;
let port: number;
before(async () => {
  t = await startTestApp();
  strict = await startTestApp({ SIGHTFLOW_ALLOW_PRIVATE_URLS: 'false' });
  host = createServer((_req, res) => {
    res.statusCode = 404;
    res.end('not here');
  });
  await new Promise<void>((r) => host.listen(0, '127.0.0.1', r));
  port = (host.address() as { port: number }).port;
});
after(async () => {
  host?.close();
  await t?.close();
  await strict?.close();
});

const ENDPOINTS = ['describe', 'ocr', 'detect'] as const;
// Empty without the evaluation data: every test that sends it is skipped then.
const jpeg = cocoSkip ? Buffer.alloc(0) : readFileSync(join(cocoDir(), 'images', '000000000025.jpg'));
const GIF = 'R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7';
const invalid = (code: string, message: string, param: string | null) => ({
  error: { type: 'invalid_request_error', code, message, param },
});
const post = (app: TestApp, endpoint: string, json: unknown) =>
  api(app, `/v1/vision/${endpoint}`, { method: 'POST', json });

test('the image-input matrix, on every endpoint', { skip: cocoSkip }, async () => {
  const cases: [string, () => unknown, number, object][] = [
    [
      'both fields',
      () => ({ image: 'https://example.com/a.jpg', image_base64: jpeg.toString('base64') }),
      400,
      invalid('invalid_image_input', 'Expected exactly one of image, image_base64 but received both', 'image_base64'),
    ],
    [
      'neither field',
      () => ({}),
      400,
      invalid('invalid_image_input', 'Expected exactly one of image, image_base64 but received neither', 'image'),
    ],
    [
      'both null',
      () => ({ image: null, image_base64: null }),
      400,
      invalid('invalid_image_input', 'Expected exactly one of image, image_base64 but received neither', 'image'),
    ],
    [
      'bad base64',
      () => ({ image_base64: 'not base64!!' }),
      400,
      invalid(
        'invalid_base64',
        'Expected image_base64 to be a data URI or base64 string but it could not be decoded',
        'image_base64',
      ),
    ],
    [
      'a GIF',
      () => ({ image_base64: `data:image/gif;base64,${GIF}` }),
      400,
      invalid('unsupported_image_format', 'Expected a JPEG, PNG or WEBP image but received gif', 'image_base64'),
    ],
    [
      'a truncated JPEG',
      () => ({ image_base64: jpeg.subarray(0, 4000).toString('base64') }),
      400,
      invalid('invalid_image', 'The image could not be decoded: jpeg: premature end of JPEG image', 'image_base64'),
    ],
    [
      'a URL answering 404',
      () => ({ image: `http://127.0.0.1:${port}/missing.jpg` }),
      400,
      invalid('image_fetch_failed', 'The image URL could not be fetched: upstream answered 404', 'image'),
    ],
    [
      'an ftp URL',
      () => ({ image: 'ftp://example.com/a.jpg' }),
      400,
      invalid('invalid_image_url', 'Expected image to be an http(s) URL: the scheme ftp is not supported', 'image'),
    ],
    [
      'a data URI in image',
      () => ({ image: `data:image/jpeg;base64,${jpeg.subarray(0, 64).toString('base64')}` }),
      400,
      invalid('invalid_image_url', 'Expected image to be an http(s) URL: a data URI belongs in image_base64', 'image'),
    ],
    [
      'no body',
      () => undefined,
      400,
      invalid('invalid_request', 'Invalid body: Invalid input: expected object, received undefined', null),
    ],
    [
      'an unknown field',
      () => ({ image_base64: jpeg.toString('base64'), modle: 'gpt-4o' }),
      400,
      invalid('invalid_request', 'Invalid body field modle: Unknown field "modle"', 'modle'),
    ],
    [
      'image of the wrong type',
      () => ({ image: 42 }),
      400,
      invalid(
        'invalid_request',
        'Invalid body field image: Expected an http(s) URL string for image but received 42',
        'image',
      ),
    ],
    [
      'image_base64 of the wrong type',
      () => ({ image_base64: ['abc'] }),
      400,
      invalid(
        'invalid_request',
        'Invalid body field image_base64: Expected a base64 string or data URI for image_base64 but received an array',
        'image_base64',
      ),
    ],
  ];
  for (const endpoint of ENDPOINTS) {
    for (const [what, body, status, expected] of cases) {
      const r = await post(t, endpoint, body());
      assert.equal(r.status, status, `${endpoint}, ${what}: ${r.text}`);
      assert.deepEqual(r.body, expected, `${endpoint}, ${what}`);
      assert.match(r.headers.get('x-request-id') ?? '', /^req_/);
    }
  }
});

test('a URL to a loopback address is refused unless private URLs are allowed', async () => {
  for (const endpoint of ENDPOINTS) {
    const r = await post(strict, endpoint, { image: `http://127.0.0.1:${port}/a.jpg` });
    assert.equal(r.status, 400);
    assert.deepEqual(
      r.body,
      invalid(
        'url_not_allowed',
        'The URL points to a private, loopback or link-local address, which is not allowed: 127.0.0.1 is loopback',
        'image',
      ),
    );
    const named = await post(strict, endpoint, { image: `http://localhost:${port}/a.jpg` });
    assert.deepEqual(
      named.body,
      invalid(
        'url_not_allowed',
        'The URL points to a private, loopback or link-local address, which is not allowed: localhost resolves to 127.0.0.1 (loopback)',
        'image',
      ),
    );
  }
});

test('an image over 20 MB is a 413', async () => {
  const big = Buffer.alloc(21 * 1024 * 1024, 0xab).toString('base64');
  const r = await post(t, 'detect', { image_base64: big });
  assert.equal(r.status, 413);
  assert.deepEqual(r.body, {
    error: {
      type: 'invalid_request_error',
      code: 'payload_too_large',
      message: 'The image is larger than the limit of 20971520 bytes',
      param: null,
    },
  });
});

test('wrong field values per endpoint', { skip: cocoSkip }, async () => {
  const image_base64 = jpeg.toString('base64');
  const field = (param: string, message: string) =>
    invalid('invalid_request', `Invalid body field ${param}: ${message}`, param);
  const cases: [string, Record<string, unknown>, object][] = [
    ['describe', { detail: 'medium' }, field('detail', 'Expected "low" or "high" for detail but received "medium"')],
    ['describe', { detail: 'auto' }, field('detail', 'Expected "low" or "high" for detail but received "auto"')],
    ['describe', { prompt: 5 }, field('prompt', 'Expected a string for prompt but received 5')],
    [
      'describe',
      { prompt: 'x'.repeat(4001) },
      field('prompt', 'Expected at most 4000 characters for prompt but received a string of 4001 characters'),
    ],
    [
      'describe',
      { language: ['en'] },
      field('language', 'Expected a language code string such as "en" or "zh" for language but received an array'),
    ],
    [
      'describe',
      { language: 'de' },
      invalid(
        'unsupported_language',
        'Expected a language the describer supports but received "de"; supported: en, zh',
        'language',
      ),
    ],
    [
      'ocr',
      { language: 7 },
      field('language', 'Expected a language code string such as "auto", "en" or "zh" for language but received 7'),
    ],
    ['ocr', { detail: 'high' }, field('detail', 'Unknown field "detail"')],
    [
      'detect',
      { confidence_threshold: 1.5 },
      field('confidence_threshold', 'Expected a number between 0 and 1 for confidence_threshold but received 1.5'),
    ],
    [
      'detect',
      { confidence_threshold: -0.1 },
      field('confidence_threshold', 'Expected a number between 0 and 1 for confidence_threshold but received -0.1'),
    ],
    [
      'detect',
      { confidence_threshold: '0.5' },
      field('confidence_threshold', 'Expected a number between 0 and 1 for confidence_threshold but received "0.5"'),
    ],
    [
      'detect',
      { classes: 'person' },
      field('classes', 'Expected an array of class names for classes but received "person"'),
    ],
    [
      'detect',
      { classes: [1] },
      invalid(
        'invalid_request',
        'Invalid body field classes[0]: Expected a string for each class name but received 1',
        'classes[0]',
      ),
    ],
    ['detect', { prompt: 'cats' }, field('prompt', 'Unknown field "prompt"')],
  ];
  for (const [endpoint, extra, expected] of cases) {
    const r = await post(t, endpoint, { image_base64, ...extra });
    assert.equal(r.status, 400, `${endpoint} ${JSON.stringify(extra).slice(0, 80)}: ${r.text.slice(0, 300)}`);
    assert.deepEqual(r.body, expected, `${endpoint} ${JSON.stringify(extra).slice(0, 80)}`);
  }
});

test('nothing was billed, and the server still answers', { skip: cocoSkip }, async () => {
  assert.deepEqual(await t.app.services.usage.events(t.projectId), []);
  assert.deepEqual(await strict.app.services.usage.events(strict.projectId), []);
  const r = await post(t, 'detect', { image_base64: jpeg.toString('base64') });
  assert.equal(r.status, 200);
});
