// Unit tests of the vector index core: the int8 distance kernel against the portable one, recall against
// exact search, every vector finding itself after builds on one thread or several, keys (duplicates,
// removal), save/load/view round trips, and files that are not indexes.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "vectors/dot_i8.h"
#include "vectors/vector_index.h"

using namespace sightflow::vectors;

namespace {

constexpr std::size_t kDims = 64;

// n unit vectors around n/20 random centres (clustered, like embeddings).
std::vector<float> Clustered(std::size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  std::vector<float> centres((n / 20 + 1) * kDims);
  for (auto& c : centres) c = g(rng);
  std::vector<float> out(n * kDims);
  for (std::size_t i = 0; i < n; i++) {
    std::size_t c = rng() % (n / 20 + 1);
    float norm = 0;
    for (std::size_t d = 0; d < kDims; d++) norm += (out[i * kDims + d] = centres[c * kDims + d] + 0.8f * g(rng)) * out[i * kDims + d];
    for (std::size_t d = 0; d < kDims; d++) out[i * kDims + d] /= std::sqrt(norm);
  }
  return out;
}

std::vector<std::uint64_t> Exact(const std::vector<float>& data, const float* q, std::size_t k) {
  std::vector<std::pair<float, std::uint64_t>> scored;
  for (std::size_t i = 0; i < data.size() / kDims; i++) {
    float dot = 0;
    for (std::size_t d = 0; d < kDims; d++) dot += data[i * kDims + d] * q[d];
    scored.push_back({-dot, i});
  }
  std::partial_sort(scored.begin(), scored.begin() + k, scored.end());
  std::vector<std::uint64_t> keys;
  for (std::size_t i = 0; i < k; i++) keys.push_back(scored[i].second);
  return keys;
}

std::string TempPath(const char* name) { return std::string("/tmp/sightflow-vectors-") + std::to_string(getpid()) + "-" + name; }

VectorIndex Build(const std::vector<float>& data, std::size_t threads = 1) {
  VectorIndex index({kDims, 16, 128, 64});
  std::vector<std::uint64_t> keys(data.size() / kDims);
  for (std::size_t i = 0; i < keys.size(); i++) keys[i] = i;
  index.Add(keys.data(), keys.size(), data.data(), threads);
  return index;
}

double Recall(const VectorIndex& index, const std::vector<float>& data, const std::vector<float>& queries, std::size_t ef) {
  std::size_t hit = 0, total = 0;
  std::vector<std::uint64_t> found(10);
  for (std::size_t q = 0; q < queries.size() / kDims; q++) {
    std::size_t n = index.Search(&queries[q * kDims], 10, ef, found.data(), nullptr);
    auto truth = Exact(data, &queries[q * kDims], 10);
    std::set<std::uint64_t> t(truth.begin(), truth.end());
    for (std::size_t i = 0; i < n; i++) hit += t.count(found[i]);
    total += 10;
  }
  return double(hit) / double(total);
}

}  // namespace

TEST_CASE("the selected int8 kernel equals the portable one, every length") {
  std::mt19937 rng(3);
  for (std::size_t n : {0u, 1u, 15u, 16u, 31u, 32u, 33u, 64u, 100u, 512u, 1023u}) {
    std::vector<std::int8_t> a(n), b(n);
    for (std::size_t i = 0; i < n; i++) {
      a[i] = static_cast<std::int8_t>(static_cast<int>(rng() % 255) - 127);
      b[i] = static_cast<std::int8_t>(static_cast<int>(rng() % 255) - 127);
    }
    auto pa = reinterpret_cast<std::uintptr_t>(a.data()), pb = reinterpret_cast<std::uintptr_t>(b.data());
    CHECK(DotI8Distance()(pa, pb, n) == DotI8DistanceScalar(pa, pb, n));
  }
  std::vector<std::int8_t> same(512, 127);
  auto p = reinterpret_cast<std::uintptr_t>(same.data());
  CHECK(DotI8Distance()(p, p, 512) == doctest::Approx(1.0f - 512.0f));  // 1 - <a,a>/127^2
}

TEST_CASE("search finds the exact neighbours of clustered vectors, on one thread or several") {
  auto data = Clustered(3000, 1);
  auto queries = Clustered(50, 2);
  auto one = Build(data);
  CHECK(one.Size() == 3000);
  CHECK(Recall(one, data, queries, 64) >= 0.9);
  CHECK(Recall(one, data, queries, 256) >= Recall(one, data, queries, 16));
  auto four = Build(data, 4);
  CHECK(four.Size() == 3000);
  CHECK(Recall(four, data, queries, 64) >= 0.9);
}

// How many of the index's vectors (keys 0..n-1 hold data's rows) come back first when searched for.
std::size_t FoundThemselves(const VectorIndex& index, const std::vector<float>& data) {
  std::uint64_t key = 0;
  std::size_t self = 0;
  for (std::size_t i = 0; i < data.size() / kDims; i++)
    self += index.Search(&data[i * kDims], 1, 64, &key, nullptr) == 1 && key == i;
  return self;
}

// Concurrent inserts used to lose links (an orphaned node no search reaches): with USearch's own headers,
// 41 of 200 of these parallel builds (100 of 2 threads, 100 of 4) missed a vector or more; the patched
// headers (native/usearch/patch-headers.mjs) fixed that, none of 2000 missed any. Each parallel build
// interleaves differently, so this repeats them: SIGHTFLOW_VECTOR_BUILDS=1000 makes it a stress test.
TEST_CASE("every vector finds itself after builds on one thread or several") {
  const char* env = std::getenv("SIGHTFLOW_VECTOR_BUILDS");
  const int builds = env ? std::atoi(env) : 20;
  int imperfect = 0;
  for (int b = 0; b < builds; b++) {
    auto data = Clustered(300, 100 + static_cast<unsigned>(b));
    for (std::size_t threads : {1u, 2u, 4u}) {
      std::size_t self = FoundThemselves(Build(data, threads), data);
      if (self != 300) {
        imperfect++;
        MESSAGE("build " << b << ", " << threads << " threads: " << self << " of 300 found themselves");
      }
    }
  }
  CHECK(imperfect == 0);
  MESSAGE(builds << " builds x 1, 2 and 4 threads: " << imperfect << " missed a vector");
}

TEST_CASE("a parallel add that reuses removed slots loses nothing") {
  auto data = Clustered(450, 9);
  auto first = Clustered(300, 10);  // what keys 0..299 held before a third of them were removed
  VectorIndex index({kDims, 16, 128, 64});
  std::vector<std::uint64_t> keys(300);
  for (std::size_t i = 0; i < 300; i++) keys[i] = i;
  index.Add(keys.data(), 300, first.data(), 1);
  std::vector<std::uint64_t> back;
  for (std::size_t i = 0; i < 300; i += 3) back.push_back(i);
  CHECK(index.Remove(back.data(), back.size()) == 100);
  for (std::size_t i = 0; i < 300; i++)
    if (i % 3) std::copy(&first[i * kDims], &first[(i + 1) * kDims], &data[i * kDims]);
  for (std::size_t i = 300; i < 450; i++) back.push_back(i);  // 100 reuse removed slots, 150 take new ones
  std::vector<float> vectors;
  for (std::uint64_t k : back) vectors.insert(vectors.end(), &data[k * kDims], &data[(k + 1) * kDims]);
  index.Add(back.data(), back.size(), vectors.data(), 2);
  CHECK(index.Size() == 450);
  CHECK(FoundThemselves(index, data) == 450);
}

TEST_CASE("a vector's own key comes first; wanted caps the answer; an empty index answers nothing") {
  auto data = Clustered(500, 4);
  auto index = Build(data);
  std::vector<std::uint64_t> keys(5);
  std::vector<float> distances(5);
  CHECK(index.Search(&data[123 * kDims], 5, 0, keys.data(), distances.data()) == 5);
  CHECK(keys[0] == 123);
  CHECK(std::is_sorted(distances.begin(), distances.end()));
  CHECK(index.Search(&data[0], 0, 0, keys.data(), nullptr) == 0);
  VectorIndex empty({kDims, 16, 128, 64});
  CHECK(empty.Search(&data[0], 5, 0, keys.data(), nullptr) == 0);
}

TEST_CASE("duplicate keys are refused; removed keys are never found again") {
  auto data = Clustered(400, 5);
  auto index = Build(data);
  std::uint64_t dup = 7;
  CHECK_THROWS_AS(index.Add(&dup, 1, &data[0]), std::runtime_error);
  CHECK(index.Size() == 400);
  std::vector<std::uint64_t> gone = {7, 8, 9, 100000};
  CHECK(index.Remove(gone.data(), gone.size()) == 3);
  CHECK(index.Size() == 397);
  CHECK_FALSE(index.Contains(7));
  CHECK(index.Contains(10));
  std::vector<std::uint64_t> keys(50);
  for (std::uint64_t k : {7u, 8u, 9u}) {
    std::size_t n = index.Search(&data[k * kDims], 50, 128, keys.data(), nullptr);
    for (std::size_t i = 0; i < n; i++) CHECK(keys[i] != k);
  }
}

TEST_CASE("save, load and view round trips give the same answers") {
  auto data = Clustered(1000, 6);
  auto index = Build(data);
  std::string path = TempPath("roundtrip.usearch");
  index.Save(path);
  VectorIndex loaded({kDims, 16, 128, 64}), viewed({kDims, 16, 128, 64});
  loaded.Load(path);
  viewed.View(path);
  CHECK(loaded.Size() == 1000);
  CHECK(viewed.Size() == 1000);
  std::vector<std::uint64_t> a(10), b(10), c(10);
  for (std::size_t q = 0; q < 20; q++) {
    index.Search(&data[q * 37 * kDims], 10, 64, a.data(), nullptr);
    loaded.Search(&data[q * 37 * kDims], 10, 64, b.data(), nullptr);
    viewed.Search(&data[q * 37 * kDims], 10, 64, c.data(), nullptr);
    CHECK(a == b);
    CHECK(a == c);
  }
  // A loaded index takes writes.
  std::uint64_t key = 5000;
  loaded.Add(&key, 1, &data[0]);
  CHECK(loaded.Size() == 1001);
  std::remove(path.c_str());
}

TEST_CASE("files that are not indexes of these dimensions throw") {
  auto data = Clustered(200, 7);
  std::string path = TempPath("bad.usearch");
  VectorIndex index({kDims, 16, 128, 64});
  CHECK_THROWS_AS(index.Load(path + ".missing"), std::runtime_error);
  {
    std::ofstream(path, std::ios::binary) << "not an index";
  }
  CHECK_THROWS_AS(index.Load(path), std::runtime_error);
  CHECK_THROWS_AS(index.View(path), std::runtime_error);
  // Another dimension count.
  VectorIndex other({kDims * 2, 16, 128, 64});
  std::vector<float> wide(kDims * 2, 0.1f);
  std::uint64_t key = 1;
  other.Add(&key, 1, wide.data());
  other.Save(path);
  CHECK_THROWS_AS(index.Load(path), std::runtime_error);
  // A real index cut short.
  auto whole = Build(data);
  whole.Save(path);
  std::string bytes;
  {
    std::ifstream in(path, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  for (std::size_t keep : {std::size_t(4), std::size_t(8), bytes.size() / 2, bytes.size() - 70}) {
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(keep));
    CHECK_THROWS_AS(index.Load(path), std::runtime_error);
    CHECK_THROWS_AS(index.View(path), std::runtime_error);
  }
  std::remove(path.c_str());
  CHECK_THROWS_AS(VectorIndex({0, 16, 128, 64}), std::runtime_error);
}

TEST_CASE("filtered search returns only allowed keys, as many as wanted; key-restricted search is exact") {
  auto data = Clustered(3000, 12);
  auto queries = Clustered(30, 13);
  auto index = Build(data);
  for (std::size_t every : {2u, 10u, 200u}) {  // 50%, 10% and 0.5% of the keys allowed
    std::vector<std::uint8_t> allowed((3000 + 7) / 8, 0);
    std::vector<std::uint64_t> keys;
    for (std::size_t k = 0; k < 3000; k += every) {
      allowed[k >> 3] |= std::uint8_t(1u << (k & 7));
      keys.push_back(k);
    }
    std::vector<std::uint64_t> found(18), exact(18);
    std::size_t hit = 0, total = 0;
    for (std::size_t q = 0; q < 30; q++) {
      const float* query = &queries[q * kDims];
      std::size_t n = index.SearchFiltered(query, 18, 64, allowed.data(), allowed.size(), found.data(), nullptr);
      CHECK(n == std::min<std::size_t>(18, keys.size()));
      for (std::size_t i = 0; i < n; i++) CHECK(found[i] % every == 0);
      std::size_t m = index.SearchKeys(query, 18, keys.data(), keys.size(), exact.data(), nullptr);
      CHECK(m == n);
      // Exact over the allowed keys: the true nearest allowed one comes first (up to int8 rounding ties).
      std::vector<float> subset;
      for (auto k : keys) subset.insert(subset.end(), &data[k * kDims], &data[(k + 1) * kDims]);
      auto truth = Exact(subset, query, 1);
      float best = 0, got = 0;
      for (std::size_t d = 0; d < kDims; d++) {
        best += subset[truth[0] * kDims + d] * query[d];
        got += data[exact[0] * kDims + d] * query[d];
      }
      CHECK(got >= best - 0.02f);
      std::set<std::uint64_t> t(exact.begin(), exact.begin() + static_cast<std::ptrdiff_t>(std::min<std::size_t>(10, m)));
      for (std::size_t i = 0; i < std::min<std::size_t>(10, n); i++) hit += t.count(found[i]);
      total += std::min<std::size_t>(10, n);
    }
    CHECK(double(hit) / double(total) >= 0.9);
  }
  // Keys past the bitmap are not allowed; absent keys are skipped by the key-restricted search.
  std::vector<std::uint64_t> out(5);
  std::uint8_t none = 0xff;  // keys 0-7 only
  CHECK(index.SearchFiltered(&data[0], 5, 64, &none, 1, out.data(), nullptr) == 5);
  for (std::size_t i = 0; i < 5; i++) CHECK(out[i] < 8);
  std::vector<std::uint64_t> some = {4, 999999, 5};
  CHECK(index.SearchKeys(&data[4 * kDims], 5, some.data(), some.size(), out.data(), nullptr) == 2);
  CHECK(out[0] == 4);
}
