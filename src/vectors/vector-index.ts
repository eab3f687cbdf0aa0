// The graph settings every collection's vector index is built with, and the one way to make such an index
// (the index itself is the addon's, typed in src/native/vectors.ts).
import { createVectorIndex, type VectorIndex } from '../native/vectors.js';

export type { VectorIndex } from '../native/vectors.js';

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
  return createVectorIndex({ dimensions, connectivity, expansionAdd, expansionSearch });
}
