// VisionService called directly (no HTTP): real database, real detector/OCR models. Each use case returns
// its result with usage by the published formula and bills exactly one ledger row with the same numbers;
// bad input is refused before any work and bills nothing; a caller gone before the answer is not billed.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { openTestServices, type TestServices } from '../helpers/app.js';
import { VisionService } from '../../src/vision/vision.service.js';
import { imageTokens, textTokens } from '../../src/usage/tokens.js';
import { ApiError } from '../../src/base/errors.js';

let t: TestServices;
let vision: VisionService;
let image_base64: string;
before(async () => {
  t = await openTestServices();
  vision = new VisionService(t.s);
  await t.s.models.ready;
  image_base64 = (
    await sharp(
      Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="700" height="300"><rect width="100%" height="100%" fill="#fff"/>
    <text x="60" y="180" font-family="DejaVu Sans" font-size="80" fill="#000">Bakery</text></svg>`),
    )
      .png()
      .toBuffer()
  ).toString('base64');
});
after(async () => {
  await t?.close();
});

test('detect, ocr and describe return usage by the formula and bill one row each', async () => {
  const high = imageTokens(700, 300, 'high');
  const detect = await vision.detect(t.caller(), { image_base64 });
  assert.deepEqual(detect.usage, {
    input_tokens: high,
    output_tokens: await textTokens(JSON.stringify(detect.objects)),
  });
  const ocr = await vision.ocr(t.caller(), { image_base64 });
  assert.equal(ocr.text, 'Bakery');
  assert.deepEqual(ocr.usage, { input_tokens: high, output_tokens: await textTokens('Bakery') });
  const describe = await vision.describe(t.caller(), { image_base64, detail: 'low' });
  assert.deepEqual(describe.usage, { input_tokens: 85, output_tokens: await textTokens(describe.description) });

  const rows = await t.s.usage.events(t.projectId);
  const results = [detect, ocr, describe];
  assert.deepEqual(
    rows.map((r) => r.endpoint),
    ['/v1/vision/detect', '/v1/vision/ocr', '/v1/vision/describe'],
  );
  rows.forEach((r, i) => {
    assert.equal(r.model, results[i]!.model);
    assert.equal(r.key_id, t.keyId);
    assert.equal(Number(r.input_tokens), results[i]!.usage.input_tokens);
    assert.equal(Number(r.output_tokens), results[i]!.usage.output_tokens);
  });
});

test('invalid input is an ApiError before any work and bills nothing; an aborted caller is not billed', async () => {
  const before = (await t.s.usage.events(t.projectId)).length;
  await assert.rejects(
    vision.detect(t.caller(), { image_base64, classes: ['unicorn'] }),
    (e) => e instanceof ApiError && e.status === 400,
  );
  await assert.rejects(
    vision.describe(t.caller(), { image_base64, language: 'xx' }),
    (e) => e instanceof ApiError && e.status === 400,
  );
  const gone = new AbortController();
  gone.abort(new Error('caller went away'));
  await assert.rejects(vision.detect(t.caller(gone.signal), { image_base64 }));
  assert.equal((await t.s.usage.events(t.projectId)).length, before);
});
