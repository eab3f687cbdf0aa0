// The semantic part of the shared space: a weighted mean of GloVe word vectors. Words are weighted by how
// informative they are (SIF: a / (a + p(w)), p from the word's frequency rank by Zipf's law), so "the" and
// "of" barely count and "giraffe" does; then the direction every mean shares (frequent-word drift) is
// removed, which spreads sentences apart (Arora et al. 2017, "common component removal").
import { normalize } from './embedder.js';
import type { WordVectors } from './word-vectors.js';

const SIF_A = 1e-3;
const TOKEN = /[a-z0-9]+(?:'[a-z]+)?/g;

export function tokenize(text: string): string[] {
  return (text.toLowerCase().replace(/[’‘]/g, "'").match(TOKEN) ?? []).map((t) => t.replace(/'s$/, ''));
}

export class TextSemantics {
  private readonly harmonic: number;
  private readonly common: Float32Array;

  constructor(readonly words: WordVectors) {
    this.harmonic = Math.log(words.words.length) + 0.5772;
    // The shared direction: the mean of the 20k most frequent words, weighted as sentences weight them.
    const c = new Float32Array(words.dims);
    const n = Math.min(20_000, words.words.length);
    for (let r = 0; r < n; r++) words.addTo(c, r, this.weightOfRank(r));
    this.common = normalize(c);
  }

  get dims(): number {
    return this.words.dims;
  }

  weightOfRank(rank: number): number {
    const p = 1 / ((rank + 10) * this.harmonic);
    return SIF_A / (SIF_A + p);
  }

  /** Adds weight * (informativeness-weighted mean of the words) to out; returns the words' total weight. */
  addWords(out: Float32Array, tokens: readonly string[], weight = 1): number {
    let total = 0;
    const acc = new Float32Array(this.dims);
    for (const t of tokens) {
      const r = this.words.rank(t);
      if (r < 0) continue;
      const w = this.weightOfRank(r);
      this.words.addTo(acc, r, w);
      total += w;
    }
    if (total === 0) return 0;
    for (let d = 0; d < this.dims; d++) out[d]! += (acc[d]! / total) * weight;
    return total;
  }

  /** Unit vector of a phrase ("traffic light"), or zeros when no word is known. */
  phrase(text: string): Float32Array {
    const v = new Float32Array(this.dims);
    this.addWords(v, tokenize(text));
    return normalize(v);
  }

  /** Removes the common direction in place and normalises. */
  finish(v: Float32Array): Float32Array {
    let dot = 0;
    for (let d = 0; d < this.dims; d++) dot += v[d]! * this.common[d]!;
    for (let d = 0; d < this.dims; d++) v[d]! -= dot * this.common[d]!;
    return normalize(v);
  }

  embed(text: string): Float32Array {
    const v = new Float32Array(this.dims);
    this.addWords(v, tokenize(text));
    return this.finish(v);
  }
}
