// TypeScript face of native/core/vectors (native/addon/vector_index_binding.cc): a collection's vector index,
// USearch's HNSW over 8-bit vectors built from the npm package's headers with prefetching and huge pages
// (native/usearch/patch-headers.mjs says why). Same file format as the `usearch` npm binding of the pinned
// version. Every method runs on the JS thread and throws the addon's coded errors (src/native/load.ts):
// ERR_SIGHTFLOW_VECTORS_INVALID_ARG for a bad argument, ERR_SIGHTFLOW_VECTORS_FAILED for what the index
// refuses (a key already present, an unreadable or foreign file, out of memory).
import { errors } from '../base/errors.js';
import { loadAddon } from './load.js';

export interface VectorIndex {
  size(): number;
  dimensions(): number;
  /**
   * keys.length x dimensions unit float32 values; `threads` > 1 splits the batch over threads (0: every core),
   * and loses no links doing so (native/usearch/patch-headers.mjs); inserts that reuse removed keys' slots
   * run first, on one thread.
   */
  add(keys: BigUint64Array, vectors: Float32Array, threads?: number): void;
  /**
   * Up to `wanted` keys, best first; `expansion` is this search's ef (0: the index's default). With `allowed`
   * (a bitmap over keys: key k is allowed when bit k % 8 of byte k / 8 is set), only allowed keys come back:
   * the bitmap is the graph search's filter, so `wanted` keys come back whenever that many are allowed.
   */
  search(query: Float32Array, wanted: number, expansion?: number, allowed?: Uint8Array): BigUint64Array;
  /** Exact search over `keys` alone (absent keys skipped): up to `wanted`, best first. Linear in keys.length. */
  searchKeys(query: Float32Array, wanted: number, keys: BigUint64Array): BigUint64Array;
  /** How many of the keys were present (and are now gone). */
  remove(keys: BigUint64Array): number;
  /** 1 where the key is present, 0 where not. */
  contains(keys: BigUint64Array): Uint8Array;
  save(path: string): void;
  /** Replace the contents with the file's, copied into memory (load) or mapped read-only (view). */
  load(path: string): void;
  view(path: string): void;
}

/** The graph's shape: dimensions, neighbours per node (connectivity) and the build and search ef. */
export interface VectorIndexSettings {
  dimensions: number;
  connectivity: number;
  expansionAdd: number;
  expansionSearch: number;
}

interface VectorAddon {
  VectorIndex: new (settings: VectorIndexSettings) => VectorIndex;
}

/** An empty index; every setting is an integer from 1 to 1000000. */
export function createVectorIndex(settings: VectorIndexSettings): VectorIndex {
  for (const key of ['dimensions', 'connectivity', 'expansionAdd', 'expansionSearch'] as const) {
    const v: unknown = settings[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 1_000_000) {
      throw errors.invalidParam(key, `Expected integer between 1 and 1000000 for ${key} but received ${String(v)}`);
    }
  }
  return new (loadAddon<VectorAddon>().VectorIndex)(settings);
}
