// N-API surface of native/core/vectors: a collection's vector index as a JS class. Every call runs on the JS
// thread and is short (callers chunk inserts, see src/vectors/index-manager.ts); src/native/vectors.ts types
// it. Typed arrays are read through their own offset and length (views into bigger buffers are fine).
// Arguments are read with the shared reader (options.h): a bad one throws ERR_SIGHTFLOW_VECTORS_INVALID_ARG.
// What the core throws (unreadable or foreign files, a key already present, out of memory) becomes
// ERR_SIGHTFLOW_VECTORS_FAILED with the core's message.
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "bindings.h"
#include "options.h"
#include "vectors/vector_index.h"

namespace sightflow {
namespace {

constexpr int64_t kMaxCount = 1000000;

// Runs a core call, turning its std::exception into the coded JS error.
template <typename F>
auto Core(const ArgReader& args, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const Napi::Error&) {
    throw;
  } catch (const std::exception& e) {
    args.Fail("failed", e.what());
  }
}

class VectorIndexWrap : public Napi::ObjectWrap<VectorIndexWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "VectorIndex",
                       {InstanceMethod<&VectorIndexWrap::Size>("size"), InstanceMethod<&VectorIndexWrap::Dimensions>("dimensions"),
                        InstanceMethod<&VectorIndexWrap::Add>("add"), InstanceMethod<&VectorIndexWrap::Search>("search"),
                        InstanceMethod<&VectorIndexWrap::SearchKeys>("searchKeys"),
                        InstanceMethod<&VectorIndexWrap::Remove>("remove"), InstanceMethod<&VectorIndexWrap::Contains>("contains"),
                        InstanceMethod<&VectorIndexWrap::Save>("save"), InstanceMethod<&VectorIndexWrap::Load>("load"),
                        InstanceMethod<&VectorIndexWrap::View>("view")});
  }

  // new VectorIndex({ dimensions, connectivity, expansionAdd, expansionSearch }); dimensions is required.
  explicit VectorIndexWrap(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<VectorIndexWrap>(info), index_(Core(ArgReader(info.Env(), "VECTORS"), [&] { return vectors::VectorIndex(Read(info)); })) {}

 private:
  static vectors::IndexSettings Read(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "VECTORS");
    const OptionsReader o(args, info[0], "settings");
    vectors::IndexSettings s;
    s.dimensions = static_cast<std::size_t>(o.Integer("dimensions", std::nullopt, 1, kMaxCount));
    s.connectivity = static_cast<std::size_t>(o.Integer("connectivity", static_cast<int64_t>(s.connectivity), 1, kMaxCount));
    s.expansion_add = static_cast<std::size_t>(o.Integer("expansionAdd", static_cast<int64_t>(s.expansion_add), 1, kMaxCount));
    s.expansion_search = static_cast<std::size_t>(o.Integer("expansionSearch", static_cast<int64_t>(s.expansion_search), 1, kMaxCount));
    return s;
  }

  static Napi::BigUint64Array Keys(const ArgReader& args, const Napi::Value& v) {
    return args.Typed<Napi::BigUint64Array>(v, "keys", napi_biguint64_array, "BigUint64Array");
  }

  // A count argument; absent (undefined) is the fallback.
  static std::size_t Count(const ArgReader& args, const Napi::Value& v, const char* name, std::size_t fallback) {
    return v.IsUndefined() ? fallback : static_cast<std::size_t>(args.Integer(v, name, 0, kMaxCount));
  }

  static std::string Path(const ArgReader& args, const Napi::Value& v) { return args.String(v, "path", true); }

  Napi::Value Size(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), static_cast<double>(index_.Size())); }
  Napi::Value Dimensions(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(index_.Dimensions()));
  }

  // add(keys: BigUint64Array, vectors: Float32Array (keys.length x dimensions), threads = 1; 0 = every core)
  void Add(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "VECTORS");
    auto keys = Keys(args, info[0]);
    const std::size_t need = keys.ElementLength() * index_.Dimensions();
    auto vectors = args.Typed<Napi::Float32Array>(info[1], "vectors", napi_float32_array, "Float32Array",
                                                  "of keys.length x dimensions (" + std::to_string(need) + ") values",
                                                  [need](std::size_t n) { return n == need; });
    std::size_t threads = Count(args, info[2], "threads", 1);
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    Core(args, [&] { index_.Add(keys.Data(), keys.ElementLength(), vectors.Data(), threads); });
  }

  Napi::Float32Array Query(const ArgReader& args, const Napi::Value& v) const {
    const std::size_t dims = index_.Dimensions();
    return args.Typed<Napi::Float32Array>(v, "query", napi_float32_array, "Float32Array",
                                          "of dimensions (" + std::to_string(dims) + ") values",
                                          [dims](std::size_t n) { return n == dims; });
  }

  Napi::Value Found(Napi::Env env, std::size_t found) const {
    auto out = Napi::BigUint64Array::New(env, found);
    std::copy(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(found), out.Data());
    return out;
  }

  // search(query: Float32Array (dimensions), wanted = 10, expansion = 0 (the default ef), allowed?: Uint8Array
  // bitmap over keys) -> BigUint64Array, best first. With `allowed`, only keys whose bit is set are returned:
  // the bitmap is the graph search's own filter (vector_index.h).
  Napi::Value Search(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "VECTORS");
    auto query = Query(args, info[0]);
    const std::size_t wanted = Count(args, info[1], "wanted", 10);
    const std::size_t expansion = Count(args, info[2], "expansion", 0);
    keys_.resize(wanted);
    std::size_t found;
    if (info[3].IsUndefined()) {
      found = Core(args, [&] { return index_.Search(query.Data(), wanted, expansion, keys_.data(), nullptr); });
    } else {
      auto allowed = args.Typed<Napi::Uint8Array>(info[3], "allowed", napi_uint8_array, "Uint8Array");
      found = Core(args, [&] {
        return index_.SearchFiltered(query.Data(), wanted, expansion, allowed.Data(), allowed.ElementLength(), keys_.data(), nullptr);
      });
    }
    return Found(info.Env(), found);
  }

  // searchKeys(query, wanted, keys: BigUint64Array) -> BigUint64Array: exact search over those keys alone.
  Napi::Value SearchKeys(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "VECTORS");
    auto query = Query(args, info[0]);
    const std::size_t wanted = Count(args, info[1], "wanted", 10);
    auto keys = Keys(args, info[2]);
    keys_.resize(wanted);
    const std::size_t found =
        Core(args, [&] { return index_.SearchKeys(query.Data(), wanted, keys.Data(), keys.ElementLength(), keys_.data(), nullptr); });
    return Found(info.Env(), found);
  }

  // remove(keys) -> how many were present
  Napi::Value Remove(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "VECTORS");
    auto keys = Keys(args, info[0]);
    const std::size_t removed = Core(args, [&] { return index_.Remove(keys.Data(), keys.ElementLength()); });
    return Napi::Number::New(info.Env(), static_cast<double>(removed));
  }

  // contains(keys) -> Uint8Array of 0/1
  Napi::Value Contains(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "VECTORS");
    auto keys = Keys(args, info[0]);
    auto out = Napi::Uint8Array::New(info.Env(), keys.ElementLength());
    for (std::size_t i = 0; i < keys.ElementLength(); i++) out[i] = index_.Contains(keys[i]) ? 1 : 0;
    return out;
  }

  void Save(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "VECTORS");
    const std::string path = Path(args, info[0]);
    Core(args, [&] { index_.Save(path); });
  }
  void Load(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "VECTORS");
    const std::string path = Path(args, info[0]);
    Core(args, [&] { index_.Load(path); });
  }
  void View(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "VECTORS");
    const std::string path = Path(args, info[0]);
    Core(args, [&] { index_.View(path); });
  }

  vectors::VectorIndex index_;
  std::vector<std::uint64_t> keys_;  // search scratch, reused
};

}  // namespace

void InitVectorIndex(Napi::Env env, Napi::Object exports) { exports.Set("VectorIndex", VectorIndexWrap::Define(env)); }

}  // namespace sightflow
