// Vectors API (docs/vectors.md) on a real server and database: collections CRUD, index /
// list / delete / search of text, image and audio items, usage rows, project isolation, and bad input with
// whole error bodies asserted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { startTestApp, admin, api, fetchChecked, type TestApp } from '../helpers/app.js';
import { waitedTogether } from '../helpers/metrics-text.js';
import { mediaDir } from '../helpers/media.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { requestPixels } from '../../src/media/pixel-pool.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

const invalid = (code: string, message: string, param: string | null) => ({
  error: { type: 'invalid_request_error', code, message, param },
});
const png = async (r: number, g: number, b: number, w = 96, h = 64) =>
  (
    await sharp({ create: { width: w, height: h, channels: 3, background: { r, g, b } } })
      .png()
      .toBuffer()
  ).toString('base64');

async function collection(name: string, key?: string): Promise<string> {
  const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name }, key });
  assert.equal(r.status, 201, r.text);
  return r.body.id;
}

test('models: multimodal-embedding-v1 with its types, dimensions and metric', async () => {
  const r = await api(t, '/v1/vectors/models');
  assert.equal(r.status, 200);
  const m = r.body.models.find((x: { id: string }) => x.id === 'multimodal-embedding-v1');
  assert.deepEqual(
    { ...m, name: undefined },
    {
      id: 'multimodal-embedding-v1',
      name: undefined,
      types: ['image', 'text', 'audio'],
      dimensions: 539,
      metric: 'COSINE',
    },
  );
});

test('collections: create 201, list, get, 409 duplicate name, delete, then 404', async () => {
  const r = await api(t, '/v1/vectors/collections', {
    method: 'POST',
    json: { name: 'photos', description: 'holiday' },
  });
  assert.equal(r.status, 201);
  assert.match(r.body.id, /^col_[0-9a-z]{20}$/);
  assert.deepEqual(
    { ...r.body, id: undefined, created_at: undefined },
    {
      id: undefined,
      object: 'vectors.collection',
      name: 'photos',
      description: 'holiday',
      model_id: 'multimodal-embedding-v1',
      dimensions: 539,
      metric: 'COSINE',
      item_count: 0,
      created_at: undefined,
    },
  );
  const dup = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'photos' } });
  assert.equal(dup.status, 409);
  assert.deepEqual(dup.body, {
    error: {
      type: 'conflict_error',
      code: 'collection_exists',
      message: 'A collection named "photos" already exists in this project',
      param: 'name',
    },
  });
  const list = await api(t, '/v1/vectors/collections');
  assert.equal(list.body.object, 'list');
  assert.ok(list.body.data.some((c: { id: string }) => c.id === r.body.id));
  const got = await api(t, `/v1/vectors/collections/${r.body.id}`);
  assert.deepEqual(got.body, r.body);
  const del = await api(t, `/v1/vectors/collections/${r.body.id}`, { method: 'DELETE' });
  assert.deepEqual(del.body, { id: r.body.id, object: 'vectors.collection', deleted: true });
  const again = await api(t, `/v1/vectors/collections/${r.body.id}`);
  assert.equal(again.status, 404);
  assert.deepEqual(again.body, {
    error: { type: 'not_found_error', code: 'not_found', message: `No such collection: ${r.body.id}`, param: null },
  });
});

test('text items: index, list with null content_url, search finds by meaning, delete never comes back', async () => {
  const id = await collection('notes');
  const texts = [
    'a dog playing with a ball in the park',
    'a plate of pasta with tomato sauce',
    'a red sports car on the highway',
    'snow covered mountains at sunrise',
  ];
  const r = await api(t, `/v1/vectors/collections/${id}/index`, {
    method: 'POST',
    json: { items: texts.map((text, i) => ({ text, metadata: { i } })) },
  });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.indexed, 4);
  assert.equal(r.body.model, 'multimodal-embedding-v1');
  assert.equal(r.body.ids.length, 4);
  assert.ok(r.body.usage.input_tokens > 0);

  const list = await api(t, `/v1/vectors/collections/${id}/items?limit=2&offset=1`);
  assert.equal(list.status, 200);
  assert.deepEqual(
    { ...list.body, data: undefined },
    { object: 'list', data: undefined, total: 4, limit: 2, offset: 1, has_more: true },
  );
  assert.deepEqual(
    list.body.data.map((x: { id: string; text: string; content_url: null; metadata: object; content_type: string }) => [
      x.id,
      x.text,
      x.content_url,
      x.metadata,
      x.content_type,
    ]),
    [
      [r.body.ids[1], texts[1], null, { i: 1 }, 'text'],
      [r.body.ids[2], texts[2], null, { i: 2 }, 'text'],
    ],
  );

  const s = await api(t, `/v1/vectors/collections/${id}/search`, {
    method: 'POST',
    json: { text: 'puppy fetching a toy', top_k: 2 },
  });
  assert.equal(s.status, 200, s.text);
  assert.equal(s.body.results.length, 2);
  assert.equal(s.body.results[0].id, r.body.ids[0]);
  assert.deepEqual(
    { ...s.body.results[0], score: undefined },
    {
      id: r.body.ids[0],
      score: undefined,
      content_type: 'text',
      text: texts[0],
      metadata: { i: 0 },
      content_url: null,
    },
  );
  assert.ok(s.body.results[0].score > s.body.results[1].score);
  const high = await api(t, `/v1/vectors/collections/${id}/search`, {
    method: 'POST',
    json: { text: 'puppy fetching a toy', threshold: 0.99 },
  });
  assert.deepEqual(high.body.results, []);

  const d = await api(t, `/v1/vectors/collections/${id}/items`, {
    method: 'DELETE',
    json: { ids: [r.body.ids[0], 'item_nope'] },
  });
  assert.deepEqual(d.body, { deleted: 1, not_found: ['item_nope'] });
  const after = await api(t, `/v1/vectors/collections/${id}/search`, {
    method: 'POST',
    json: { text: 'puppy fetching a toy', top_k: 100 },
  });
  assert.equal(after.body.results.length, 3);
  assert.ok(!after.body.results.some((x: { id: string }) => x.id === r.body.ids[0]));
  assert.equal((await api(t, `/v1/vectors/collections/${id}`)).body.item_count, 3);

  const usage = await t.app.services.usage.events(t.projectId);
  assert.ok(
    usage.some(
      (u) => u.endpoint === '/v1/vectors/collections/:id/index' && Number(u.input_tokens) === r.body.usage.input_tokens,
    ),
  );
  assert.ok(usage.some((u) => u.endpoint === '/v1/vectors/collections/:id/search'));
});

test('image and audio items: presigned content_url serves the original bytes; image query finds its near-duplicate', async () => {
  const id = await collection('media');
  const red = await png(220, 30, 30);
  const blue = await png(30, 40, 220);
  const wav = join(mediaDir(), 'tone.wav');
  execFileSync('ffmpeg', [
    '-nostdin',
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=1',
    '-ar',
    '16000',
    '-ac',
    '1',
    wav,
  ]);
  const audio = readFileSync(wav).toString('base64');
  const r = await api(t, `/v1/vectors/collections/${id}/index`, {
    method: 'POST',
    json: {
      items: [
        { image_base64: red, metadata: { c: 'red' } },
        { image_base64: `data:image/png;base64,${blue}` },
        { audio: `data:audio/wav;base64,${audio}` },
      ],
    },
  });
  assert.equal(r.status, 200, r.text);
  const list = await api(t, `/v1/vectors/collections/${id}/items`);
  assert.deepEqual(
    list.body.data.map((x: { content_type: string }) => x.content_type),
    ['image', 'image', 'audio'],
  );
  for (const it of list.body.data) {
    assert.match(it.content_url, /^\/v1\/files\/vectors\/col_[0-9a-z]+\/item_[0-9a-z]+\.(png|wav)\?expires=\d+&sig=/);
    assert.equal(it.text, undefined);
  }
  const file = await fetchChecked(t, list.body.data[0].content_url);
  assert.equal(file.status, 200);
  assert.deepEqual(Buffer.from(await file.arrayBuffer()), Buffer.from(red, 'base64'));

  const near = (await sharp(Buffer.from(red, 'base64')).resize(48, 32).jpeg({ quality: 40 }).toBuffer()).toString(
    'base64',
  );
  const s = await api(t, `/v1/vectors/collections/${id}/search`, {
    method: 'POST',
    json: { image_base64: near, top_k: 3 },
  });
  assert.equal(s.status, 200, s.text);
  assert.equal(s.body.results[0].id, r.body.ids[0]);
  assert.deepEqual(s.body.results[0].metadata, { c: 'red' });

  const del = await api(t, `/v1/vectors/collections/${id}`, { method: 'DELETE' });
  assert.equal(del.status, 200);
  assert.equal((await fetchChecked(t, list.body.data[0].content_url)).status, 404, 'blobs go with the collection');
});

test('concurrent image searches on different photos each get their own ranking (pixel memory is reused between requests)', {
  skip: cocoSkip,
}, async () => {
  const id = await collection('concurrent-photos');
  const items = [
    'a man riding a horse',
    'a red truck at a gate',
    'a plate of food',
    'people crossing a street',
    'a cat on a sofa',
  ].map((text) => ({ text }));
  assert.equal((await api(t, `/v1/vectors/collections/${id}/index`, { method: 'POST', json: { items } })).status, 200);
  const photos = ['000000000025', '000000000094', '000000000322'].map((n) =>
    readFileSync(join(cocoDir(), 'images', `${n}.jpg`)).toString('base64'),
  );
  const search = (image_base64: string) =>
    api(t, `/v1/vectors/collections/${id}/search`, { method: 'POST', json: { image_base64, top_k: 5 } });
  const ranking = (r: Awaited<ReturnType<typeof search>>) => {
    assert.equal(r.status, 200, r.text);
    return (r.body.results as Array<{ id: string; score: number }>).map((h) => `${h.id}:${h.score}`);
  };
  const alone: string[][] = [];
  for (const p of photos) alone.push(ranking(await search(p)));
  const order = Array.from({ length: 9 }, (_, i) => i % photos.length);
  const together = await Promise.all(order.map((k) => search(photos[k]!)));
  together.forEach((r, i) => assert.deepEqual(ranking(r), alone[order[i]!], `request ${i}`));
  assert.ok(requestPixels.idle.buffers >= 1, 'the decoded pixels went back to the pool');
});

test('isolation: project B cannot see, search, index or delete project A collections', async () => {
  const id = await collection('private-a');
  await api(t, `/v1/vectors/collections/${id}/index`, { method: 'POST', json: { items: [{ text: 'secret plans' }] } });
  const p = await admin(t, '/admin/v1/projects', { method: 'POST', json: { name: 'project-b' } });
  const k = await admin(t, `/admin/v1/projects/${p.body.id}/keys`, { method: 'POST', json: { name: 'b' } });
  const key = k.body.key as string;
  const nf = {
    error: { type: 'not_found_error', code: 'not_found', message: `No such collection: ${id}`, param: null },
  };
  for (const [method, path, json] of [
    ['GET', `/v1/vectors/collections/${id}`, undefined],
    ['GET', `/v1/vectors/collections/${id}/items`, undefined],
    ['POST', `/v1/vectors/collections/${id}/search`, { text: 'secret' }],
    ['POST', `/v1/vectors/collections/${id}/index`, { items: [{ text: 'x' }] }],
    ['DELETE', `/v1/vectors/collections/${id}/items`, { ids: ['item_x'] }],
    ['DELETE', `/v1/vectors/collections/${id}`, undefined],
  ] as const) {
    const r = await api(t, path, { method, json, key });
    assert.equal(r.status, 404, `${method} ${path}`);
    assert.deepEqual(r.body, nf);
  }
  const list = await api(t, '/v1/vectors/collections', { key });
  assert.deepEqual(list.body, { object: 'list', data: [] });
  // B may use the same name; A's collection is untouched.
  assert.equal(
    (await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'private-a' }, key })).status,
    201,
  );
  assert.equal((await api(t, `/v1/vectors/collections/${id}`)).body.item_count, 1);
});

test('bad input: documented 4xx with whole bodies', async () => {
  const id = await collection('bad-input');
  const idx = (json: unknown) => api(t, `/v1/vectors/collections/${id}/index`, { method: 'POST', json });
  const search = (json: unknown) => api(t, `/v1/vectors/collections/${id}/search`, { method: 'POST', json });
  const cases: Array<[string, Promise<{ status: number; body: unknown }>, number, unknown]> = [
    [
      '101 items',
      idx({ items: Array.from({ length: 101 }, () => ({ text: 'x' })) }),
      400,
      invalid(
        'invalid_request',
        'Invalid body field items: Expected an array of 1 to 100 items for items but received an array of 101',
        'items',
      ),
    ],
    [
      'no items',
      idx({ items: [] }),
      400,
      invalid(
        'invalid_request',
        'Invalid body field items: Expected an array of 1 to 100 items for items but received an empty array',
        'items',
      ),
    ],
    [
      'two content fields',
      idx({ items: [{ text: 'a' }, { text: 'b', image: 'https://example.com/a.jpg' }] }),
      400,
      invalid(
        'invalid_parameter',
        'Expected exactly one of image, image_base64, text, audio for items[1] but received image, text',
        'items[1].text',
      ),
    ],
    [
      'no content field',
      idx({ items: [{ metadata: { a: 1 } }] }),
      400,
      invalid(
        'invalid_parameter',
        'Expected exactly one of image, image_base64, text, audio for items[0] but received none',
        'items[0]',
      ),
    ],
    [
      'empty text',
      idx({ items: [{ text: '' }] }),
      400,
      invalid(
        'invalid_parameter',
        'Expected a non-empty string of at most 8000 characters for items[0].text but received an empty string',
        'items[0].text',
      ),
    ],
    [
      'bad base64',
      idx({ items: [{ image_base64: 'not base64!!' }] }),
      400,
      invalid(
        'invalid_base64',
        'Expected items[0].image_base64 to be a data URI or base64 string but it could not be decoded',
        'items[0].image_base64',
      ),
    ],
    [
      'audio that is no audio',
      idx({ items: [{ audio: Buffer.from('hello, not a sound').toString('base64') }] }),
      400,
      invalid(
        'invalid_audio',
        'Expected items[0].audio to be WAV, MP3, FLAC or OGG audio but it could not be decoded: the data is not in a supported audio format',
        'items[0].audio',
      ),
    ],
    [
      'metadata not an object',
      idx({ items: [{ text: 'a', metadata: [1] }] }),
      400,
      invalid(
        'invalid_request',
        'Invalid body field items[0].metadata: Expected an object for metadata but received an array of 1',
        'items[0].metadata',
      ),
    ],
    [
      'unknown collection',
      api(t, '/v1/vectors/collections/col_nope/search', { method: 'POST', json: { text: 'a' } }),
      404,
      { error: { type: 'not_found_error', code: 'not_found', message: 'No such collection: col_nope', param: null } },
    ],
    [
      'top_k 0',
      search({ text: 'a', top_k: 0 }),
      400,
      invalid(
        'invalid_request',
        'Invalid body field top_k: Expected an integer between 1 and 100 for top_k but received 0',
        'top_k',
      ),
    ],
    [
      'top_k 101',
      search({ text: 'a', top_k: 101 }),
      400,
      invalid(
        'invalid_request',
        'Invalid body field top_k: Expected an integer between 1 and 100 for top_k but received 101',
        'top_k',
      ),
    ],
    [
      'threshold 1.5',
      search({ text: 'a', threshold: 1.5 }),
      400,
      invalid(
        'invalid_request',
        'Invalid body field threshold: Expected a number between 0 and 1 for threshold but received 1.5',
        'threshold',
      ),
    ],
    [
      'search with two queries',
      search({ text: 'a', audio: 'https://example.com/a.wav' }),
      400,
      invalid(
        'invalid_parameter',
        'Expected exactly one of image, image_base64, text, audio for the query but received text, audio',
        'audio',
      ),
    ],
    [
      'search with no query',
      search({ top_k: 3 }),
      400,
      invalid(
        'invalid_parameter',
        'Expected exactly one of image, image_base64, text, audio for the query but received none',
        'text',
      ),
    ],
    [
      'name of 101 characters',
      api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'n'.repeat(101) } }),
      400,
      invalid(
        'invalid_request',
        'Invalid body field name: Expected a string of 1 to 100 characters for name but received a string of 101 characters',
        'name',
      ),
    ],
    [
      'model not installed',
      api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'm', model_id: 'clip-vit-b32' } }),
      400,
      invalid(
        'invalid_parameter',
        'Expected an installed embedding model id (multimodal-embedding-v1) for model_id but received "clip-vit-b32"',
        'model_id',
      ),
    ],
    [
      'duplicate name',
      api(t, '/v1/vectors/collections', { method: 'POST', json: { name: 'bad-input' } }),
      409,
      {
        error: {
          type: 'conflict_error',
          code: 'collection_exists',
          message: 'A collection named "bad-input" already exists in this project',
          param: 'name',
        },
      },
    ],
    [
      'limit 0',
      api(t, `/v1/vectors/collections/${id}/items?limit=0`),
      400,
      invalid(
        'invalid_request',
        'Invalid query field limit: Expected an integer between 1 and 100 for limit but received 0',
        'limit',
      ),
    ],
  ];
  for (const [name, p, status, body] of cases) {
    const r = await p;
    assert.equal(r.status, status, name);
    assert.deepEqual(r.body, body, name);
  }
  // Undecodable audio with a valid container signature: ffmpeg refuses it.
  const broken = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(64, 7)]);
  const r = await idx({ items: [{ audio: broken.toString('base64') }] });
  assert.equal(r.status, 400);
  assert.equal((r.body as { error: { code: string; param: string } }).error.code, 'invalid_audio');
  assert.equal((r.body as { error: { param: string } }).error.param, 'items[0].audio');
  assert.equal(
    (await api(t, `/v1/vectors/collections/${id}`)).body.item_count,
    0,
    'nothing indexed by failed requests',
  );
});

test('beyond the detector queue bound: image search and index get 503 overloaded_error with Retry-After; the rest answer, nothing half-indexed', async () => {
  const small = await startTestApp({ SIGHTFLOW_INFERENCE_QUEUE_DEPTH: '1' });
  try {
    const created = await api(small, '/v1/vectors/collections', { method: 'POST', json: { name: 'busy' } });
    assert.equal(created.status, 201, created.text);
    const id = created.body.id as string;
    const image_base64 = await png(200, 40, 40, 320, 240);
    // The first search loads the models.
    assert.equal(
      (await api(small, `/v1/vectors/collections/${id}/search`, { method: 'POST', json: { image_base64 } })).status,
      200,
    );
    const rs = await Promise.all([
      ...Array.from({ length: 10 }, () =>
        api(small, `/v1/vectors/collections/${id}/search`, { method: 'POST', json: { image_base64 } }),
      ),
      ...Array.from({ length: 4 }, (_, i) =>
        api(small, `/v1/vectors/collections/${id}/index`, {
          method: 'POST',
          json: { items: [{ id: `img-${i}`, image_base64 }] },
        }),
      ),
    ]);
    const over = rs.filter((r) => r.status === 503);
    assert.ok(over.length >= 1, `statuses ${rs.map((r) => r.status)}`);
    assert.ok(
      rs.every((r) => r.status === 200 || r.status === 503),
      `statuses ${rs.map((r) => r.status)}`,
    );
    // Images wait their turn before they are decoded (the embedder's image queue), then the detector's.
    rs.forEach((r) => {
      if (r.status !== 503) return;
      assert.equal(r.headers.get('retry-after'), '1');
      const queues = ['embedding image', 'centernet-coco'];
      const message = queues
        .map((q) => `The ${q} inference queue is full; retry after 1 s`)
        .find((m) => m === r.body.error?.message);
      assert.deepEqual(r.body, {
        error: {
          type: 'overloaded_error',
          code: 'overloaded',
          message: message ?? `one of ${queues.join(', ')}`,
          param: null,
        },
      });
    });
    const indexed = rs.slice(10).filter((r) => r.status === 200).length;
    assert.equal(
      (await api(small, `/v1/vectors/collections/${id}`)).body.item_count,
      indexed,
      'a refused index request stores nothing',
    );
  } finally {
    await small.close();
  }
});

test('with OCR on (SIGHTFLOW_VECTORS_OCR): two image searches sent together read their text at once, neither waits for the other', async () => {
  const two = await startTestApp({
    SIGHTFLOW_METRICS_PORT: '0',
    SIGHTFLOW_INFERENCE_SESSIONS: '2',
    SIGHTFLOW_VECTORS_OCR: 'true',
  });
  try {
    const created = await api(two, '/v1/vectors/collections', { method: 'POST', json: { name: 'signs' } });
    assert.equal(created.status, 201, created.text);
    const page = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="900" height="320"><rect width="100%" height="100%" fill="#fff"/>${[
        'Harbour Street 17',
        'Opening hours daily',
        'Closed Sunday',
      ]
        .map(
          (l, i) => `<text x="40" y="${80 + 90 * i}" font-family="DejaVu Sans" font-size="40" fill="#111">${l}</text>`,
        )
        .join('')}</svg>`,
    );
    const image_base64 = (await sharp(page).png().toBuffer()).toString('base64');
    const search = async () => {
      const started = performance.now();
      const r = await api(two, `/v1/vectors/collections/${created.body.id as string}/search`, {
        method: 'POST',
        json: { image_base64 },
      });
      assert.equal(r.status, 200, r.text);
      return performance.now() - started;
    };
    await search(); // the models load
    // The embedder's OCR queue; one image at a time, the second would have waited about the first one's reading.
    const { items, waitedMs, took } = await waitedTogether(two.app.metricsPort!, 'embedding ocr', search);
    assert.equal(items, 2);
    assert.ok(
      waitedMs < 0.5 * Math.min(...took),
      `the two images waited ${waitedMs.toFixed(0)} ms in all; the searches took ${took.map((x) => x.toFixed(0))} ms`,
    );
  } finally {
    await two.close();
  }
});
