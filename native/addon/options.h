// The one way every binding reads its arguments and options objects, and the one way the addon fails.
//
// Every error the addon raises is a JS Error with a stable `code`, ERR_SIGHTFLOW_<AREA>_<REASON> (AREA is
// DECODE, GPU, IMAGE, TRACK or VECTORS):
// - a bad argument or option is <AREA>_INVALID_ARG, a TypeError for the wrong kind of value and a RangeError
//   for one out of bounds, worded "Expected <type> <constraint> for <name> but received <value>";
// - a failure of the core itself is <AREA>_<what the core says> (the decoder's codes, e.g. DECODE_TIMEOUT)
//   or <AREA>_FAILED with the core's message.
// An option that is absent (undefined) takes its default; anything present must be right, so a wrong value is
// an error, never silently replaced by the default. The TypeScript faces in src/native/ check their inputs
// first with the same wording; these checks keep a direct call from crashing the process or corrupting memory.
#pragma once
#include <napi.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>

namespace sightflow {

// ERR_SIGHTFLOW_<area>_<reason>; reason is upper-cased (the decoder's "input_not_found" -> INPUT_NOT_FOUND).
inline std::string ErrorCode(const char* area, const std::string& reason) {
  std::string code = std::string("ERR_SIGHTFLOW_") + area + "_";
  for (char c : reason) code += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
  return code;
}

// An Error carrying `code`, to throw (C++ exceptions are on) or to reject a promise with.
inline Napi::Error CodedError(Napi::Env env, const std::string& code, const std::string& message) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Value().Set("code", code);
  return e;
}

// How a received value reads in a message: JS's String(v) for numbers, booleans and bigints, quoted strings,
// and the kind (with its length) for anything larger, so a 6 MB frame never ends up in a message.
inline std::string Describe(const Napi::Value& v) {
  if (v.IsUndefined()) return "undefined";
  if (v.IsNull()) return "null";
  if (v.IsNumber() || v.IsBoolean() || v.IsBigInt()) return v.ToString().Utf8Value();
  if (v.IsString()) {
    std::string s = v.As<Napi::String>().Utf8Value();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return "\"" + s + "\"";
  }
  if (v.IsTypedArray()) {
    static const char* const kNames[] = {"Int8Array",    "Uint8Array",   "Uint8ClampedArray", "Int16Array",
                                         "Uint16Array",  "Int32Array",   "Uint32Array",       "Float32Array",
                                         "Float64Array", "BigInt64Array", "BigUint64Array"};
    Napi::TypedArray t = v.As<Napi::TypedArray>();
    const auto type = static_cast<std::size_t>(t.TypedArrayType());
    const char* name = type < sizeof(kNames) / sizeof(kNames[0]) ? kNames[type] : "TypedArray";
    return std::string(name) + "(" + std::to_string(t.ElementLength()) + ")";
  }
  if (v.IsArray()) return "an array of " + std::to_string(v.As<Napi::Array>().Length());
  if (v.IsArrayBuffer()) return "an ArrayBuffer";
  if (v.IsFunction()) return "a function";
  if (v.IsSymbol()) return "a symbol";
  return "an object";
}

// Reads and checks the values of one binding (AREA names it in error codes). Each read returns the value or
// throws the INVALID_ARG error; `name` is what the message calls the value (an option key or argument name).
class ArgReader {
 public:
  ArgReader(Napi::Env env, const char* area) : env_(env), area_(area) {}

  Napi::Env Env() const { return env_; }

  // A finite number in [min, max] (min excluded when min_exclusive).
  double Number(const Napi::Value& v, const std::string& name, double min, double max, bool min_exclusive = false) const {
    const std::string constraint = Bounds(min, max, min_exclusive);
    if (!v.IsNumber()) WrongType("number", constraint, name, v);
    const double d = v.As<Napi::Number>().DoubleValue();
    if (!std::isfinite(d) || (min_exclusive ? !(d > min) : !(d >= min)) || !(d <= max)) OutOfRange("number", constraint, name, v);
    return d;
  }

  // An integral number in [min, max].
  int64_t Integer(const Napi::Value& v, const std::string& name, int64_t min, int64_t max) const {
    const std::string constraint = Bounds(static_cast<double>(min), static_cast<double>(max), false);
    if (!v.IsNumber()) WrongType("integer", constraint, name, v);
    const double d = v.As<Napi::Number>().DoubleValue();
    if (!std::isfinite(d) || std::trunc(d) != d || d < static_cast<double>(min) || d > static_cast<double>(max))
      OutOfRange("integer", constraint, name, v);
    return static_cast<int64_t>(d);
  }

  bool Boolean(const Napi::Value& v, const std::string& name) const {
    if (!v.IsBoolean()) WrongType("boolean", "", name, v);
    return v.As<Napi::Boolean>().Value();
  }

  std::string String(const Napi::Value& v, const std::string& name, bool non_empty) const {
    if (!v.IsString()) WrongType("string", non_empty ? "of at least 1 character" : "", name, v);
    std::string s = v.As<Napi::String>().Utf8Value();
    if (non_empty && s.empty()) OutOfRange("string", "of at least 1 character", name, v);
    return s;
  }

  // One of the listed strings.
  std::string OneOf(const Napi::Value& v, const std::string& name, std::initializer_list<const char*> choices) const {
    std::string list;
    for (const char* c : choices) list += (list.empty() ? "" : ", ") + std::string(c);
    if (!v.IsString()) WrongType("one of", list, name, v);
    const std::string s = v.As<Napi::String>().Utf8Value();
    for (const char* c : choices)
      if (s == c) return s;
    OutOfRange("one of", list, name, v);
  }

  // A typed array of `type` (e.g. napi_float32_array, read as T = Napi::Float32Array). When `ok_length` is
  // given and returns false for the element count, the error says `length_constraint` (e.g. "of at least 12
  // elements").
  template <typename T, typename Check>
  T Typed(const Napi::Value& v, const std::string& name, napi_typedarray_type type, const char* type_name,
          const std::string& length_constraint, Check ok_length) const {
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type) WrongType(type_name, length_constraint, name, v);
    T t = v.As<T>();
    if (!ok_length(t.ElementLength())) OutOfRange(type_name, length_constraint, name, v);
    return t;
  }
  template <typename T>
  T Typed(const Napi::Value& v, const std::string& name, napi_typedarray_type type, const char* type_name) const {
    return Typed<T>(v, name, type, type_name, "", [](std::size_t) { return true; });
  }

  Napi::Object Object(const Napi::Value& v, const std::string& name) const {
    if (!v.IsObject() || v.IsArray() || v.IsTypedArray() || v.IsFunction()) WrongType("object", "", name, v);
    return v.As<Napi::Object>();
  }

  // The messages every check throws, for a binding's own constraints (e.g. one length against another).
  [[noreturn]] void WrongType(const std::string& type, const std::string& constraint, const std::string& name,
                              const Napi::Value& got) const {
    Napi::TypeError e = Napi::TypeError::New(env_, Message(type, constraint, name, got));
    e.Value().Set("code", ErrorCode(area_, "invalid_arg"));
    throw e;
  }
  [[noreturn]] void OutOfRange(const std::string& type, const std::string& constraint, const std::string& name,
                               const Napi::Value& got) const {
    Napi::RangeError e = Napi::RangeError::New(env_, Message(type, constraint, name, got));
    e.Value().Set("code", ErrorCode(area_, "invalid_arg"));
    throw e;
  }

  // A failure of the core: code <AREA>_<reason> with the core's message.
  [[noreturn]] void Fail(const std::string& reason, const std::string& message) const {
    throw CodedError(env_, ErrorCode(area_, reason), message);
  }

 private:
  static std::string Message(const std::string& type, const std::string& constraint, const std::string& name,
                             const Napi::Value& got) {
    return "Expected " + type + (constraint.empty() ? "" : " " + constraint) + " for " + name + " but received " + Describe(got);
  }

  // "between 1 and 10", "greater than 0", "at least 0", "at most 5" or "" (JS's number formatting).
  std::string Bounds(double min, double max, bool min_exclusive) const {
    const bool has_min = min > -std::numeric_limits<double>::max(), has_max = max < std::numeric_limits<double>::max();
    const auto fmt = [&](double x) { return Napi::Number::New(env_, x).ToString().Utf8Value(); };
    if (min_exclusive) return "greater than " + fmt(min) + (has_max ? " and at most " + fmt(max) : "");
    if (has_min && has_max) return "between " + fmt(min) + " and " + fmt(max);
    if (has_min) return "at least " + fmt(min);
    if (has_max) return "at most " + fmt(max);
    return "";
  }

  Napi::Env env_;
  const char* area_;
};

// The keys of one options object. A key that is absent (undefined) gives the fallback; reads without a
// fallback make the key required.
class OptionsReader {
 public:
  // `value` must be an object; with `optional`, undefined reads as an empty object (every key its default).
  OptionsReader(const ArgReader& args, const Napi::Value& value, const std::string& name, bool optional = false)
      : args_(args), obj_(optional && value.IsUndefined() ? Napi::Object::New(args.Env()) : args.Object(value, name)) {}

  bool Has(const char* key) const { return !obj_.Get(key).IsUndefined(); }
  Napi::Value Get(const char* key) const { return obj_.Get(key); }

  double Number(const char* key, std::optional<double> fallback, double min, double max, bool min_exclusive = false) const {
    Napi::Value v = obj_.Get(key);
    if (v.IsUndefined() && fallback) return *fallback;
    return args_.Number(v, key, min, max, min_exclusive);
  }
  int64_t Integer(const char* key, std::optional<int64_t> fallback, int64_t min, int64_t max) const {
    Napi::Value v = obj_.Get(key);
    if (v.IsUndefined() && fallback) return *fallback;
    return args_.Integer(v, key, min, max);
  }
  bool Boolean(const char* key, bool fallback) const {
    Napi::Value v = obj_.Get(key);
    return v.IsUndefined() ? fallback : args_.Boolean(v, key);
  }
  std::string String(const char* key, bool non_empty) const { return args_.String(obj_.Get(key), key, non_empty); }
  std::string OneOf(const char* key, const char* fallback, std::initializer_list<const char*> choices) const {
    Napi::Value v = obj_.Get(key);
    return v.IsUndefined() ? std::string(fallback) : args_.OneOf(v, key, choices);
  }

  // Three finite numbers (non-zero with non_zero) into out; absent leaves out as it is.
  void Triple(const char* key, float out[3], bool non_zero = false) const {
    Napi::Value v = obj_.Get(key);
    if (v.IsUndefined()) return;
    const char* constraint = non_zero ? "of 3 finite non-zero numbers" : "of 3 finite numbers";
    if (!v.IsArray()) args_.WrongType("array", constraint, key, v);
    Napi::Array a = v.As<Napi::Array>();
    if (a.Length() != 3) args_.OutOfRange("array", constraint, key, v);
    float read[3];
    for (uint32_t i = 0; i < 3; ++i) {
      Napi::Value e = a.Get(i);
      if (!e.IsNumber()) args_.WrongType("array", constraint, key, v);
      const double d = e.As<Napi::Number>().DoubleValue();
      if (!std::isfinite(d) || (non_zero && d == 0)) args_.OutOfRange("array", constraint, key, v);
      read[i] = static_cast<float>(d);
    }
    for (int i = 0; i < 3; ++i) out[i] = read[i];
  }

 private:
  const ArgReader& args_;
  Napi::Object obj_;
};

}  // namespace sightflow
