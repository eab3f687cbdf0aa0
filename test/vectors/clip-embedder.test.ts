// Bring-your-own CLIP end to end: a tiny CLIP-shaped model generated into the data dir's manifests folder,
// a real server on port 0. It is listed with its dimensions, collections embed with it, text finds the
// image of the colour it names, an image finds its near-duplicate, audio is a documented 400, and bad
// manifests beside it (bad key, missing files, wrong output name) are logged and reported while the
// server runs. Embeddings are checked number for number against a JS computation of the same model.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import sharp from 'sharp';
import { projectRoot } from '../../src/base/paths.js';
import { modelsCli } from '../../src/models/models-cli.js';
import { CLIP_MEAN, CLIP_STD } from '../../src/inference/clip-manifest.js';
import { ClipEmbedder } from '../../src/vectors/embedders/clip.js';
import { normalize } from '../../src/vectors/embedders/embedder.js';
import { textTokens } from '../../src/usage/tokens.js';
import type { LoadedImage } from '../../src/media/image-input.js';
import { startTestApp, api, type TestApp } from '../helpers/app.js';
import { colourVector, DIMS, referenceImageEmbedding, SIZE, writeTinyClip } from '../helpers/tiny-clip.js';

const ID = 'tiny-clip';
const modelsDir = process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models');
const logLines: string[] = [];
let t: TestApp;
let dataDir: string;

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'sightflow-clip-'));
  await writeTinyClip(dataDir, ID);
  const manifests = join(dataDir, 'manifests');
  // A typo in a key, and a valid manifest whose files are not there: both skipped, neither stops the server.
  await writeFile(
    join(manifests, 'typo-clip.json'),
    JSON.stringify({
      id: 'typo-clip',
      family: 'clip',
      vision: { file: 'v.onnx' },
      text: { file: 't.onnx' },
      tokenizer: 'tokenizer.json',
      image_sise: 224,
    }),
  );
  // Files that load, but a wrong output name: the model is left out with a message saying what to set.
  await writeFile(
    join(manifests, 'wrong-clip.json'),
    JSON.stringify({
      id: 'wrong-clip',
      family: 'clip',
      vision: { file: `${ID}/onnx/vision_model.onnx`, output: 'pooler_output' },
      text: { file: `${ID}/onnx/text_model.onnx` },
      tokenizer: `${ID}/tokenizer.json`,
    }),
  );
  await writeFile(
    join(manifests, 'gone-clip.json'),
    JSON.stringify({
      id: 'gone-clip',
      family: 'clip',
      vision: { file: 'gone/v.onnx' },
      text: { file: 'gone/t.onnx' },
      tokenizer: 'gone/tokenizer.json',
    }),
  );
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  t = await startTestApp({}, { dataDir, log: pino({ level: 'info' }, sink) });
  // /readyz waits for model preparation and for the CLIP model's first load.
  const until = Date.now() + 60_000;
  while ((await api(t, '/readyz', { key: null })).status !== 200) {
    if (Date.now() > until) throw new Error('server not ready in 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
});

after(async () => {
  await t?.close();
  await rm(dataDir, { recursive: true, force: true });
  // Prepared copies land in the shared models dir; leave it as it was.
  for (const id of [ID, 'gone-clip', 'wrong-clip'])
    for (const part of ['vision', 'text']) await rm(join(modelsDir, `${id}.${part}`), { recursive: true, force: true });
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
/** Left half one colour, right half another. */
const split = async (w = 320, h = 240) =>
  await sharp({ create: { width: w, height: h, channels: 3, background: { r: 230, g: 30, b: 30 } } })
    .composite([
      {
        input: { create: { width: w / 2, height: h, channels: 3, background: { r: 20, g: 40, b: 220 } } },
        left: w / 2,
        top: 0,
      },
    ])
    .png()
    .toBuffer();
const dot = (a: ArrayLike<number>, b: ArrayLike<number>) => Array.from(a).reduce((s, v, i) => s + v * b[i]!, 0);

/** `sightflow models ...` on the test's data dir, capturing what it prints. */
async function cli(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const [log, error] = [console.log, console.error];
  console.log = (...a: unknown[]) => {
    out.push(a.join(' '));
  };
  console.error = (...a: unknown[]) => {
    err.push(a.join(' '));
  };
  try {
    return { code: await modelsCli(args, dataDir), out: out.join('\n'), err: err.join('\n') };
  } finally {
    [console.log, console.error] = [log, error];
  }
}

async function clipCollection(name: string): Promise<string> {
  const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name, model_id: ID } });
  assert.equal(r.status, 201, r.text);
  return r.body.id;
}

test('models: the CLIP model is listed with the dimensions its encoders output; broken ones are not', async () => {
  const r = await api(t, '/v1/vectors/models');
  assert.equal(r.status, 200);
  assert.deepEqual(
    r.body.models.find((m: { id: string }) => m.id === ID),
    { id: ID, name: 'Tiny CLIP (test)', types: ['image', 'text'], dimensions: DIMS, metric: 'COSINE' },
  );
  assert.ok(r.body.models.some((m: { id: string }) => m.id === 'multimodal-embedding-v1'));
  assert.deepEqual(
    r.body.models.map((m: { id: string }) => m.id).filter((id: string) => /typo|gone|wrong/.test(id)),
    [],
  );
});

test('bad manifests: logged at start, reported by `sightflow models`, and their ids are 400 at creation', async () => {
  const errorsLogged = logLines
    .map((l) => JSON.parse(l) as { level: number; msg: string })
    .filter((l) => l.level >= 50)
    .map((l) => l.msg);
  assert.ok(
    errorsLogged.some((m) => /typo-clip\.json: \(root\): Unrecognized key: "image_sise"/.test(m)),
    errorsLogged.join('\n'),
  );
  assert.ok(
    errorsLogged.some((m) => /gone-clip\.vision could not be prepared: .*gone\/v\.onnx is missing/.test(m)),
    errorsLogged.join('\n'),
  );
  assert.ok(
    errorsLogged.some((m) => /embedding model gone-clip is unavailable/.test(m)),
    errorsLogged.join('\n'),
  );
  assert.ok(
    errorsLogged.includes(
      'embedding model wrong-clip is unavailable: the vision encoder has no output named pooler_output (it has image_embeds, last_hidden_state); set vision.output in the manifest',
    ),
    errorsLogged.join('\n'),
  );

  const list = await cli(['list']);
  assert.equal(list.code, 0);
  assert.match(list.err, /skipped: model manifest .*typo-clip\.json: \(root\): Unrecognized key: "image_sise"/);
  assert.match(list.out, /tiny-clip\.vision +embed-image +onnx/);
  assert.match(list.out, /embedding model tiny-clip: clip \(tiny-clip\.vision \+ tiny-clip\.text/);
  // The family id stands for both encoders; a skipped manifest fails verify.
  const verify = await cli(['verify', ID]);
  assert.equal(verify.code, 1);
  assert.deepEqual(
    verify.out.split('\n').map((l) => l.slice(5).split(':')[0]),
    ['tiny-clip.vision', 'tiny-clip.text'],
  );

  for (const id of ['typo-clip', 'gone-clip', 'wrong-clip', 'nope']) {
    const r = await api(t, '/v1/vectors/collections', { method: 'POST', json: { name: `m-${id}`, model_id: id } });
    assert.equal(r.status, 400);
    assert.deepEqual(
      r.body,
      invalid(
        'invalid_parameter',
        `Expected an installed embedding model id (multimodal-embedding-v1, ${ID}) for model_id but received "${id}"`,
        'model_id',
      ),
    );
  }
});

test('collections embed with their model: text finds the image of its colour, an image its near-duplicate', async () => {
  const id = await clipCollection('colours');
  const got = await api(t, `/v1/vectors/collections/${id}`);
  assert.deepEqual([got.body.model_id, got.body.dimensions, got.body.metric], [ID, DIMS, 'COSINE']);
  const splitPng = await split();
  const items = [
    { image_base64: await png(255, 0, 0), metadata: { name: 'red' } },
    { image_base64: await png(0, 255, 0), metadata: { name: 'green' } },
    { image_base64: await png(0, 0, 255), metadata: { name: 'blue' } },
    { image_base64: splitPng.toString('base64'), metadata: { name: 'split' } },
    { text: 'a photo of a cat', metadata: { name: 'cat text' } },
    { text: 'green', metadata: { name: 'green text' } },
  ];
  const r = await api(t, `/v1/vectors/collections/${id}/index`, { method: 'POST', json: { items } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.indexed, 6);
  assert.equal(r.body.model, ID);
  // Images up to 512 px are 85 tokens (low detail); text in o200k tokens.
  assert.deepEqual(r.body.usage, {
    input_tokens: 4 * 85 + (await textTokens('a photo of a cat')) + (await textTokens('green')),
  });

  const search = async (json: object) => {
    const s = await api(t, `/v1/vectors/collections/${id}/search`, { method: 'POST', json: { top_k: 6, ...json } });
    assert.equal(s.status, 200, s.text);
    assert.equal(s.body.model, ID);
    return s.body as { results: { score: number; metadata: { name: string } }[]; usage: { input_tokens: number } };
  };
  for (const colour of ['red', 'blue']) {
    const s = await search({ text: colour });
    assert.equal(s.results[0]!.metadata.name, colour);
    assert.ok(s.results[0]!.score > 0.999, `${colour}: ${s.results[0]!.score}`);
    assert.ok(s.results[1]!.score < 0.95, `${colour} runner-up: ${s.results[1]!.score}`);
    assert.deepEqual(s.usage, { input_tokens: await textTokens(colour) });
  }
  // A solid green image: its own copy and the word "green" are the same direction.
  const g = await search({ image_base64: await png(0, 255, 0, 300, 200) });
  assert.deepEqual(
    g.results
      .slice(0, 2)
      .map((x) => x.metadata.name)
      .sort(),
    ['green', 'green text'],
  );
  assert.ok(g.results[1]!.score > 0.999);
  // A smaller, JPEG-compressed copy of the split image finds the split image first.
  const copy = await sharp(splitPng).resize(160, 120).jpeg({ quality: 40 }).toBuffer();
  const d = await search({ image_base64: copy.toString('base64') });
  assert.equal(d.results[0]!.metadata.name, 'split');
  assert.ok(d.results[0]!.score > 0.99, `near-duplicate ${d.results[0]!.score}`);
  assert.ok(d.results[0]!.score - d.results[1]!.score > 0.05);
});

test('audio is a 400 naming the field, for index and search, before anything is fetched or stored', async () => {
  const id = await clipCollection('no-audio');
  const wav = Buffer.concat([Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'), Buffer.alloc(64)]).toString(
    'base64',
  );
  const message = (param: string) =>
    `Expected image or text content for ${param} (the collection's model ${ID} embeds image, text) but received audio`;
  const idx = await api(t, `/v1/vectors/collections/${id}/index`, {
    method: 'POST',
    json: { items: [{ text: 'red' }, { audio: wav }] },
  });
  assert.equal(idx.status, 400);
  assert.deepEqual(idx.body, invalid('unsupported_modality', message('items[1].audio'), 'items[1].audio'));
  const byUrl = await api(t, `/v1/vectors/collections/${id}/search`, {
    method: 'POST',
    json: { audio: 'http://127.0.0.1:9/never-fetched.wav' },
  });
  assert.equal(byUrl.status, 400);
  assert.deepEqual(byUrl.body, invalid('unsupported_modality', message('audio'), 'audio'));
  assert.equal((await api(t, `/v1/vectors/collections/${id}`)).body.item_count, 0, 'nothing of the request was stored');
});

test('embeddings equal a JS computation of the same model (preprocessing and tokenizer included)', async () => {
  const clip = t.app.services.models.registry.clip.find((c) => c.manifest.id === ID)!;
  const e = new ClipEmbedder(clip, t.app.services.models, t.app.services.log);
  await e.start();
  assert.equal(e.status, 'ready');
  // 300x224 noise: no resize, the crop is columns 38-261; any offset, channel or layout slip shows.
  const [w, h] = [300, 224];
  const data = Buffer.alloc(w * h * 3);
  let seed = 99;
  for (let i = 0; i < data.length; i++) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    data[i] = seed >> 23;
  }
  const image: LoadedImage = { data, width: w, height: h, channels: 3, format: 'png', bytes: Buffer.alloc(0) };
  const px = new Float32Array(3 * SIZE * SIZE);
  for (let c = 0; c < 3; c++) {
    for (let y = 0; y < SIZE; y++)
      for (let x = 0; x < SIZE; x++)
        px[c * SIZE * SIZE + y * SIZE + x] = (data[(y * w + x + 38) * 3 + c]! / 255 - CLIP_MEAN[c]) / CLIP_STD[c];
  }
  const want = normalize(referenceImageEmbedding(px));
  const got = await e.embed({ kind: 'image', image });
  assert.equal(got.vector.length, DIMS);
  for (let i = 0; i < DIMS; i++)
    assert.ok(Math.abs(got.vector[i]! - want[i]!) < 1e-5, `dim ${i}: ${got.vector[i]} vs ${want[i]}`);
  assert.deepEqual(got.usage, { input_tokens: 85 });
  // "red" = start (zero), red</w>, end (zero), padding masked out: the direction of the red colour vector.
  const red = await e.embed({ kind: 'text', text: 'Red' });
  const redWant = normalize(Float32Array.from([...colourVector([255, 0, 0]), 0, 0, 0, 0, 0]));
  assert.ok(dot(red.vector, redWant) > 1 - 1e-6, `${dot(red.vector, redWant)}`);
  await assert.rejects(e.embed({ kind: 'audio', bytes: Buffer.alloc(0), param: 'audio' }), {
    status: 400,
    code: 'unsupported_modality',
  });
});
