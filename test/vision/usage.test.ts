// The published usage formula (docs/api.md, "Usage"): image tokens by tiles, text tokens with o200k_base; and
// every vision endpoint reporting it, with the ledger holding one row per request with the same numbers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { autoDetail, billedSize, imageTokens, textTokens } from '../../src/usage/tokens.js';
import { USAGE_BATCH_MS, UsageLedger } from '../../src/usage/ledger.js';

test('image tokens: 85 at low detail; 85 + 170 per 512 tile of the scaled image at high', () => {
  assert.equal(imageTokens(4000, 3000, 'low'), 85);
  assert.equal(imageTokens(10, 10, 'low'), 85);
  // Small images are not scaled up: one tile.
  assert.equal(imageTokens(300, 200, 'high'), 85 + 170);
  assert.equal(imageTokens(512, 512, 'high'), 85 + 170);
  assert.equal(imageTokens(513, 512, 'high'), 85 + 2 * 170);
  // 1024x1024 -> 768x768 -> 2x2 tiles (the published worked example: 765).
  assert.deepEqual(billedSize(1024, 1024), { width: 768, height: 768 });
  assert.equal(imageTokens(1024, 1024, 'high'), 765);
  // 2048x4096 -> fits 1024x2048 -> 768x1536 -> 2x3 tiles = 1105.
  assert.deepEqual(billedSize(2048, 4096), { width: 768, height: 1536 });
  assert.equal(imageTokens(2048, 4096, 'high'), 1105);
  assert.equal(imageTokens(640, 480, 'high'), 85 + 2 * 170);
});

test('automatic detail: low up to 512x512, high above', () => {
  assert.equal(autoDetail(512, 384), 'low');
  assert.equal(autoDetail(513, 10), 'high');
  assert.equal(autoDetail(640, 480), 'high');
});

test('text tokens are o200k_base tokens', async () => {
  assert.equal(await textTokens(''), 0);
  assert.equal(await textTokens('hello world'), 2);
  assert.equal(await textTokens('The picture shows two giraffes.'), 7);
  assert.ok((await textTokens('图中有两只长颈鹿。')) > 0);
});

test('text that spells a special token is counted as the text it is', async () => {
  // `<|endoftext|>` in a prompt or in text read from an image is text to bill, not a control token (nor a refusal).
  for (const text of ['<|endoftext|>', 'say <|endofprompt|> twice <|endoftext|>', '<|im_start|>']) {
    const n = await textTokens(text);
    assert.ok(n > 1, `${text}: ${n}`);
  }
});

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

test('each endpoint reports usage by the formula and the ledger has the same numbers, one row per request', async () => {
  // 700x300 with a word on it: above one tile (high), two tiles wide.
  const png = await sharp(
    Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="700" height="300"><rect width="100%" height="100%" fill="#fff"/>
    <text x="60" y="180" font-family="DejaVu Sans" font-size="80" fill="#000">Bakery</text></svg>`),
  )
    .png()
    .toBuffer();
  const image_base64 = png.toString('base64');
  const high = imageTokens(700, 300, 'high');
  assert.equal(high, 85 + 2 * 170);
  const prompt = 'What does the sign say? <|endoftext|>';
  const calls = [
    { endpoint: '/v1/vision/detect', json: { image_base64 } },
    { endpoint: '/v1/vision/ocr', json: { image_base64 } },
    { endpoint: '/v1/vision/describe', json: { image_base64, prompt } },
    { endpoint: '/v1/vision/describe', json: { image_base64, detail: 'low' } },
  ];
  const bodies: any[] = [];
  for (const c of calls) {
    const r = await api(t, c.endpoint, { method: 'POST', json: c.json });
    assert.equal(r.status, 200, r.text);
    bodies.push(r.body);
  }
  const [detect, ocr, describe, low] = bodies;
  assert.deepEqual(detect.usage, {
    input_tokens: high,
    output_tokens: await textTokens(JSON.stringify(detect.objects)),
  });
  assert.equal(ocr.text, 'Bakery');
  assert.deepEqual(ocr.usage, { input_tokens: high, output_tokens: await textTokens('Bakery') });
  assert.equal(describe.description, 'The text in the picture reads "Bakery".');
  assert.deepEqual(describe.usage, {
    input_tokens: high + (await textTokens(prompt)),
    output_tokens: await textTokens(describe.description),
  });
  assert.deepEqual(low.usage, { input_tokens: 85, output_tokens: await textTokens(low.description) });

  const rows = await t.app.services.usage.events(t.projectId);
  assert.equal(rows.length, calls.length);
  rows.forEach((row, i) => {
    assert.deepEqual(
      {
        endpoint: row.endpoint,
        model: row.model,
        input_tokens: Number(row.input_tokens),
        output_tokens: Number(row.output_tokens),
      },
      { endpoint: calls[i]!.endpoint, model: bodies[i].model, ...bodies[i].usage },
    );
    assert.ok(Number(row.ms) >= 1, 'the time taken is recorded');
    assert.ok(row.key_id);
  });
  const admin = await api(t, `/admin/v1/projects/${t.projectId}/usage`, {
    headers: { authorization: `Bearer ${t.adminToken}` },
  });
  const sum = (k: 'input_tokens' | 'output_tokens') => bodies.reduce((s, b) => s + b.usage[k], 0);
  assert.equal(admin.body.data[0].requests, calls.length);
  assert.equal(admin.body.data[0].input_tokens, sum('input_tokens'));
  assert.equal(admin.body.data[0].output_tokens, sum('output_tokens'));
});

test('rows after a reply are written together within the batch window; reads, flush and a failed write behave', async () => {
  const db = t.app.services.db;
  const failures: string[] = [];
  const ledger = new UsageLedger(db, (err, e) => failures.push(`${e.endpoint}: ${(err as Error).message}`));
  const projectId = t.projectId;
  const count = async () =>
    Number((await db.query('SELECT count(*)::int AS n FROM usage_events WHERE endpoint = $1', ['/test/batch']))[0]!.n);
  for (let i = 0; i < 20; i++) ledger.recordAfterReply({ projectId, endpoint: '/test/batch', inputTokens: i });
  assert.equal(await count(), 0, 'nothing written before the window ends');
  await new Promise((r) => setTimeout(r, USAGE_BATCH_MS + 100));
  assert.equal(await count(), 20, 'the window wrote every row');
  for (let i = 20; i < 25; i++) ledger.recordAfterReply({ projectId, endpoint: '/test/batch', inputTokens: i });
  const rows = (await ledger.events(projectId)).filter((r) => r.endpoint === '/test/batch');
  assert.deepEqual(
    rows.map((r) => Number(r.input_tokens)),
    Array.from({ length: 25 }, (_, i) => i),
    'a read waits for queued rows, in order',
  );
  // A row the database refuses (no project) reaches onError alone: the rows batched with it are written.
  ledger.recordAfterReply({ projectId, endpoint: '/test/batch' });
  ledger.recordAfterReply({ projectId: null as unknown as string, endpoint: '/test/batch' });
  ledger.recordAfterReply({ projectId, endpoint: '/test/batch' });
  await ledger.flush();
  assert.equal(failures.length, 1, failures.join('; '));
  assert.match(failures[0]!, /^\/test\/batch: .*null/);
  assert.equal(await count(), 27);
  // Every column of a batched row as given (the batch goes as one array a column).
  const full = { endpoint: '/test/batch-full', model: 'm', inputTokens: 7, outputTokens: 9, frames: 3, ms: 12.4 };
  const keyId = (await t.app.services.projects.listKeys(projectId))[0]!.id;
  ledger.recordAfterReply({ projectId, keyId, ...full });
  ledger.recordAfterReply({ projectId, keyId: null, ...full, model: null });
  // Characters an array literal must escape, in a model's name.
  ledger.recordAfterReply({ projectId, keyId, ...full, model: "a,{b}\"c\\d NULL 'e' " });
  ledger.recordAfterReply({ projectId, keyId, ...full, model: 'NULL' });
  await ledger.flush();
  const written = (await ledger.events(projectId)).filter((r) => r.endpoint === '/test/batch-full');
  assert.deepEqual(
    written.map((r) => [r.key_id, r.model, r.input_tokens, r.output_tokens, r.frames, r.ms].map(String)),
    [
      [keyId, 'm', '7', '9', '3', '12'],
      ['null', 'null', '7', '9', '3', '12'],
      [keyId, "a,{b}\"c\\d NULL 'e' ", '7', '9', '3', '12'],
      [keyId, 'NULL', '7', '9', '3', '12'],
    ],
  );
});
