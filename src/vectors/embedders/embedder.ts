// One interface for every embedding model: an input of one modality in, a unit-length float32 vector in the
// model's shared space out, plus the tokens billed for it (docs/api.md, "Usage").
import type { LoadedImage } from '../../media/image-input.js';

export type Modality = 'image' | 'text' | 'audio';

export type EmbedInput =
  | { kind: 'text'; text: string }
  | { kind: 'image'; image: LoadedImage }
  /** Encoded audio (WAV, MP3, FLAC or OGG); `param` names the request field in errors. */
  | { kind: 'audio'; bytes: Buffer; param: string };

export interface Embedding {
  vector: Float32Array;
  usage: { input_tokens: number };
  /** What the model understood, when it had to (an audio transcript): logged, never billed. */
  transcript?: string;
}

/** An entry of GET /v1/vectors/models (docs/vectors.md, "Models"). */
export interface EmbeddingModelInfo {
  id: string;
  name: string;
  types: Modality[];
  dimensions: number;
  metric: 'COSINE';
}

export interface Embedder {
  readonly info: EmbeddingModelInfo;
  embed(input: EmbedInput, signal?: AbortSignal): Promise<Embedding>;
  /**
   * Throws the 503 an image's embedding would get now because a model queue it needs is full: called before
   * the image is fetched and decoded, so a refused request costs no decoding.
   */
  checkRoom?(kind: Modality): Promise<void>;
  /**
   * Runs `work` (decoding and embedding content whose bytes are in hand) once the model has room for one
   * more of this kind, so content waiting its turn holds no pixels; a full wait rejects with the 503 at once.
   */
  admit?<T>(kind: Modality, work: () => Promise<T>, signal?: AbortSignal): Promise<T>;
}

/** In place; an all-zero vector stays zero. */
export function normalize(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  if (n > 0) {
    const s = 1 / Math.sqrt(n);
    for (let i = 0; i < v.length; i++) v[i]! *= s;
  }
  return v;
}

/** Copies `part` (normalised) scaled by `weight` into out at offset. */
export function place(out: Float32Array, offset: number, part: Float32Array, weight: number): void {
  const p = normalize(Float32Array.from(part));
  for (let i = 0; i < p.length; i++) out[offset + i] = p[i]! * weight;
}
