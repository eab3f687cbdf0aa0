// Binary image uploads on the image endpoints: multipart/form-data (an `image` file part, other fields as
// text parts) and a raw image body (other fields in the query string) give the same answers as base64 JSON
// on the same image, and the same errors; malformed multipart and other Content-Types are documented 400s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { projectRoot } from '../../src/base/paths.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

const astronaut = readFileSync(join(projectRoot, 'assets', 'astronaut.jpg'));
const post = (path: string, init: RequestInit & { json?: unknown }) => api(t, path, { method: 'POST', ...init });

/** The three ways to send one image and the same fields; `fields` values are JSON values. */
async function threeWays(path: string, image: Buffer, mime: string, fields: Record<string, unknown>) {
  const json = await post(path, {
    json: { image_base64: `data:${mime};base64,${image.toString('base64')}`, ...fields },
  });
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(image)], { type: mime }), 'upload');
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) {
    // Arrays as one part per element (multipart) and one parameter per element (query); the rest as JSON text.
    if (Array.isArray(v))
      for (const x of v) {
        form.append(k, String(x));
        query.append(k, String(x));
      }
    else {
      const s = typeof v === 'string' ? v : JSON.stringify(v);
      form.append(k, s);
      query.append(k, s);
    }
  }
  const multipart = await post(path, { body: form });
  const raw = await post(`${path}?${query}`, { body: new Uint8Array(image), headers: { 'content-type': mime } });
  return { json, multipart, raw };
}

// Presigned file links (search results' content_url) are minted per response with an expiry counted from
// now, so two answers in different seconds differ in `expires` and `sig` and nowhere else: compare without them.
const PRESIGNED = /\?expires=\d+&sig=[0-9a-f]{64}/g;
const withoutLinkExpiry = (body: unknown): unknown =>
  JSON.parse(JSON.stringify(body).replace(PRESIGNED, '?expires=E&sig=S'));

function same(r: Awaited<ReturnType<typeof threeWays>>, status = 200): void {
  assert.equal(r.json.status, status, r.json.text);
  assert.equal(r.multipart.status, status, r.multipart.text);
  assert.equal(r.raw.status, status, r.raw.text);
  assert.deepEqual(withoutLinkExpiry(r.multipart.body), withoutLinkExpiry(r.json.body));
  assert.deepEqual(withoutLinkExpiry(r.raw.body), withoutLinkExpiry(r.json.body));
}

test('detect: multipart and raw give the JSON answer (classes repeated, threshold as text)', async () => {
  const all = await threeWays('/v1/vision/detect', astronaut, 'image/jpeg', { confidence_threshold: 0.3 });
  same(all);
  assert.ok(all.json.body.objects.length > 0, 'astronaut.jpg has objects');
  same(
    await threeWays('/v1/vision/detect', astronaut, 'image/jpeg', {
      classes: ['person', 'tie'],
      confidence_threshold: 0.25,
    }),
  );
  // One JSON array text part for classes works too.
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(astronaut)], { type: 'image/jpeg' }), 'a.jpg');
  form.append('classes', '["person"]');
  const byJsonArray = await post('/v1/vision/detect', { body: form });
  const json = await post('/v1/vision/detect', {
    json: { image_base64: astronaut.toString('base64'), classes: ['person'] },
  });
  assert.equal(byJsonArray.status, 200, byJsonArray.text);
  assert.deepEqual(byJsonArray.body, json.body);
});

test('ocr and describe: multipart and raw give the JSON answer', async () => {
  same(await threeWays('/v1/vision/ocr', astronaut, 'image/jpeg', {}));
  const png = await sharp(astronaut).resize(256).png().toBuffer();
  same(await threeWays('/v1/vision/describe', png, 'image/png', { detail: 'high' }));
});

test('vectors search with an image query: multipart and raw give the JSON answer', async () => {
  const c = await post('/v1/vectors/collections', { json: { name: 'uploads' } });
  assert.equal(c.status, 201, c.text);
  const red = await sharp({ create: { width: 96, height: 64, channels: 3, background: { r: 220, g: 20, b: 20 } } })
    .png()
    .toBuffer();
  const idx = await post(`/v1/vectors/collections/${c.body.id}/index`, {
    json: {
      items: [
        { image_base64: astronaut.toString('base64'), metadata: { name: 'photo' } },
        { image_base64: red.toString('base64') },
        { text: 'an astronaut in a spacesuit' },
      ],
    },
  });
  assert.ok(idx.status < 300, idx.text);
  const r = await threeWays(`/v1/vectors/collections/${c.body.id}/search`, astronaut, 'image/jpeg', { top_k: 3 });
  same(r);
  assert.equal(r.json.body.results.length, 3);
  // A filter (an object field) as JSON text in a multipart part or a query parameter: the JSON body's answer.
  const filtered = await threeWays(`/v1/vectors/collections/${c.body.id}/search`, astronaut, 'image/jpeg', {
    top_k: 3,
    filter: { name: 'photo' },
  });
  same(filtered);
  assert.deepEqual(
    filtered.json.body.results.map((h: { metadata: unknown }) => h.metadata),
    [{ name: 'photo' }],
  );
  same(
    await threeWays(`/v1/vectors/collections/${c.body.id}/search`, astronaut, 'image/jpeg', {
      filter: { name: { $gtt: 1 } },
    }),
    400,
  );
  // Text that is not JSON: a 400 that says so, the same either way.
  const form = new FormData();
  form.append('image', new Blob([new Uint8Array(astronaut)], { type: 'image/jpeg' }), 'a.jpg');
  form.append('filter', '{name: photo}');
  const badMultipart = await post(`/v1/vectors/collections/${c.body.id}/search`, { body: form });
  const badRaw = await post(
    `/v1/vectors/collections/${c.body.id}/search?filter=${encodeURIComponent('{name: photo}')}`,
    { body: new Uint8Array(astronaut), headers: { 'content-type': 'image/jpeg' } },
  );
  for (const bad of [badMultipart, badRaw]) {
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.body.error.code, 'invalid_parameter');
    assert.equal(bad.body.error.param, 'filter');
    assert.match(
      bad.body.error.message,
      /^Expected a JSON object for filter but received text that is not JSON \(.+\)$/,
    );
  }
  assert.deepEqual(badMultipart.body, badRaw.body);
});

test('the same errors as JSON: undecodable image, both inputs, bad fields, over 20 MB', async () => {
  const garbage = Buffer.from('this is not an image at all');
  same(await threeWays('/v1/vision/detect', garbage, 'image/png', {}), 400);
  same(await threeWays('/v1/vision/detect', astronaut, 'image/jpeg', { confidence_threshold: 2 }), 400);
  same(await threeWays('/v1/vision/detect', astronaut, 'image/jpeg', { classes: ['unicorn'] }), 400);
  same(await threeWays('/v1/vision/detect', astronaut, 'image/jpeg', { image: 'https://example.com/a.jpg' }), 400);
  same(await threeWays('/v1/vision/detect', astronaut, 'image/jpeg', { nonsense: 'x' }), 400);
  const big = Buffer.alloc(20 * 1024 * 1024 + 1, 0xff);
  same(await threeWays('/v1/vision/detect', big, 'image/jpeg', {}), 413);
});

test('malformed multipart and unsupported Content-Types are documented 400s', async () => {
  const noBoundary = await post('/v1/vision/detect', { body: 'x', headers: { 'content-type': 'multipart/form-data' } });
  assert.equal(noBoundary.status, 400);
  assert.deepEqual(noBoundary.body.error, {
    type: 'invalid_request_error',
    code: 'invalid_request',
    message: 'Invalid multipart/form-data body: the Content-Type has no boundary parameter',
    param: null,
  });
  const unterminated = await post('/v1/vision/detect', {
    body: '--b\r\nContent-Disposition: form-data; name="image"; filename="a.jpg"\r\n\r\nabc',
    headers: { 'content-type': 'multipart/form-data; boundary=b' },
  });
  assert.equal(unterminated.status, 400);
  assert.match(unterminated.body.error.message, /not terminated/);
  const two = new FormData();
  two.append('image', new Blob([new Uint8Array(astronaut)]), 'a.jpg');
  two.append('image', new Blob([new Uint8Array(astronaut)]), 'b.jpg');
  const dup = await post('/v1/vision/detect', { body: two });
  assert.equal(dup.status, 400);
  assert.match(dup.body.error.message, /more than one image part/);
  const text = await post('/v1/vision/detect', { body: 'hi', headers: { 'content-type': 'text/plain' } });
  assert.equal(text.status, 400);
  assert.deepEqual(text.body.error, {
    type: 'invalid_request_error',
    code: 'unsupported_content_type',
    param: null,
    message:
      'Expected Content-Type application/json, multipart/form-data, image/jpeg, image/png or image/webp but received text/plain',
  });
  // Routes without image uploads still take JSON only.
  const other = await post('/v1/vectors/collections', {
    body: new Uint8Array(astronaut),
    headers: { 'content-type': 'image/jpeg' },
  });
  assert.equal(other.status, 400);
  assert.equal(other.body.error.code, 'unsupported_content_type');
});

test('the document describes the upload bodies', async () => {
  const doc = (await api(t, '/openapi.json', { key: null })).body;
  const op = doc.paths['/v1/vision/detect'].post;
  assert.deepEqual(Object.keys(op.requestBody.content).sort(), [
    'application/json',
    'image/jpeg',
    'image/png',
    'image/webp',
    'multipart/form-data',
  ]);
  assert.equal(
    op.requestBody.content['multipart/form-data'].schema.properties.image.contentMediaType,
    'application/octet-stream',
  );
  assert.ok(op.parameters.some((p: { name: string; in: string }) => p.name === 'classes' && p.in === 'query'));
  assert.ok(doc.paths['/v1/vectors/collections/{id}/search'].post.requestBody.content['multipart/form-data']);
});
