// N-API surface of native/core/vectors: a collection's vector index as a JS class. Every call runs on the JS
// thread and is short (callers chunk inserts, see src/vectors/index-manager.ts); src/vectors/vector-index.ts
// types it. Typed arrays are read through their own offset and length (views into bigger buffers are fine).
// C++ exceptions surface as JS errors (NAPI_CPP_EXCEPTIONS).
#include <string>
#include <thread>
#include <vector>

#include "bindings.h"
#include "vectors/vector_index.h"

namespace sightflow {
namespace {

class VectorIndexWrap : public Napi::ObjectWrap<VectorIndexWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "VectorIndex",
                       {InstanceMethod<&VectorIndexWrap::Size>("size"), InstanceMethod<&VectorIndexWrap::Dimensions>("dimensions"),
                        InstanceMethod<&VectorIndexWrap::Add>("add"), InstanceMethod<&VectorIndexWrap::Search>("search"),
                        InstanceMethod<&VectorIndexWrap::Remove>("remove"), InstanceMethod<&VectorIndexWrap::Contains>("contains"),
                        InstanceMethod<&VectorIndexWrap::Save>("save"), InstanceMethod<&VectorIndexWrap::Load>("load"),
                        InstanceMethod<&VectorIndexWrap::View>("view")});
  }

  // new VectorIndex({ dimensions, connectivity, expansionAdd, expansionSearch })
  explicit VectorIndexWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<VectorIndexWrap>(info), index_(Read(info)) {}

 private:
  static vectors::IndexSettings Read(const Napi::CallbackInfo& info) {
    if (info.Length() < 1 || !info[0].IsObject()) throw Napi::TypeError::New(info.Env(), "VectorIndex expects a settings object");
    Napi::Object obj = info[0].As<Napi::Object>();
    auto size = [&](const char* key, std::size_t fallback) -> std::size_t {
      Napi::Value v = obj.Get(key);
      if (v.IsUndefined()) return fallback;
      double d = v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : -1;
      if (!(d >= 1 && d <= 1e6) || d != static_cast<double>(static_cast<std::size_t>(d)))
        throw Napi::RangeError::New(info.Env(), std::string("VectorIndex: ") + key + " must be an integer from 1 to 1000000");
      return static_cast<std::size_t>(d);
    };
    vectors::IndexSettings s;
    s.dimensions = size("dimensions", 0);
    if (s.dimensions == 0) throw Napi::TypeError::New(info.Env(), "VectorIndex: dimensions is required");
    s.connectivity = size("connectivity", s.connectivity);
    s.expansion_add = size("expansionAdd", s.expansion_add);
    s.expansion_search = size("expansionSearch", s.expansion_search);
    return s;
  }

  static Napi::BigUint64Array Keys(const Napi::CallbackInfo& info, std::size_t i) {
    if (info.Length() <= i || !info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_biguint64_array)
      throw Napi::TypeError::New(info.Env(), "VectorIndex: keys must be a BigUint64Array");
    return info[i].As<Napi::BigUint64Array>();
  }

  static Napi::Float32Array Floats(const Napi::CallbackInfo& info, std::size_t i, const char* what) {
    if (info.Length() <= i || !info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
      throw Napi::TypeError::New(info.Env(), std::string("VectorIndex: ") + what + " must be a Float32Array");
    return info[i].As<Napi::Float32Array>();
  }

  static std::size_t Count(const Napi::CallbackInfo& info, std::size_t i, std::size_t fallback) {
    if (info.Length() <= i || info[i].IsUndefined()) return fallback;
    double d = info[i].IsNumber() ? info[i].As<Napi::Number>().DoubleValue() : -1;
    if (!(d >= 0 && d <= 1e6)) throw Napi::RangeError::New(info.Env(), "VectorIndex: counts must be from 0 to 1000000");
    return static_cast<std::size_t>(d);
  }

  static std::string Path(const Napi::CallbackInfo& info) {
    if (info.Length() < 1 || !info[0].IsString()) throw Napi::TypeError::New(info.Env(), "VectorIndex: path must be a string");
    return info[0].As<Napi::String>().Utf8Value();
  }

  Napi::Value Size(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), static_cast<double>(index_.Size())); }
  Napi::Value Dimensions(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(index_.Dimensions()));
  }

  // add(keys: BigUint64Array, vectors: Float32Array (keys.length x dimensions), threads = 1; 0 = every core)
  void Add(const Napi::CallbackInfo& info) {
    auto keys = Keys(info, 0);
    auto vectors = Floats(info, 1, "vectors");
    if (vectors.ElementLength() != keys.ElementLength() * index_.Dimensions())
      throw Napi::RangeError::New(info.Env(), "VectorIndex.add: vectors must hold keys.length x dimensions values");
    std::size_t threads = Count(info, 2, 1);
    if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
    index_.Add(keys.Data(), keys.ElementLength(), vectors.Data(), threads);
  }

  // search(query: Float32Array (dimensions), wanted, expansion = 0 (the default ef)) -> BigUint64Array, best first
  Napi::Value Search(const Napi::CallbackInfo& info) {
    auto query = Floats(info, 0, "query");
    if (query.ElementLength() != index_.Dimensions())
      throw Napi::RangeError::New(info.Env(), "VectorIndex.search: query must hold dimensions values");
    std::size_t wanted = Count(info, 1, 10);
    std::size_t expansion = Count(info, 2, 0);
    keys_.resize(wanted);
    std::size_t found = index_.Search(query.Data(), wanted, expansion, keys_.data(), nullptr);
    auto out = Napi::BigUint64Array::New(info.Env(), found);
    std::copy(keys_.begin(), keys_.begin() + static_cast<std::ptrdiff_t>(found), out.Data());
    return out;
  }

  // remove(keys) -> how many were present
  Napi::Value Remove(const Napi::CallbackInfo& info) {
    auto keys = Keys(info, 0);
    return Napi::Number::New(info.Env(), static_cast<double>(index_.Remove(keys.Data(), keys.ElementLength())));
  }

  // contains(keys) -> Uint8Array of 0/1
  Napi::Value Contains(const Napi::CallbackInfo& info) {
    auto keys = Keys(info, 0);
    auto out = Napi::Uint8Array::New(info.Env(), keys.ElementLength());
    for (std::size_t i = 0; i < keys.ElementLength(); i++) out[i] = index_.Contains(keys[i]) ? 1 : 0;
    return out;
  }

  void Save(const Napi::CallbackInfo& info) { index_.Save(Path(info)); }
  void Load(const Napi::CallbackInfo& info) { index_.Load(Path(info)); }
  void View(const Napi::CallbackInfo& info) { index_.View(Path(info)); }

  vectors::VectorIndex index_;
  std::vector<std::uint64_t> keys_;  // search scratch, reused
};

}  // namespace

void InitVectorIndex(Napi::Env env, Napi::Object exports) { exports.Set("VectorIndex", VectorIndexWrap::Define(env)); }

}  // namespace sightflow
