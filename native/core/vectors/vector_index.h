// A collection's approximate nearest-neighbour index: USearch's HNSW (index_dense) over 8-bit vectors with an
// inner-product metric, built from the npm package's headers with the changes in
// native/usearch/patch-headers.mjs (prefetching candidates' vectors, big arenas on huge pages, concurrent
// inserts that do not lose links). The file format is USearch's own, so indexes saved by the npm binding of
// the same version load here and back.
//
// Each vector is scaled to unit length and quantised to int8 (x * 127) on insert and on query, so the inner
// product is cosine. The index only proposes candidates: callers rank them exactly (src/vectors/rescore.ts).
//
// Not thread-safe for writers: one add/remove/save/load at a time (the caller's per-collection lock), searches
// from the same thread. Add() can spread one batch over several threads itself.
// Errors (out of memory, unreadable files, dimension mismatches) throw std::runtime_error.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace sightflow::vectors {

struct IndexSettings {
  std::size_t dimensions = 0;
  std::size_t connectivity = 16;       // M: neighbours per node on upper levels (2M on the base level)
  std::size_t expansion_add = 128;     // ef_construction
  std::size_t expansion_search = 64;   // default ef for Search() calls that pass 0
};

class VectorIndex {
 public:
  explicit VectorIndex(const IndexSettings& settings);
  ~VectorIndex();
  VectorIndex(const VectorIndex&) = delete;
  VectorIndex& operator=(const VectorIndex&) = delete;
  VectorIndex(VectorIndex&&) noexcept;
  VectorIndex& operator=(VectorIndex&&) noexcept;

  std::size_t Size() const;
  std::size_t Dimensions() const;

  // Inserts n vectors (row-major float32, n x Dimensions()) under keys; a key already present is an error
  // (keys are unique). threads > 1 splits the batch across that many threads, except the inserts that reuse
  // the slots of removed entries, which run first on one thread. Several threads lose no links to the
  // concurrency (the graph is as good as one thread's, not the same); one thread builds the same graph every
  // time.
  void Add(const std::uint64_t* keys, std::size_t n, const float* vectors, std::size_t threads = 1);

  // Up to `wanted` keys nearest to `query` (best first) into keys_out (and distances_out when not null);
  // returns how many were written. expansion 0 uses the settings' expansion_search.
  std::size_t Search(const float* query, std::size_t wanted, std::size_t expansion, std::uint64_t* keys_out,
                     float* distances_out) const;

  // The same, over the keys a filter allows only: `allowed` is a bitmap over keys (key k is allowed when bit
  // k % 8 of byte k / 8 is set; keys at or past allowed_bytes * 8 are not). The filter is the graph search's
  // predicate: every node still guides the walk, only allowed ones enter the results, and the walk goes on
  // until it holds max(expansion, wanted) allowed nodes or has seen every reachable node, so it answers
  // `wanted` keys whenever that many are allowed. Its cost grows as the allowed share shrinks (a 1% filter
  // walks ~100x the nodes); SearchKeys is the better plan for small sets.
  std::size_t SearchFiltered(const float* query, std::size_t wanted, std::size_t expansion, const std::uint8_t* allowed,
                             std::size_t allowed_bytes, std::uint64_t* keys_out, float* distances_out) const;

  // Exact search over the given keys alone (keys not in the index are skipped): one distance per key over the
  // index's 8-bit vectors, the nearest `wanted` best first. Cost is linear in n, independent of the index size.
  std::size_t SearchKeys(const float* query, std::size_t wanted, const std::uint64_t* keys, std::size_t n,
                         std::uint64_t* keys_out, float* distances_out) const;

  // Removes the keys that are present; returns how many were.
  std::size_t Remove(const std::uint64_t* keys, std::size_t n);
  bool Contains(std::uint64_t key) const;

  void Save(const std::string& path) const;
  // Replaces the contents with the file's: Load copies it into memory, View maps it read-only (no writes).
  // The file's outer layout is checked first (see CheckLayout); its graph is trusted: verify a checksum.
  void Load(const std::string& path);
  void View(const std::string& path);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sightflow::vectors
