// POST /v1/vision/ocr through the real server: a page the test renders (DejaVu Sans, known words at known
// places) reads back exactly, in reading order, with blocks around the words; SROIE receipts give their
// total line; the language hint; usage and the ledger; two pages sent together are read at once (two pages a
// session).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import sharp from 'sharp';
import { api, startTestApp, type TestApp } from '../helpers/app.js';
import { waitedTogether } from '../helpers/metrics-text.js';
import { evalDataSkip, evalDir } from '../../eval/dir.js';
import { supportedLanguages } from '../../src/ocr/languages.js';
import { autoDetail, imageTokens, textTokens } from '../../src/usage/tokens.js';

let t: TestApp;
before(async () => {
  t = await startTestApp();
});
after(async () => {
  await t?.close();
});

type BBox = [number, number, number, number];
const W = 900;
const H = 320;
const WORDS = [
  { text: 'Harbour', x: 40, y: 80 },
  { text: 'Street', x: 250, y: 80 },
  { text: '17', x: 420, y: 80 },
  { text: 'Opening', x: 40, y: 170 },
  { text: 'hours', x: 250, y: 170 },
  { text: 'daily', x: 400, y: 170 },
  { text: 'Closed', x: 40, y: 260 },
  { text: 'Sunday', x: 560, y: 260 },
];
const EXPECTED = 'Harbour Street 17\nOpening hours daily\nClosed Sunday';

const svg = (words: typeof WORDS) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><rect width="100%" height="100%" fill="#fff"/>${words
      .map((w) => `<text x="${w.x}" y="${w.y}" font-family="DejaVu Sans" font-size="40" fill="#111">${w.text}</text>`)
      .join('')}</svg>`,
  );

/** Where a word's ink is when drawn alone at its place. */
async function inkBox(word: (typeof WORDS)[number]): Promise<BBox> {
  const { info } = await sharp(svg([word]))
    .flatten({ background: '#fff' })
    .trim({ threshold: 40 })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const left = -(info.trimOffsetLeft ?? 0);
  const top = -(info.trimOffsetTop ?? 0);
  return [left, top, left + info.width, top + info.height];
}

const contains = (outer: BBox, inner: BBox, slack = 3) =>
  outer[0] <= inner[0] + slack &&
  outer[1] <= inner[1] + slack &&
  outer[2] >= inner[2] - slack &&
  outer[3] >= inner[3] - slack;

const ocr = (json: Record<string, unknown>) => api(t, '/v1/vision/ocr', { method: 'POST', json });

test('a rendered page: exact text in reading order, blocks around the words, usage billed', async () => {
  const png = await sharp(svg(WORDS)).png().toBuffer();
  const r = await ocr({ image_base64: `data:image/png;base64,${png.toString('base64')}` });
  assert.equal(r.status, 200, r.text);
  assert.deepEqual(Object.keys(r.body).sort(), ['blocks', 'model', 'text', 'usage']);
  assert.equal(r.body.model, 'pp-ocrv4');
  assert.equal(r.body.text, EXPECTED);
  assert.equal(
    r.body.blocks.map((b: { text: string }) => b.text).join(' '),
    EXPECTED.replace(/\n/g, ' '),
    'blocks in reading order',
  );
  for (const b of r.body.blocks) {
    assert.deepEqual(Object.keys(b).sort(), ['bbox', 'confidence', 'text']);
    assert.ok(b.confidence > 0.5 && b.confidence <= 1);
  }
  for (const word of WORDS) {
    const ink = await inkBox(word);
    assert.ok(
      r.body.blocks.some(
        (b: { text: string; bbox: BBox }) => b.text.split(' ').includes(word.text) && contains(b.bbox, ink),
      ),
      `a block holds "${word.text}" around ${ink}: ${JSON.stringify(r.body.blocks)}`,
    );
  }
  assert.deepEqual(r.body.usage, {
    input_tokens: imageTokens(W, H, autoDetail(W, H)),
    output_tokens: await textTokens(EXPECTED),
  });
  const rows = await t.app.services.usage.events(t.projectId);
  const row = rows[rows.length - 1]!;
  assert.deepEqual(
    [row.endpoint, row.model, Number(row.input_tokens), Number(row.output_tokens)],
    ['/v1/vision/ocr', 'pp-ocrv4', r.body.usage.input_tokens, r.body.usage.output_tokens],
  );
});

test('SROIE receipts: the page text holds the total line', {
  skip: evalDataSkip('ocr/sroie_receipts/images'),
}, async () => {
  const dir = evalDir('ocr/sroie_receipts/images');
  for (const [file, total] of [
    ['X00016469670.jpg', '193.00'],
    ['X00016469671.jpg', '170.00'],
  ]) {
    const jpeg = readFileSync(join(dir, file));
    const r = await ocr({ image_base64: jpeg.toString('base64'), language: 'en' });
    assert.equal(r.status, 200, r.text);
    const lines: string[] = r.body.text.split('\n');
    assert.ok(
      lines.some((l) => /^TOTAL\s*:\s*/i.test(l) && l.endsWith(total)),
      `${file}: no "TOTAL: ${total}" line in\n${r.body.text}`,
    );
    const { width, height } = await sharp(jpeg).metadata();
    for (const b of r.body.blocks) {
      assert.ok(
        b.bbox[0] >= 0 &&
          b.bbox[1] >= 0 &&
          b.bbox[2] <= width! &&
          b.bbox[3] <= height! &&
          b.bbox[2] > b.bbox[0] &&
          b.bbox[3] > b.bbox[1],
      );
    }
  }
});

test('the language hint: en and zh read Latin; an unknown code is a 400 naming the supported ones', async () => {
  const png = await sharp(svg(WORDS.slice(0, 2)))
    .png()
    .toBuffer();
  const image_base64 = png.toString('base64');
  for (const language of ['auto', 'en', 'en-GB', 'zh']) {
    const r = await ocr({ image_base64, language });
    assert.equal(r.status, 200);
    assert.equal(r.body.text, 'Harbour Street', language);
  }
  const bad = await ocr({ image_base64, language: 'xx' });
  assert.equal(bad.status, 400);
  assert.deepEqual(bad.body, {
    error: {
      type: 'invalid_request_error',
      code: 'unsupported_language',
      param: 'language',
      message: `Expected a language this server can read but received "xx"; supported: ${(await supportedLanguages()).join(', ')}`,
    },
  });
});

test('an image without text: empty text and no blocks, still billed', async () => {
  const png = await sharp({ create: { width: 200, height: 120, channels: 3, background: '#3a7' } })
    .png()
    .toBuffer();
  const r = await ocr({ image_base64: png.toString('base64') });
  assert.equal(r.status, 200);
  assert.deepEqual(r.body, { text: '', blocks: [], model: 'pp-ocrv4', usage: { input_tokens: 85, output_tokens: 0 } });
});

for (const sessions of [2, 1]) {
  // With one session too: two pages a session, so the main thread prepares or finishes one page while the
  // session runs the other's models (one a session left the second page waiting the first one's whole read).
  test(`two pages sent together with ${sessions} session(s) per model: both start at once, neither waits for the other`, async () => {
    const two = await startTestApp({ SIGHTFLOW_METRICS_PORT: '0', SIGHTFLOW_INFERENCE_SESSIONS: String(sessions) });
    try {
      const image_base64 = (await sharp(svg(WORDS)).png().toBuffer()).toString('base64');
      const ocr = async () => {
        const started = performance.now();
        const r = await api(two, '/v1/vision/ocr', { method: 'POST', json: { image_base64 } });
        assert.equal(r.status, 200, r.text);
        return performance.now() - started;
      };
      await ocr(); // the models load
      // The pages' queue is "ocr". One page at a time, the second would have waited about the first one's whole read.
      const { items, waitedMs, took } = await waitedTogether(two.app.metricsPort!, 'ocr', ocr);
      assert.equal(items, 2);
      assert.ok(
        waitedMs < 0.5 * Math.min(...took),
        `the two pages waited ${waitedMs.toFixed(0)} ms in all; they took ${took.map((x) => x.toFixed(0))} ms`,
      );
    } finally {
      await two.close();
    }
  });
}
