// OCR with the real PP-OCRv4 models: a page the test renders (DejaVu Sans, known words at known places),
// two SROIE receipts, the language hint, and the pieces with exact answers (DB boxes, CTC decoding).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import sharp from 'sharp';
import { evalDataSkip, evalDir } from '../../eval/dir.js';
import { ApiError } from '../../src/base/errors.js';
import { ctcGreedy } from '../../src/ocr/ctc-decode.js';
import { dbPostprocess } from '../../src/ocr/db-postprocess.js';
import { type BBox, OcrEngine } from '../../src/ocr/engine.js';
import { projectRoot } from '../../src/base/paths.js';
import { routeLanguage, supportedLanguages } from '../../src/ocr/languages.js';
import type { RgbImage } from '../../src/media/rgb-image.js';
import { decodeRgb, rotate180 } from '../../src/ocr/resample.js';
import { tesseractInfo, tesseractOcr } from '../../src/ocr/tesseract.js';

// OCR over the models setup prepared in data/ (the server hands the engine its own registry and runtime).
const { ocrImage, ocrRegion, readLine } = OcrEngine.forDataDir(join(projectRoot, 'data'));

const W = 900;
const H = 360;
const FONT = 'DejaVu Sans';
/** Words drawn one <text> each, so the test knows where every word is. */
const WORDS: { text: string; x: number; y: number }[] = [
  { text: 'Invoice', x: 40, y: 70 },
  { text: 'number', x: 200, y: 70 },
  { text: '4711', x: 370, y: 70 },
  { text: 'Fresh', x: 40, y: 170 },
  { text: 'apples', x: 160, y: 170 },
  { text: 'from', x: 310, y: 170 },
  { text: 'Kent', x: 420, y: 170 },
  { text: 'Total', x: 40, y: 270 },
  { text: '42.50', x: 640, y: 270 },
];
const EXPECTED = 'Invoice number 4711\nFresh apples from Kent\nTotal 42.50';

function svg(words: typeof WORDS): Buffer {
  const texts = words
    .map((w) => `<text x="${w.x}" y="${w.y}" font-family="${FONT}" font-size="40" fill="#111">${w.text}</text>`)
    .join('');
  return Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}"><rect width="100%" height="100%" fill="#fff"/>${texts}</svg>`,
  );
}

async function render(words: typeof WORDS): Promise<RgbImage> {
  return decodeRgb(await sharp(svg(words)).png().toBuffer());
}

/** Ink box of one word drawn alone at its place (sharp's trim reports where the ink starts). */
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

test('a rendered page reads back exactly, lines in reading order, blocks around the words', async () => {
  const page = await render(WORDS);
  const r = await ocrImage(page);
  assert.equal(r.model, 'pp-ocrv4');
  assert.equal(r.text, EXPECTED);
  for (const word of WORDS) {
    const ink = await inkBox(word);
    assert.ok(
      r.blocks.some((b) => b.text.split(' ').includes(word.text) && contains(b.bbox, ink)),
      `a block holds ${word.text} at ${ink}`,
    );
  }
  for (const b of r.blocks) assert.ok(b.confidence > 0.5 && b.confidence <= 1, `confidence ${b.confidence}`);

  // Word blocks: one per word, each box around its own word and not its neighbour's.
  const words = await ocrImage(page, { granularity: 'word', language: 'en' });
  assert.deepEqual(
    words.blocks.map((b) => b.text),
    WORDS.map((w) => w.text),
  );
  for (const [i, word] of WORDS.entries()) {
    const ink = await inkBox(word);
    const box = words.blocks[i].bbox;
    assert.ok(contains(box, ink), `${word.text}: ${box} contains ${ink}`);
    assert.ok(box[2] - box[0] < (ink[2] - ink[0]) * 1.6 + 20, `${word.text}: ${box} is a word, not a line`);
  }
});

test("the caller's signal reaches OCR's model runs: once it has fired, nothing runs", async () => {
  const page = await render(WORDS);
  const gone = AbortSignal.abort(new Error('client gone'));
  await assert.rejects(ocrImage(page, { signal: gone }), /client gone/);
  await assert.rejects(ocrRegion(page, [30, 30, 500, 100], { signal: gone }), /client gone/);
  assert.match((await ocrImage(page)).text, /Invoice/, 'the engine goes on for other callers');
});

test('a region of the page: only its text, boxes in the full image', async () => {
  const page = await render(WORDS);
  const apples = await inkBox(WORDS[4]);
  const kent = await inkBox(WORDS[6]);
  const r = await ocrRegion(page, [apples[0] - 10, apples[1] - 10, kent[2] + 10, kent[3] + 10]);
  assert.equal(r.text, 'apples from Kent');
  assert.ok(
    r.blocks.every((b) => contains(b.bbox, apples) || b.bbox[0] >= apples[0] - 12),
    `boxes ${JSON.stringify(r.blocks)}`,
  );
  assert.ok(contains(r.blocks[0].bbox, kent) || r.blocks.some((b) => contains(b.bbox, kent)));
});

test('an upside-down line is turned over by the angle classifier', async () => {
  const line = await render([
    { text: 'Station', x: 40, y: 70 },
    { text: 'Road', x: 230, y: 70 },
  ]);
  const flipped = rotate180(line);
  const r = await ocrImage(flipped);
  assert.equal(r.text, 'Station Road');
  const plain = await ocrImage(flipped, { angleClassifier: false });
  assert.notEqual(plain.text, 'Station Road');
});

test('slanted lines are rectified (min-area rotated boxes, perspective crop)', async () => {
  for (const deg of [-20, 30]) {
    const slanted = Buffer.from(
      `<svg xmlns="http://www.w3.org/2000/svg" width="700" height="500"><rect width="100%" height="100%" fill="#fff"/><g transform="rotate(${deg} 350 250)"><text x="150" y="260" font-family="${FONT}" font-size="44" fill="#111">Market Square 9</text></g></svg>`,
    );
    const r = await ocrImage(await decodeRgb(await sharp(slanted).png().toBuffer()));
    assert.equal(r.text, 'Market Square 9', `${deg} degrees`);
    // The axis-aligned box of a slanted line is tall: it spans the line's rise.
    const [x1, y1, x2, y2] = r.blocks[0].bbox;
    assert.ok(y2 - y1 > 0.25 * (x2 - x1), `${deg} degrees: ${r.blocks[0].bbox}`);
  }
});

test('a single-line crop is read without detection', async () => {
  const crop = await sharp(svg([{ text: 'HOTEL', x: 10, y: 50 }]))
    .extract({ left: 0, top: 10, width: 170, height: 55 })
    .png()
    .toBuffer();
  const r = await readLine(await decodeRgb(crop));
  assert.equal(r.text, 'HOTEL');
  assert.equal(r.model, 'pp-ocrv4');
});

test('SROIE receipts: the page text holds the total line', {
  skip: evalDataSkip('ocr/sroie_receipts/images'),
}, async () => {
  const dir = evalDir('ocr/sroie_receipts/images');
  for (const [file, total] of [
    ['X00016469670.jpg', '193.00'],
    ['X00016469671.jpg', '170.00'],
  ]) {
    const r = await ocrImage(await decodeRgb(join(dir, file)), { language: 'en' });
    const lines = r.text.split('\n');
    assert.ok(
      lines.some((l) => /^TOTAL\s*:\s*/i.test(l) && l.endsWith(total)),
      `${file}: no "TOTAL: ${total}" line in\n${r.text}`,
    );
    for (const b of r.blocks) {
      assert.ok(b.bbox[0] >= 0 && b.bbox[1] >= 0 && b.bbox[2] <= 463 && b.bbox[2] > b.bbox[0] && b.bbox[3] > b.bbox[1]);
    }
  }
});

test('an unsupported language is a 400 naming the supported ones', async () => {
  const page = await render(WORDS.slice(0, 1));
  await assert.rejects(ocrImage(page, { language: 'xx' }), (e: unknown) => {
    assert.ok(e instanceof ApiError);
    assert.equal(e.status, 400);
    assert.equal(e.type, 'invalid_request_error');
    assert.equal(e.code, 'unsupported_language');
    assert.equal(e.param, 'language');
    assert.match(e.message, /supported: auto, en, zh/);
    return true;
  });
  // Region subtags do not matter; zh reads Latin too (the model is Chinese + English).
  assert.equal((await ocrImage(page, { language: 'en-GB' })).text, 'Invoice');
  assert.equal((await ocrImage(page, { language: 'zh' })).text, 'Invoice');
});

test('DB post-processing: one text kernel becomes one box grown by the unclip ratio', async () => {
  const w = 64,
    h = 32;
  const prob = new Float32Array(w * h);
  for (let y = 10; y < 20; y++) for (let x = 8; x < 48; x++) prob[y * w + x] = 0.9;
  const quads = await dbPostprocess(prob, w, h);
  assert.equal(quads.length, 1);
  const xs = quads[0].corners.map((p) => p[0]);
  const ys = quads[0].corners.map((p) => p[1]);
  // Kernel centres span 39 x 9 px; d = 39 * 9 * 1.5 / (2 * 48) = 5.48 px on every side.
  assert.ok(
    Math.abs(Math.min(...xs) - (8.5 - 5.48)) < 0.01 && Math.abs(Math.max(...xs) - (47.5 + 5.48)) < 0.01,
    `${xs}`,
  );
  assert.ok(
    Math.abs(Math.min(...ys) - (10.5 - 5.48)) < 0.01 && Math.abs(Math.max(...ys) - (19.5 + 5.48)) < 0.01,
    `${ys}`,
  );
  assert.ok(Math.abs(quads[0].score - 0.9) < 1e-6);
  // Below the box threshold nothing is kept.
  assert.equal(
    (
      await dbPostprocess(
        prob.map((v) => (v > 0 ? 0.5 : 0)),
        w,
        h,
      )
    ).length,
    0,
  );
});

test('CTC greedy decoding: repeats collapse, blanks separate, the last class is a space', () => {
  const charset = ['', 'a', 'b', ' '];
  const seq = [1, 1, 0, 1, 2, 3, 2, 0];
  const probs = new Float32Array(seq.length * 4);
  seq.forEach((c, t) => {
    probs.fill(0.1 / 3, t * 4, t * 4 + 4);
    probs[t * 4 + c] = 0.9;
  });
  const out = ctcGreedy(probs, 0, seq.length, 4, charset, null);
  assert.equal(out.map((c) => c.text).join(''), 'aab b');
  assert.deepEqual(
    out.map((c) => [c.first, c.last]),
    [
      [0, 1],
      [3, 3],
      [4, 4],
      [5, 5],
      [6, 6],
    ],
  );
});

test('Tesseract (the peer and the engine for other languages) reads the same page', async (t) => {
  const info = await tesseractInfo();
  if (!info || !info.languages.includes('eng')) {
    t.skip('tesseract-ocr-eng is not installed (scripts/setup.d/31-tesseract.sh installs it)');
    return;
  }
  assert.match(info.model, /^tesseract-\d+$/);
  const r = await tesseractOcr(await render(WORDS), 'eng', 'line');
  assert.equal(r.text, EXPECTED);
  // Languages route to it only when their traineddata is installed; the rest are refused.
  const supported = await supportedLanguages();
  assert.equal(supported.includes('de'), info.languages.includes('deu'));
  if (!supported.includes('de'))
    await assert.rejects(routeLanguage('de'), (e: unknown) => e instanceof ApiError && e.status === 400);
});
