// Our CLIP tokenizer on the real OpenAI CLIP ViT-B/32 tokenizer.json (eval/byo-dir.ts) against a reference
// written here, independently and plainly: OpenAI's simple_tokenizer algorithm (lower case, whitespace runs
// to one space, CLIP's split regex, GPT-2 byte-to-unicode, "</w>" on each word's last symbol, lowest-rank
// merge first, every occurrence) over the other two files of the same release, vocab.json and merges.txt.
// Ids known from CLIP itself anchor both: a = 320, dog = 1929, car = 1615, start 49406, end 49407.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { byoModelsSkip, byoPath, CLIP_TOKENIZER } from '../../eval/byo-dir.js';
import { ClipTokenizer } from '../../src/vectors/embedders/clip-tokenizer.js';

const skip = byoModelsSkip(CLIP_TOKENIZER);

const CAPTIONS = [
  'a dog',
  'A photo of a car.',
  'Two dogs playing in the snow, one of them is brown!',
  "The man's bicycle isn't locked; it'll be stolen.",
  'a red double-decker bus at 10:45 on 5th avenue',
  'Un café au lait sur une table en bois à Paris',
  'a   group\tof\npeople   standing around a kitchen counter',
  'Smiling child 🙂 holding a kite (yellow & blue) on a beach...',
  '"Quoted" words, semi-colons; and an email: someone@example.com',
  'naïve résumé with COMBINING accents: café',
  '3.14159 is pi; 2024 was a leap year',
  'zebras grazing near a watering hole at sunset, wide-angle shot',
];

/** OpenAI's bytes_to_unicode. */
function bytesToUnicode(): Map<number, string> {
  const bs: number[] = [];
  for (let b = '!'.charCodeAt(0); b <= '~'.charCodeAt(0); b++) bs.push(b);
  for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
  for (let b = 0xae; b <= 0xff; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++)
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  return new Map(bs.map((b, i) => [b, String.fromCodePoint(cs[i]!)]));
}

function referenceTokenizer(dir: string) {
  const vocab = JSON.parse(readFileSync(join(dir, 'vocab.json'), 'utf8')) as Record<string, number>;
  // (This copy of merges.txt has CRLF line ends.)
  const merges = readFileSync(join(dir, 'merges.txt'), 'utf8')
    .split(/\r?\n/)
    .slice(1)
    .filter((l) => l.length > 0);
  const rank = new Map(merges.map((m, i) => [m, i]));
  const b2u = bytesToUnicode();
  const pat = /<\|startoftext\|>|<\|endoftext\|>|'s|'t|'re|'ve|'m|'ll|'d|[\p{L}]+|[\p{N}]|[^\s\p{L}\p{N}]+/giu;

  const bpe = (token: string): string[] => {
    let word = [...token];
    word[word.length - 1] = word[word.length - 1] + '</w>';
    for (;;) {
      if (word.length < 2) return word;
      let best: [string, string] | null = null;
      let bestRank = Infinity;
      for (let i = 0; i + 1 < word.length; i++) {
        const r = rank.get(`${word[i]} ${word[i + 1]}`);
        if (r !== undefined && r < bestRank) {
          bestRank = r;
          best = [word[i]!, word[i + 1]!];
        }
      }
      if (!best) return word;
      const merged: string[] = [];
      let i = 0;
      while (i < word.length) {
        if (word[i] === best[0] && word[i + 1] === best[1]) {
          merged.push(best[0] + best[1]);
          i += 2;
        } else {
          merged.push(word[i]!);
          i += 1;
        }
      }
      word = merged;
    }
  };
  return (text: string): number[] => {
    const clean = text.normalize('NFC').replace(/\s+/g, ' ').trim().toLowerCase();
    const ids = [vocab['<|startoftext|>']!];
    for (const m of clean.matchAll(pat)) {
      const token = [...Buffer.from(m[0], 'utf8')].map((b) => b2u.get(b)!).join('');
      for (const piece of bpe(token)) {
        const id = vocab[piece];
        assert.notEqual(id, undefined, `the reference found no id for ${piece}`);
        ids.push(id!);
      }
    }
    ids.push(vocab['<|endoftext|>']!);
    return ids;
  };
}

test("CLIP tokenizer on the real tokenizer.json gives OpenAI CLIP's ids (reference BPE over vocab.json + merges.txt)", {
  skip,
}, async () => {
  const path = byoPath(CLIP_TOKENIZER);
  const ours = await ClipTokenizer.fromFile(path);
  const reference = referenceTokenizer(dirname(path));
  assert.equal(ours.sot, 49406);
  assert.equal(ours.eot, 49407);
  assert.deepEqual(ours.encode('a dog', 5).ids, [49406, 320, 1929, 49407, ours.pad]);
  assert.deepEqual(reference('a car'), [49406, 320, 1615, 49407]);
  for (const caption of CAPTIONS) {
    const want = reference(caption);
    const { ids, mask } = ours.encode(caption, 77);
    assert.deepEqual(ids.slice(0, want.length), want, caption);
    assert.equal(
      mask.filter((m) => m === 1).length,
      want.length,
      `${caption}: nothing after the end token but padding`,
    );
  }
});

test('CLIP tokenizer: context-length truncation keeps the end token', { skip }, async () => {
  const ours = await ClipTokenizer.fromFile(byoPath(CLIP_TOKENIZER));
  const long = Array.from({ length: 100 }, () => 'dog').join(' ');
  const { ids, mask } = ours.encode(long, 77);
  assert.equal(ids.length, 77);
  assert.deepEqual([ids[0], ids[1], ids[75], ids[76]], [49406, 1929, 1929, 49407]);
  assert.equal(
    mask.every((m) => m === 1),
    true,
  );
});
