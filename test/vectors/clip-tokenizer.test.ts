// CLIP's BPE tokenizer and image preprocessing on the tiny generated tokenizer.json. The expected ids were
// cross-checked once with HF's tokenizers library (Rust) on the same file; the hand-checked ones are noted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { ClipTokenizer } from '../../src/vectors/embedders/clip-tokenizer.js';
import { clipPixels, cropOrigin, resizedSize } from '../../src/vectors/embedders/clip-preprocess.js';
import { CLIP_MEAN, CLIP_STD } from '../../src/inference/clip-manifest.js';
import { MERGES, tinyTokenizerJson, tinyVocab } from '../helpers/tiny-clip.js';

const tok = ClipTokenizer.fromJson(tinyTokenizerJson());
const SOT = 529;
const EOT = 530;
const ids = (text: string) => [SOT, ...tok.tokenize(text), EOT];

test('tokenizer: specials and CLIP byte order (hand-checked against the real CLIP vocabulary)', () => {
  assert.equal(tok.sot, SOT);
  assert.equal(tok.eot, EOT);
  // Bytes are numbered printable-first, as in CLIP: "a</w>" is 320, ".</w>" 269, "!" 0, "!</w>" 256 there too.
  const v = tinyVocab();
  assert.deepEqual([v['a</w>'], v['.</w>'], v['!'], v['!</w>']], [320, 269, 0, 256]);
  assert.deepEqual(ids('a red cat.'), [SOT, 320, 514, 522, 269, EOT]);
});

test('tokenizer: lower case, whitespace, punctuation runs, digits one by one', () => {
  assert.deepEqual(ids('Green  photo of a RED cat!!'), [SOT, 517, 527, 523, 320, 514, 522, 0, 256, EOT]);
  assert.deepEqual(ids('\t red\n'), [SOT, 514, EOT]);
  assert.deepEqual(ids('  '), [SOT, EOT]);
  // "3.14": each digit alone, the dot alone.
  assert.deepEqual(tok.tokenize('3.14'), [274, 269, 272, 275]);
  assert.deepEqual(ids("ab'sx ''re"), [SOT, 64, 321, 6, 338, 343, 6, 262, 81, 324, EOT]);
});

test('tokenizer: merges apply by rank, not left to right (hand-checked)', () => {
  // "rer" = r e r</w>: "r e" (rank 1) beats "e r</w>" (rank 16), leaving re + r</w>.
  assert.deepEqual(tok.tokenize('rer'), [513, 337]);
  // "green": g r first, then e e, gr ee, gree n</w>.
  assert.deepEqual(tok.tokenize('green'), [517]);
  assert.deepEqual(tok.tokenize('greenred'), [516, 77, 514]);
});

test('tokenizer: UTF-8 bytes through bytes_to_unicode; NFC', () => {
  // é is C3 A9: "Ã" (127) then "©</w>" (256 + 102), after the "c a" merge.
  assert.deepEqual(ids('café 42'), [SOT, 521, 69, 127, 358, 275, 273, EOT]);
  assert.deepEqual(tok.tokenize('e\u0301'), tok.tokenize('é'));
  assert.deepEqual(ids("Don't stop, cat's 3.14 über-cool — 日本語 😀 ẞ İstanbul"), [
    SOT,
    67,
    78,
    333,
    6,
    339,
    82,
    83,
    78,
    335,
    267,
    522,
    6,
    338,
    274,
    269,
    272,
    275,
    127,
    120,
    65,
    528,
    268,
    66,
    78,
    78,
    331,
    158,
    222,
    498,
    162,
    245,
    98,
    162,
    250,
    105,
    164,
    103,
    508,
    172,
    253,
    246,
    478,
    127,
    509,
    328,
    136,
    485,
    82,
    83,
    64,
    77,
    65,
    84,
    331,
    EOT,
  ]);
  assert.deepEqual(ids('ＡＢＣ'), [SOT, 171, 121, 223, 171, 121, 224, 171, 121, 481, EOT]);
});

test('tokenizer: special tokens in the text are split out first', () => {
  assert.deepEqual(ids('red<|endoftext|>cat'), [SOT, 514, EOT, 522, EOT]);
  assert.deepEqual(ids('!<|startoftext|>x'), [SOT, 256, SOT, 343, EOT]);
});

test('tokenizer: encode pads with the end token (or pad_id) and truncates keeping the end token', () => {
  assert.deepEqual(tok.encode('a red cat.', 8), {
    ids: [SOT, 320, 514, 522, 269, EOT, EOT, EOT],
    mask: [1, 1, 1, 1, 1, 1, 0, 0],
  });
  assert.deepEqual(tok.encode('a red cat.', 5), { ids: [SOT, 320, 514, 522, EOT], mask: [1, 1, 1, 1, 1] });
  assert.equal(tok.encode('x', 77).ids.length, 77);
  const padded = ClipTokenizer.fromJson({ ...tinyTokenizerJson(), padding: { pad_id: 0 } });
  assert.deepEqual(padded.encode('red', 5).ids, [SOT, 514, EOT, 0, 0]);
  assert.deepEqual(ClipTokenizer.fromJson(tinyTokenizerJson(), 't', 7).encode('red', 4).ids, [SOT, 514, EOT, 7]);
});

test('tokenizer: merges as [a, b] pairs (newer tokenizer.json) read the same', () => {
  const j = tinyTokenizerJson() as { model: Record<string, unknown> };
  const pairs = ClipTokenizer.fromJson({ ...j, model: { ...j.model, merges: MERGES.map((m) => m.split(' ')) } });
  assert.deepEqual(pairs.tokenize('Green photo of a red cat'), tok.tokenize('Green photo of a red cat'));
});

test('tokenizer: files that are not a CLIP BPE tokenizer are refused with a clear message', () => {
  const j = tinyTokenizerJson() as { model: Record<string, unknown>; added_tokens: unknown[] };
  assert.throws(
    () => ClipTokenizer.fromJson({ ...j, model: { ...j.model, type: 'WordPiece' } }, 'tok.json'),
    /tok\.json: model\.type: expected a BPE model but received "WordPiece"/,
  );
  const vocab = { ...(j.model.vocab as Record<string, number>) };
  delete vocab['<|startoftext|>'];
  assert.throws(
    () => ClipTokenizer.fromJson({ ...j, added_tokens: [], model: { ...j.model, vocab } }, 'tok.json'),
    /no <\|startoftext\|> token/,
  );
  assert.throws(
    () => ClipTokenizer.fromJson({ ...j, model: { ...j.model, merges: ['a b c'] } }, 'tok.json'),
    /model\.merges\.0/,
  );
});

test('preprocess: HF resize sizes (shorter side, longer truncated) and centre-crop offsets', () => {
  assert.deepEqual(resizedSize(640, 480, 224), { width: 298, height: 224 });
  assert.deepEqual(resizedSize(480, 640, 224), { width: 224, height: 298 });
  assert.deepEqual(resizedSize(224, 224, 224), { width: 224, height: 224 });
  assert.deepEqual(resizedSize(100, 50, 224), { width: 448, height: 224 });
  assert.deepEqual(cropOrigin(298, 224, 224), { left: 37, top: 0 });
  assert.deepEqual(cropOrigin(224, 301, 224), { left: 0, top: 38 });
});

/** Deterministic noise, so any offset or channel mix-up changes values. */
function noise(width: number, height: number): Buffer {
  const b = Buffer.alloc(width * height * 3);
  let s = 7;
  for (let i = 0; i < b.length; i++) {
    s = (s * 1103515245 + 12345) % 2147483648;
    b[i] = s >> 23;
  }
  return b;
}

test('preprocess: no resize needed -> exactly the centre crop, normalised, in planar RGB', async () => {
  const [w, h] = [300, 224];
  const data = noise(w, h);
  const px = await clipPixels(
    { data, width: w, height: h },
    { size: 224, resize: 224, mean: CLIP_MEAN, std: CLIP_STD },
  );
  assert.equal(px.length, 3 * 224 * 224);
  const left = 38; // (300 - 224) / 2 rounded down
  for (const [x, y, c] of [
    [0, 0, 0],
    [223, 0, 1],
    [0, 223, 2],
    [111, 57, 0],
    [200, 100, 2],
  ] as const) {
    const v = data[(y * w + x + left) * 3 + c]!;
    assert.equal(
      px[c * 224 * 224 + y * 224 + x],
      Math.fround((v / 255 - CLIP_MEAN[c]) / CLIP_STD[c]),
      `x ${x} y ${y} c ${c}`,
    );
  }
});

test('preprocess: a resized image keeps its colours and is cropped from the middle', async () => {
  // 896x448, left half red, right half blue: resized to 448x224, the crop is columns 112-335, so the
  // crop's left half is red and its right half blue.
  const { data, info } = await sharp({
    create: { width: 896, height: 448, channels: 3, background: { r: 255, g: 0, b: 0 } },
  })
    .composite([
      {
        input: { create: { width: 448, height: 448, channels: 3, background: { r: 0, g: 0, b: 255 } } },
        left: 448,
        top: 0,
      },
    ])
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const px = await clipPixels(
    { data, width: info.width, height: info.height },
    { size: 224, resize: 224, mean: CLIP_MEAN, std: CLIP_STD },
  );
  const at = (c: number, x: number, y: number) => px[c * 224 * 224 + y * 224 + x]!;
  const norm = (v: number, c: number) => (v / 255 - CLIP_MEAN[c]) / CLIP_STD[c];
  for (const y of [0, 100, 223]) {
    assert.ok(Math.abs(at(0, 10, y) - norm(255, 0)) < 1e-5 && Math.abs(at(2, 10, y) - norm(0, 2)) < 1e-5);
    assert.ok(Math.abs(at(0, 213, y) - norm(0, 0)) < 1e-5 && Math.abs(at(2, 213, y) - norm(255, 2)) < 1e-5);
  }
});
