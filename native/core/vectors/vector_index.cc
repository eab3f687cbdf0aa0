// See vector_index.h. The USearch headers on the include path are the patched copies
// native/usearch/patch-headers.mjs writes (binding.gyp and CMakeLists.txt put them first).
#include "vectors/vector_index.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "vectors/dot_i8.h"

// USearch's own SIMD back end (NumKong) would be 25 C files, minutes of compile time, for the one kernel this
// index uses: its distance comes from dot_i8.h instead, and the portable code covers the rest.
#define USEARCH_USE_NUMKONG 0
#define USEARCH_USE_OPENMP 0
#include <usearch/index_dense.hpp>

namespace sightflow::vectors {

namespace uu = unum::usearch;

namespace {

uu::metric_punned_t Metric(std::size_t dimensions) {
  return uu::metric_punned_t::stateless(dimensions, reinterpret_cast<std::uintptr_t>(DotI8Distance()),
                                        uu::metric_punned_signature_t::array_array_size_k, uu::metric_kind_t::ip_k,
                                        uu::scalar_kind_t::i8_k);
}

[[noreturn]] void Fail(const char* what, uu::error_t& error) {
  std::string message = std::string(what) + ": " + (error ? error.what() : "unknown error");
  error.release();
  throw std::runtime_error(message);
}

// USearch's loader trusts the file: a length field that points past the end makes it read out of bounds
// (its checks subtract offsets without guarding against underflow). This checks the outer layout the dense
// index writes (u32 rows, u32 row bytes, the vectors, a 64-byte header starting "usearch", then the graph)
// against the file's size and our dimensions, which catches truncated files and files that are not indexes.
// Damage inside the graph is not detectable here: the caller verifies a checksum before loading
// (src/vectors/index-manager.ts).
void CheckLayout(const std::string& path, std::size_t dimensions) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("vector index: cannot open " + path);
  const std::uint64_t size = static_cast<std::uint64_t>(in.tellg());
  std::uint32_t shape[2] = {0, 0};
  in.seekg(0);
  if (size < sizeof(shape) || !in.read(reinterpret_cast<char*>(shape), sizeof(shape)))
    throw std::runtime_error("vector index: " + path + " is too short to be an index");
  if (shape[1] != dimensions)  // int8 vectors: one byte a dimension
    throw std::runtime_error("vector index: " + path + " holds vectors of " + std::to_string(shape[1]) + " bytes, expected " +
                             std::to_string(dimensions));
  const std::uint64_t header_at = sizeof(shape) + std::uint64_t(shape[0]) * shape[1];
  constexpr std::uint64_t kDenseHeader = 64, kGraphHeader = 40;
  if (header_at + kDenseHeader + kGraphHeader > size) throw std::runtime_error("vector index: " + path + " is truncated");
  char magic[7];
  in.seekg(static_cast<std::streamoff>(header_at));
  if (!in.read(magic, sizeof(magic)) || std::memcmp(magic, "usearch", sizeof(magic)) != 0)
    throw std::runtime_error("vector index: " + path + " is not a USearch index");
}

}  // namespace

struct VectorIndex::Impl {
  IndexSettings settings;
  uu::index_dense_t index;
  std::size_t threads = 1;  // thread contexts reserved so far (never shrinks)

  void Reserve(std::size_t members, std::size_t wanted_threads) {
    threads = std::max(threads, wanted_threads);
    if (!index.try_reserve(uu::index_limits_t(members, threads))) throw std::runtime_error("vector index: out of memory");
  }

  // After a load or view, USearch has rebuilt its own metric from the file header: put ours back.
  void AfterOpen() {
    if (index.dimensions() != settings.dimensions)
      throw std::runtime_error("vector index: file holds " + std::to_string(index.dimensions()) + "-d vectors, expected " +
                               std::to_string(settings.dimensions));
    if (!index.try_change_metric(Metric(settings.dimensions))) throw std::runtime_error("vector index: out of memory");
    Reserve(std::max<std::size_t>(index.size(), 1), threads);
  }
};

VectorIndex::VectorIndex(const IndexSettings& settings) {
  if (settings.dimensions == 0) throw std::runtime_error("vector index: dimensions must be positive");
  uu::index_dense_config_t config(settings.connectivity, settings.expansion_add, settings.expansion_search);
  config.multi = false;
  auto made = uu::index_dense_t::make(Metric(settings.dimensions), config);
  if (!made) Fail("vector index", made.error);
  impl_ = std::make_unique<Impl>(Impl{settings, std::move(made.index)});
}

VectorIndex::~VectorIndex() = default;
VectorIndex::VectorIndex(VectorIndex&&) noexcept = default;
VectorIndex& VectorIndex::operator=(VectorIndex&&) noexcept = default;

std::size_t VectorIndex::Size() const { return impl_->index.size(); }
std::size_t VectorIndex::Dimensions() const { return impl_->index.dimensions(); }

void VectorIndex::Add(const std::uint64_t* keys, std::size_t n, const float* vectors, std::size_t threads) {
  if (n == 0) return;
  threads = std::max<std::size_t>(1, std::min(threads, n));
  auto& index = impl_->index;
  if (index.size() + n > index.capacity() || threads > impl_->threads)
    impl_->Reserve(std::max(index.size() + n, index.capacity() * 2), threads);
  const std::size_t dims = index.dimensions();
  auto insert = [&](std::size_t thread, std::size_t begin, std::size_t end, std::string& failure) {
    for (std::size_t i = begin; i < end && failure.empty(); i++) {
      auto result = index.add(keys[i], vectors + i * dims, thread);
      if (!result) {
        failure = std::string("vector index: adding key ") + std::to_string(keys[i]) + ": " + result.error.what();
        result.error.release();
      }
    }
  };
  // Slots of removed entries are reused first, and a reused slot is relinked in place while other nodes still
  // link to it: USearch clears and re-forms its lists level by level, so a concurrent insert that links to it
  // meanwhile can lose that link. Those inserts run on one thread; only inserts into new slots run in parallel
  // (the patched headers make those safe: native/usearch/patch-headers.mjs). The end iterator's slot is the
  // count of nodes, removed ones included.
  const std::size_t reused = std::min(n, static_cast<std::size_t>(get_slot(index.cend())) - index.size());
  std::vector<std::string> failures(threads);
  insert(0, 0, reused, failures[0]);
  const std::size_t rest = n - reused;
  threads = std::max<std::size_t>(1, std::min(threads, rest));
  if (failures[0].empty() && rest > 0) {
    if (threads == 1) {
      insert(0, reused, n, failures[0]);
    } else {
      std::vector<std::thread> pool;
      const std::size_t per = (rest + threads - 1) / threads;
      for (std::size_t t = 0; t < threads; t++)
        pool.emplace_back(insert, t, reused + std::min(rest, t * per), reused + std::min(rest, (t + 1) * per),
                          std::ref(failures[t]));
      for (auto& th : pool) th.join();
    }
  }
  for (auto& f : failures)
    if (!f.empty()) throw std::runtime_error(f);
}

std::size_t VectorIndex::Search(const float* query, std::size_t wanted, std::size_t expansion, std::uint64_t* keys_out,
                                float* distances_out) const {
  auto& index = impl_->index;
  if (wanted == 0 || index.size() == 0) return 0;
  // The configured ef is a plain field read by each search: setting it per call costs nothing.
  index.change_expansion_search(expansion ? expansion : impl_->settings.expansion_search);
  // Thread context 0, not any_thread(): the free-context pool costs a mutex round trip per search.
  auto result = index.search(query, wanted, 0);
  if (!result) Fail("vector index search", result.error);
  return distances_out ? result.dump_to(keys_out, distances_out, wanted) : result.dump_to(keys_out, wanted);
}

std::size_t VectorIndex::SearchFiltered(const float* query, std::size_t wanted, std::size_t expansion,
                                        const std::uint8_t* allowed, std::size_t allowed_bytes, std::uint64_t* keys_out,
                                        float* distances_out) const {
  auto& index = impl_->index;
  if (wanted == 0 || index.size() == 0) return 0;
  index.change_expansion_search(expansion ? expansion : impl_->settings.expansion_search);
  const std::uint64_t limit = std::uint64_t(allowed_bytes) * 8;
  auto allow = [allowed, limit](std::uint64_t key) noexcept {
    return key < limit && ((allowed[key >> 3] >> (key & 7)) & 1) != 0;
  };
  auto result = index.filtered_search(query, wanted, allow, 0);
  if (!result) Fail("vector index search", result.error);
  return distances_out ? result.dump_to(keys_out, distances_out, wanted) : result.dump_to(keys_out, wanted);
}

std::size_t VectorIndex::SearchKeys(const float* query, std::size_t wanted, const std::uint64_t* keys, std::size_t n,
                                    std::uint64_t* keys_out, float* distances_out) const {
  auto& index = impl_->index;
  const std::size_t dims = index.dimensions();
  if (wanted == 0 || n == 0) return 0;
  // The query quantised as the index quantises vectors (USearch's f32 -> i8 cast: scaled to unit length, x 127).
  std::vector<std::int8_t> q(dims), v(dims);
  double magnitude = 0;
  for (std::size_t d = 0; d < dims; d++) magnitude += double(query[d]) * double(query[d]);
  magnitude = std::sqrt(magnitude);
  if (magnitude > 0)
    for (std::size_t d = 0; d < dims; d++)
      q[d] = static_cast<std::int8_t>(std::clamp(double(query[d]) * 127.0 / magnitude, -127.0, 127.0));
  const DotI8Fn distance = DotI8Distance();
  std::vector<std::pair<float, std::uint64_t>> scored;
  scored.reserve(n);
  for (std::size_t i = 0; i < n; i++) {
    if (index.get(keys[i], v.data()) != 1) continue;  // not in the index (deleted, or not caught up yet)
    scored.emplace_back(distance(reinterpret_cast<std::uintptr_t>(q.data()), reinterpret_cast<std::uintptr_t>(v.data()), dims),
                        keys[i]);
  }
  const std::size_t found = std::min(wanted, scored.size());
  std::partial_sort(scored.begin(), scored.begin() + static_cast<std::ptrdiff_t>(found), scored.end());
  for (std::size_t i = 0; i < found; i++) {
    keys_out[i] = scored[i].second;
    if (distances_out) distances_out[i] = scored[i].first;
  }
  return found;
}

std::size_t VectorIndex::Remove(const std::uint64_t* keys, std::size_t n) {
  std::size_t removed = 0;  // an absent key completes nothing
  for (std::size_t i = 0; i < n; i++) {
    auto result = impl_->index.remove(keys[i]);
    if (!result) Fail("vector index remove", result.error);
    removed += result.completed;
  }
  return removed;
}

bool VectorIndex::Contains(std::uint64_t key) const { return impl_->index.contains(key); }

void VectorIndex::Save(const std::string& path) const {
  auto result = impl_->index.save(path.c_str());
  if (!result) Fail("vector index save", result.error);
}

void VectorIndex::Load(const std::string& path) {
  CheckLayout(path, impl_->settings.dimensions);
  auto result = impl_->index.load(path.c_str());
  if (!result) Fail("vector index load", result.error);
  impl_->AfterOpen();
}

void VectorIndex::View(const std::string& path) {
  CheckLayout(path, impl_->settings.dimensions);
  auto result = impl_->index.view(path.c_str());
  if (!result) Fail("vector index view", result.error);
  impl_->AfterOpen();
}

}  // namespace sightflow::vectors
