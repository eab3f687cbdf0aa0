// The phonetic part of the shared space: how a text sounds, as hashed phone bigrams and trigrams. Text gets
// its phones from the CMU pronouncing dictionary (shipped with Debian's pocketsphinx-en-us); audio from the
// recogniser's phone decoder and from its word hypothesis. Misrecognised words ("ten of clubs" heard as "son
// of close") still share most of their sounds, so a spoken clip finds its transcript and vice versa.
import { existsSync, readFileSync } from 'node:fs';
import { normalize } from './embedder.js';

export const PHONETIC_DIMS = 256;
export const CMUDICT_PATH = '/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict';

let dict: Map<string, string[]> | null = null;

/** word -> phones without stress marks (first pronunciation); empty when the dictionary is not installed. */
export function cmudict(path = CMUDICT_PATH): Map<string, string[]> {
  if (dict) return dict;
  const m = new Map<string, string[]>();
  if (existsSync(path)) {
    for (const line of readFileSync(path, 'utf8').split('\n')) {
      const sp = line.indexOf(' ');
      if (sp <= 0) continue;
      const word = line.slice(0, sp);
      if (word.endsWith(')')) continue; // alternative pronunciations "word(2)"
      m.set(
        word,
        line
          .slice(sp + 1)
          .trim()
          .split(/\s+/)
          .map((p) => p.replace(/\d$/, '')),
      );
    }
  }
  dict = m;
  return m;
}

export function wordsToPhones(words: readonly string[]): string[] {
  const d = cmudict();
  const out: string[] = [];
  for (const w of words) {
    const p = d.get(w);
    if (p) out.push(...p);
  }
  return out;
}

function hash(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Unit vector of phone bigrams and trigrams (feature hashing with a sign bit), zeros for no phones. */
export function phoneVector(phones: readonly string[]): Float32Array {
  const v = new Float32Array(PHONETIC_DIMS);
  const ps = phones.filter((p) => p !== 'SIL' && p !== '+NSN+' && p !== '+SPN+' && p !== '');
  for (let n = 2; n <= 3; n++) {
    for (let i = 0; i + n <= ps.length; i++) {
      const h = hash(ps.slice(i, i + n).join(' '));
      v[h % PHONETIC_DIMS]! += (h & 0x80000000 ? -1 : 1) * (n === 3 ? 1.5 : 1);
    }
  }
  return normalize(v);
}
