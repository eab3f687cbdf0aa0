// multimodal-embedding-v1's parts on real data: GloVe semantics (informative words weigh, synonyms are
// near), the phonetic block (a misheard phrase still sounds like the original), the audio front end
// (ffmpeg + pocketsphinx) and the image side (near-duplicates close, different photos apart).
import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import sharp from 'sharp';
import { projectRoot } from '../../src/base/paths.js';
import { loadWordVectors, WordVectors } from '../../src/vectors/embedders/word-vectors.js';
import { TextSemantics, tokenize } from '../../src/vectors/embedders/text-semantics.js';
import { phoneVector, wordsToPhones } from '../../src/vectors/embedders/phonetic.js';
import { sniffAudio, transcribe } from '../../src/vectors/embedders/speech.js';
import { visualDescriptor } from '../../src/vectors/embedders/visual-descriptor.js';
import { mediaDir } from '../helpers/media.js';

const modelsDir = process.env.SIGHTFLOW_MODELS_DIR ?? join(projectRoot, 'data', 'models');
let sem: TextSemantics;
before(async () => {
  sem = new TextSemantics(await loadWordVectors(modelsDir));
});

const dot = (a: Float32Array, b: Float32Array) => a.reduce((s, v, i) => s + v * b[i]!, 0);

test('tokenize: lower case, possessives dropped, punctuation ignored', () => {
  assert.deepEqual(tokenize("The Dog's ball, isn't it?"), ['the', 'dog', 'ball', "isn't", 'it']);
});

test('semantics: a paraphrase is nearer than an unrelated sentence; stop words barely count', () => {
  const a = sem.embed('a man riding a wave on a surfboard');
  const b = sem.embed('surfer on the ocean waves');
  const c = sem.embed('a plate of pasta with tomato sauce');
  assert.ok(dot(a, b) > dot(a, c) + 0.2, `${dot(a, b)} vs ${dot(a, c)}`);
  assert.ok(sem.weightOfRank(sem.words.rank('the')) < 0.2);
  assert.ok(sem.weightOfRank(sem.words.rank('giraffe')) > 0.9);
  assert.ok(Math.abs(Math.hypot(...a) - 1) < 1e-5);
});

test('word vector file: a truncated file is refused', async () => {
  const path = join(modelsDir, 'multimodal-embedding-v1');
  const { readdirSync } = await import('node:fs');
  const f = readdirSync(path).find((x) => x.endsWith('.bin'))!;
  const buf = readFileSync(join(path, f));
  assert.throws(() => WordVectors.parse(buf.subarray(0, buf.length - 100)), /truncated or corrupt/);
});

test('phonetic: "ten of clubs" sounds more like "son of close" than like "seven of hearts"', () => {
  const p = (s: string) => phoneVector(wordsToPhones(tokenize(s)));
  assert.deepEqual(wordsToPhones(['ten']), ['T', 'EH', 'N']);
  assert.ok(dot(p('ten of clubs'), p('son of close')) > dot(p('ten of clubs'), p('seven of hearts')));
});

test('audio: formats sniffed; a spoken-free tone decodes to a transcript without error', async () => {
  assert.equal(sniffAudio(Buffer.from('fLaC....')), 'flac');
  assert.equal(sniffAudio(Buffer.from('OggS....')), 'ogg');
  assert.equal(sniffAudio(Buffer.from('hello')), null);
  const mp3 = join(mediaDir(), 'tone.mp3');
  execFileSync('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=300:duration=1', mp3]);
  const bytes = readFileSync(mp3);
  assert.equal(sniffAudio(bytes), 'mp3');
  const t = await transcribe(bytes, 'audio');
  assert.ok(t.seconds > 0.9 && t.seconds < 1.2, `${t.seconds} s`);
  assert.ok(Array.isArray(t.words) && Array.isArray(t.phones));
});

test('visual descriptor: flipped, resized and recompressed copies stay near; another picture does not', async () => {
  const { data, info } = await sharp({
    create: { width: 200, height: 120, channels: 3, background: { r: 20, g: 120, b: 200 } },
  })
    .composite([
      {
        input: { create: { width: 60, height: 60, channels: 3, background: { r: 250, g: 220, b: 30 } } },
        left: 20,
        top: 30,
      },
    ])
    .raw()
    .toBuffer({ resolveWithObject: true });
  const img = { data, width: info.width, height: info.height };
  const base = await visualDescriptor(img);
  const flipped = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
    .flop()
    .raw()
    .toBuffer();
  const small = await sharp(data, { raw: { width: info.width, height: info.height, channels: 3 } })
    .resize(100, 60)
    .jpeg({ quality: 40 })
    .toBuffer();
  const smallRaw = await sharp(small).raw().toBuffer({ resolveWithObject: true });
  const other = await sharp({ create: { width: 200, height: 120, channels: 3, background: { r: 200, g: 40, b: 40 } } })
    .raw()
    .toBuffer();
  const v = (d: Buffer, w = 200, h = 120) => visualDescriptor({ data: d, width: w, height: h });
  const mirrored = dot(base, await v(flipped));
  assert.ok(mirrored > 0.97, `flipped ${mirrored}`);
  assert.ok(dot(base, await v(smallRaw.data, smallRaw.info.width, smallRaw.info.height)) > 0.9);
  const apart = dot(base, await v(other));
  assert.ok(apart < 0.6, `other picture ${apart}`);
});
