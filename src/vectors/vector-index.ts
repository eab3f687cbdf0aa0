// A collection's vector index: the addon's VectorIndex (native/core/vectors), USearch's HNSW over 8-bit
// vectors built from the npm package's headers with prefetching and huge pages (native/usearch/
// patch-headers.mjs says why). Same file format as the `usearch` npm binding of the pinned version.
import { loadAddon } from '../native.js';

/** The slice of the addon this file uses (see src/native.ts). Methods throw on bad arguments and I/O errors. */
export interface VectorIndex {
  size(): number;
  dimensions(): number;
  /**
   * keys.length x dimensions unit float32 values; `threads` > 1 splits the batch over threads (0: every core),
   * and loses no links doing so (native/usearch/patch-headers.mjs); inserts that reuse removed keys' slots
   * run first, on one thread.
   */
  add(keys: BigUint64Array, vectors: Float32Array, threads?: number): void;
  /** Up to `wanted` keys, best first; `expansion` is this search's ef (0: the index's default). */
  search(query: Float32Array, wanted: number, expansion?: number): BigUint64Array;
  /** How many of the keys were present (and are now gone). */
  remove(keys: BigUint64Array): number;
  /** 1 where the key is present, 0 where not. */
  contains(keys: BigUint64Array): Uint8Array;
  save(path: string): void;
  /** Replace the contents with the file's, copied into memory (load) or mapped read-only (view). */
  load(path: string): void;
  view(path: string): void;
}

interface VectorAddon {
  VectorIndex: new (settings: { dimensions: number; connectivity: number; expansionAdd: number; expansionSearch: number }) => VectorIndex;
}

/** The graph settings of every collection's index (the bench builds its indexes, and its peer's, from these). */
export const INDEX_SETTINGS = {
  /** Inner product over unit vectors (cosine), vectors quantised to int8. */
  metric: 'ip',
  quantization: 'i8',
  connectivity: 16,
  expansionAdd: 128,
  expansionSearch: 64,
} as const;

export function newIndex(dimensions: number): VectorIndex {
  const { connectivity, expansionAdd, expansionSearch } = INDEX_SETTINGS;
  return new (loadAddon<VectorAddon>().VectorIndex)({ dimensions, connectivity, expansionAdd, expansionSearch });
}
