// POST /v1/vision/describe with the built-in describer through the real server: English and Chinese
// descriptions of labelled COCO photos name their objects, count questions are answered with the detected
// count, readable text is quoted, prompts it cannot answer are said to be so, languages and usage.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { DESCRIBE_CONFIDENCE } from '../../src/vision/describe/describer.js';
import { imageTokens, textTokens } from '../../src/usage/tokens.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

const photo = (name: string) =>
  `data:image/jpeg;base64,${readFileSync(join(cocoDir(), 'images', `${name}.jpg`)).toString('base64')}`;
const describe = (json: Record<string, unknown>) => api(t, '/v1/vision/describe', { method: 'POST', json });

test('English and Chinese descriptions of the same photo name its labelled objects', { skip: cocoSkip }, async () => {
  for (const [name, en, zh] of [
    ['000000000025', /giraffe/, /长颈鹿/],
    ['000000000081', /airplane/, /飞机/],
    ['000000000073', /motorcycle/, /摩托车/],
  ] as const) {
    const e = await describe({ image_base64: photo(name) });
    assert.equal(e.status, 200, e.text);
    assert.deepEqual(Object.keys(e.body).sort(), ['description', 'model', 'usage']);
    assert.equal(e.body.model, 'sightflow-describe-v1');
    assert.match(e.body.description, en);
    assert.match(e.body.description, /^[A-Z].*\.$/s, 'sentences');
    const c = await describe({ image_base64: photo(name), language: 'zh' });
    assert.equal(c.status, 200, c.text);
    assert.match(c.body.description, zh);
    assert.match(c.body.description, /。$/);
    assert.doesNotMatch(
      c.body.description.replace(/“[^”]*”/g, ''),
      /[a-z]{3,}/i,
      'no English words in the Chinese text (quoted text aside)',
    );
  }
});

test('high detail gives positions, colours and the scene; low detail names and counts', {
  skip: cocoSkip,
}, async () => {
  const high = await describe({ image_base64: photo('000000000081'), detail: 'high' });
  assert.match(high.body.description, /This looks like an airport or the sky\./);
  assert.match(high.body.description, /an? (\w+ )?airplane (in|on) the (left|right|centre)/);
  assert.match(high.body.description, /"AIRFRANCE"/, 'readable text is quoted');
  const low = await describe({ image_base64: photo('000000000081'), detail: 'low' });
  assert.match(low.body.description, /The picture shows an airplane\./);
  assert.doesNotMatch(low.body.description, /"/, 'low detail reads no text');
  assert.equal(low.body.usage.input_tokens, 85);
  assert.ok(high.body.usage.input_tokens > 85);
});

test('a count question is answered with the detected count (English and Chinese)', { skip: cocoSkip }, async () => {
  const name = '000000000077';
  const det = await api(t, '/v1/vision/detect', {
    method: 'POST',
    json: { image_base64: photo(name), classes: ['person'], confidence_threshold: DESCRIBE_CONFIDENCE },
  });
  const n = det.body.objects.length;
  assert.ok(n >= 2, `persons detected: ${n}`);
  const en = await describe({
    image_base64: photo(name),
    prompt: 'How many people are in this photo?',
    detail: 'high',
  });
  assert.equal(en.status, 200);
  assert.match(en.body.description, new RegExp(`^There are ${n} people in the picture`));
  const zh = await describe({ image_base64: photo(name), prompt: '图中有几个人？', language: 'zh', detail: 'high' });
  assert.match(zh.body.description, new RegExp(`^图中有${n}个人`));
  const none = await describe({ image_base64: photo(name), prompt: 'how many giraffes?' });
  assert.equal(none.body.description, 'I cannot see any giraffes in this picture.');
});

test('prompts: focus on named classes, yes/no, text, and a plain "cannot" for what the model cannot answer', {
  skip: cocoSkip,
}, async () => {
  const img = photo('000000000074'); // a dog and people
  const focus = await describe({ image_base64: img, prompt: 'Describe the dog', detail: 'high' });
  assert.match(focus.body.description, /^The picture shows an? (\w+ )?dog/);
  assert.doesNotMatch(focus.body.description, /people|person/);
  const yes = await describe({ image_base64: img, prompt: 'Is there a dog?' });
  assert.match(yes.body.description, /^Yes, there is an? (\w+ )?dog/);
  const no = await describe({ image_base64: img, prompt: 'Are there any cats?' });
  assert.equal(no.body.description, 'No, I cannot see any cats in this picture.');
  const zhNo = await describe({ image_base64: img, prompt: '有没有猫？', language: 'zh' });
  assert.equal(zhNo.body.description, '没有，图中没有看到猫。');
  const why = await describe({ image_base64: img, prompt: 'Why is the dog happy?' });
  assert.match(
    why.body.description,
    /^The built-in describer cannot answer that question; it can name, count and locate common objects .* Here is what it sees: The picture shows an? (\w+ )?dog/,
  );
  const clouds = await describe({ image_base64: img, prompt: 'How many clouds are in the sky?' });
  assert.match(clouds.body.description, /^The built-in model cannot count clouds: /);
});

test('readable text is quoted; a picture without known objects says so', async () => {
  const sign = await sharp(
    Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="800" height="500"><rect width="100%" height="100%" fill="#1d4ed8"/>
    <text x="120" y="270" font-family="DejaVu Sans" font-size="90" font-weight="bold" fill="#fff">OPEN DAILY</text></svg>`),
  )
    .png()
    .toBuffer();
  const r = await describe({ image_base64: sign.toString('base64') });
  assert.equal(r.status, 200);
  assert.equal(
    r.body.description,
    'The built-in model does not recognise any of the objects it knows in this picture. The text in the picture reads "OPEN DAILY". The main colour is blue.',
  );
  const zh = await describe({ image_base64: sign.toString('base64'), language: 'zh' });
  assert.equal(
    zh.body.description,
    '内置模型在这张图片中没有识别出它认识的物体。图中可以读到的文字：“OPEN DAILY”。主要颜色是蓝色。',
  );
  const text = await describe({ image_base64: sign.toString('base64'), prompt: 'What does the sign say?' });
  assert.equal(text.body.description, 'The text in the picture reads "OPEN DAILY".');
});

test('language: en (default) and zh with region subtags; others are a 400 listing the supported ones', {
  skip: cocoSkip,
}, async () => {
  const img = photo('000000000025');
  assert.equal((await describe({ image_base64: img, language: 'en-GB', detail: 'low' })).status, 200);
  assert.match((await describe({ image_base64: img, language: 'zh-CN', detail: 'low' })).body.description, /长颈鹿/);
  const r = await describe({ image: 'http://127.0.0.1:1/never-fetched.jpg', language: 'fr' });
  assert.equal(r.status, 400);
  assert.deepEqual(r.body, {
    error: {
      type: 'invalid_request_error',
      code: 'unsupported_language',
      param: 'language',
      message: 'Expected a language the describer supports but received "fr"; supported: en, zh',
    },
  });
});

test('usage: image tokens at the detail used plus prompt tokens in, description tokens out; one ledger row', {
  skip: cocoSkip,
}, async () => {
  const prompt = 'How many giraffes are there?';
  const r = await describe({ image_base64: photo('000000000025'), prompt });
  assert.equal(r.status, 200);
  // 640x426: above one tile, so automatic detail is high.
  assert.deepEqual(r.body.usage, {
    input_tokens: imageTokens(640, 426, 'high') + (await textTokens(prompt)),
    output_tokens: await textTokens(r.body.description),
  });
  const rows = await t.app.services.usage.events(t.projectId);
  const row = rows[rows.length - 1]!;
  assert.deepEqual(
    [row.endpoint, row.model, Number(row.input_tokens), Number(row.output_tokens)],
    ['/v1/vision/describe', 'sightflow-describe-v1', r.body.usage.input_tokens, r.body.usage.output_tokens],
  );
});
