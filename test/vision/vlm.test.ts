// The VLM provider's contract against a small local server speaking the chat-completions wire format: the
// request we send (model, key, prompt + data-URI image part), plain and streamed replies, usage from the
// reply or by our formula, failures (502) and the fallback to the built-in describer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { join } from 'node:path';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { cocoDir, cocoSkip } from '../helpers/eval-data.js';
import { imageTokens, textTokens } from '../../src/usage/tokens.js';
import { vlmPromptText } from '../../src/vision/vlm-provider.js';
import { loadConfig } from '../../src/config/index.js';

type Mode = 'json' | 'sse' | 'sse-no-usage' | 'error' | 'hang';
let mode: Mode = 'json';
const seen: { method: string; url: string; headers: IncomingMessage['headers']; body: any }[] = [];
let vlm: Server;
let plain: TestApp; // not streaming, no fallback
let streaming: TestApp; // streaming, falls back to the built-in describer
const ANSWER = 'Two giraffes stand among trees.';

function reply(res: import('node:http').ServerResponse): void {
  const chunk = (delta: object, extra: object = {}) =>
    `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', model: 'tiny-vlm', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;
  switch (mode) {
    case 'json':
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          model: 'tiny-vlm',
          choices: [{ index: 0, message: { role: 'assistant', content: ANSWER }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 812, completion_tokens: 9, total_tokens: 821 },
        }),
      );
      return;
    case 'sse':
    case 'sse-no-usage':
      res.setHeader('content-type', 'text/event-stream');
      res.write(chunk({ role: 'assistant', content: '' }));
      for (const piece of ['Two giraffes', ' stand among', ' trees.']) res.write(chunk({ content: piece }));
      if (mode === 'sse')
        res.write(
          `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 790, completion_tokens: 7 } })}\n\n`,
        );
      res.end('data: [DONE]\n\n');
      return;
    case 'error':
      res.statusCode = 500;
      res.setHeader('content-type', 'application/json');
      res.end('{"error":{"message":"model exploded"}}');
      return;
    case 'hang':
      return;
  }
}

async function appWith(env: Record<string, string>): Promise<TestApp> {
  return startTestApp(env);
}

before(async () => {
  if (cocoSkip) return; // only the configuration test runs, and it needs no server
  vlm = createServer((req, res) => {
    let data = '';
    req.on('data', (d) => {
      data += d;
    });
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, body: JSON.parse(data) });
      reply(res);
    });
  });
  await new Promise<void>((r) => vlm.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(vlm.address() as { port: number }).port}/v1`;
  plain = await appWith({
    SIGHTFLOW_VLM_URL: base,
    SIGHTFLOW_VLM_MODEL: 'tiny-vlm',
    SIGHTFLOW_VLM_KEY: 'vlm-secret',
    SIGHTFLOW_VLM_TIMEOUT_MS: '1500',
  });
  streaming = await appWith({
    SIGHTFLOW_VLM_URL: `${base}/chat/completions`,
    SIGHTFLOW_VLM_MODEL: 'tiny-vlm',
    SIGHTFLOW_VLM_STREAM: 'true',
    SIGHTFLOW_VLM_FALLBACK: 'true',
    SIGHTFLOW_VLM_TIMEOUT_MS: '1500',
  });
});
after(async () => {
  vlm?.closeAllConnections();
  vlm?.close();
  await plain?.close();
  await streaming?.close();
});

// Empty without the evaluation data: every test that sends it is skipped then.
const jpeg = cocoSkip ? Buffer.alloc(0) : readFileSync(join(cocoDir(), 'images', '000000000025.jpg')); // 640x426: automatic detail is high
const describe = (app: TestApp, json: Record<string, unknown>) =>
  api(app, '/v1/vision/describe', { method: 'POST', json });
const lastRow = async (app: TestApp) => (await app.app.services.usage.events(app.projectId)).at(-1);

test('a plain reply: the request we send, the text, the model and the usage it reports', {
  skip: cocoSkip,
}, async () => {
  mode = 'json';
  seen.length = 0;
  const r = await describe(plain, {
    image_base64: `data:image/jpeg;base64,${jpeg.toString('base64')}`,
    prompt: 'What is in the picture?',
  });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(r.body, { description: ANSWER, model: 'tiny-vlm', usage: { input_tokens: 812, output_tokens: 9 } });
  assert.equal(seen.length, 1);
  const req = seen[0]!;
  assert.equal(req.method, 'POST');
  assert.equal(req.url, '/v1/chat/completions');
  assert.equal(req.headers.authorization, 'Bearer vlm-secret');
  assert.equal(req.headers['content-type'], 'application/json');
  assert.deepEqual(req.body, {
    model: 'tiny-vlm',
    messages: [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in the picture?' },
          {
            type: 'image_url',
            image_url: { url: `data:image/jpeg;base64,${jpeg.toString('base64')}`, detail: 'high' },
          },
        ],
      },
    ],
    max_tokens: 512,
    stream: false,
  });
  const row = await lastRow(plain);
  assert.deepEqual(
    [row!.endpoint, row!.model, Number(row!.input_tokens), Number(row!.output_tokens)],
    ['/v1/vision/describe', 'tiny-vlm', 812, 9],
  );
});

test('a streamed reply even when none was asked for is read too; usage from its last chunk', {
  skip: cocoSkip,
}, async () => {
  mode = 'sse';
  const r = await describe(plain, { image_base64: jpeg.toString('base64'), detail: 'low' });
  assert.deepEqual(r.body, { description: ANSWER, model: 'tiny-vlm', usage: { input_tokens: 790, output_tokens: 7 } });
  assert.equal(seen.at(-1)!.body.messages[0].content[1].image_url.detail, 'low');
  assert.equal(
    seen.at(-1)!.body.messages[0].content[0].text,
    vlmPromptText(undefined, undefined),
    'a default prompt when none is given',
  );
});

test('any language code goes to the VLM; nonsense is still a 400', { skip: cocoSkip }, async () => {
  mode = 'json';
  const r = await describe(plain, {
    image_base64: jpeg.toString('base64'),
    language: 'fr',
    prompt: 'Décris cette image',
  });
  assert.equal(r.status, 200);
  assert.equal(seen.at(-1)!.body.messages[0].content[0].text, 'Décris cette image\n\nAnswer in French.');
  const bad = await describe(plain, { image_base64: jpeg.toString('base64'), language: 'not a language!' });
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.body, {
    error: {
      type: 'invalid_request_error',
      code: 'unsupported_language',
      param: 'language',
      message:
        'Expected a language the describer supports but received "not a language!"; supported: en, zh or any language code such as fr, de-CH (answered by the configured VLM)',
    },
  });
});

test('provider failures are a 502 (no fallback configured), not billed', { skip: cocoSkip }, async () => {
  const before = (await plain.app.services.usage.events(plain.projectId)).length;
  mode = 'error';
  const r = await describe(plain, { image_base64: jpeg.toString('base64') });
  assert.equal(r.status, 502);
  assert.deepEqual(r.body, {
    error: {
      type: 'api_error',
      code: 'vlm_provider_error',
      param: null,
      message: 'The vision-language model provider failed: HTTP 500: {"error":{"message":"model exploded"}}',
    },
  });
  mode = 'hang';
  const slow = await describe(plain, { image_base64: jpeg.toString('base64') });
  assert.equal(slow.status, 502);
  assert.deepEqual(slow.body, {
    error: {
      type: 'api_error',
      code: 'vlm_provider_error',
      param: null,
      message: 'The vision-language model provider failed: no reply within 1500 ms',
    },
  });
  assert.equal((await plain.app.services.usage.events(plain.projectId)).length, before);
});

test('streaming asked for: stream flags sent; without a usage block our formula counts', {
  skip: cocoSkip,
}, async () => {
  mode = 'sse-no-usage';
  const r = await describe(streaming, { image_base64: jpeg.toString('base64'), prompt: 'Describe it' });
  assert.equal(r.status, 200);
  const sent = seen.at(-1)!;
  assert.equal(sent.headers.authorization, undefined, 'no key configured, none sent');
  assert.equal(sent.body.stream, true);
  assert.deepEqual(sent.body.stream_options, { include_usage: true });
  assert.deepEqual(r.body, {
    description: ANSWER,
    model: 'tiny-vlm',
    usage: {
      input_tokens: imageTokens(640, 426, 'high') + (await textTokens('Describe it')),
      output_tokens: await textTokens(ANSWER),
    },
  });
});

test('with SIGHTFLOW_VLM_FALLBACK=true a failing provider hands over to the built-in describer', {
  skip: cocoSkip,
}, async () => {
  mode = 'error';
  const r = await describe(streaming, { image_base64: jpeg.toString('base64') });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.model, 'sightflow-describe-v1');
  assert.match(r.body.description, /giraffe/);
  assert.equal((await lastRow(streaming))!.model, 'sightflow-describe-v1');
  // A language only the VLM speaks cannot fall back.
  const fr = await describe(streaming, { image_base64: jpeg.toString('base64'), language: 'fr' });
  assert.equal(fr.status, 502);
});

test('a plain JPEG is decoded only to be checked: the VLM gets its bytes, usage its size, a fallback the whole photo', {
  skip: cocoSkip,
}, async () => {
  // 640x480 with no profile: the native decoder reads it, at 1/8 for a VLM (an ICC-tagged photo such as the one
  // above goes through sharp, whole).
  const photo = readFileSync(join(cocoDir(), 'images', '000000000009.jpg'));
  mode = 'sse-no-usage';
  const r = await describe(streaming, { image_base64: photo.toString('base64'), prompt: 'Describe it' });
  assert.equal(r.status, 200, r.text);
  assert.equal(
    seen.at(-1)!.body.messages[0].content[1].image_url.url,
    `data:image/jpeg;base64,${photo.toString('base64')}`,
  );
  assert.equal(r.body.usage.input_tokens, imageTokens(640, 480, 'high') + (await textTokens('Describe it')));
  mode = 'error';
  const fell = await describe(streaming, { image_base64: photo.toString('base64') });
  const builtin = await describe(streaming, { image_base64: photo.toString('base64'), model: 'sightflow-describe-v1' });
  assert.equal(fell.status, 200, fell.text);
  assert.deepEqual(fell.body, builtin.body, 'the fallback describes the photo as the built-in describer does');
  assert.equal(builtin.body.usage.input_tokens, imageTokens(640, 480, 'high'));
  const cut = await describe(streaming, { image_base64: photo.subarray(0, photo.length - 2000).toString('base64') });
  assert.equal(cut.status, 400, 'a cut-off file is still refused before the VLM is asked');
  assert.equal(cut.body.error.code, 'invalid_image');
});

test('configuration from the environment', () => {
  const vlmConfigFromEnv = (env: Record<string, string>) => loadConfig(env).vlm;
  assert.equal(vlmConfigFromEnv({}), null);
  assert.throws(() => vlmConfigFromEnv({ SIGHTFLOW_VLM_URL: 'http://h:8000/v1' }), /SIGHTFLOW_VLM_MODEL/);
  assert.throws(
    () =>
      vlmConfigFromEnv({ SIGHTFLOW_VLM_URL: 'http://h', SIGHTFLOW_VLM_MODEL: 'm', SIGHTFLOW_VLM_TIMEOUT_MS: 'soon' }),
    /SIGHTFLOW_VLM_TIMEOUT_MS must be an integer >= 1 \(got "soon"\)/,
  );
  assert.deepEqual(vlmConfigFromEnv({ SIGHTFLOW_VLM_URL: 'http://h:8000/v1/', SIGHTFLOW_VLM_MODEL: 'm' }), {
    url: 'http://h:8000/v1/chat/completions',
    model: 'm',
    key: undefined,
    timeoutMs: 60000,
    fallback: false,
    stream: false,
    maxTokens: 512,
  });
  const c = vlmConfigFromEnv({
    SIGHTFLOW_VLM_URL: 'http://h/api/chat/completions',
    SIGHTFLOW_VLM_MODEL: 'm',
    SIGHTFLOW_VLM_KEY: 'k',
    SIGHTFLOW_VLM_FALLBACK: 'true',
    SIGHTFLOW_VLM_TIMEOUT_MS: '5000',
  })!;
  assert.deepEqual([c.url, c.key, c.fallback, c.timeoutMs], ['http://h/api/chat/completions', 'k', true, 5000]);
});
