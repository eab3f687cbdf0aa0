// N-API surface of native/core/image. TypeScript (src/vision/image-ops.ts) validates every parameter and
// allocates the outputs; this layer trusts those values, re-checks only buffer sizes (cheap, and the one thing
// that could corrupt memory), and reports problems as {error: text}, never by throwing.
#include <string>

#include "bindings.h"
#include "image/crop_resize.h"
#include "image/dominant_colour.h"
#include "image/letterbox.h"
#include "image/resize.h"

namespace sightflow {
namespace {

using image::BoxF;
using image::RgbView;
using image::TensorFormat;

Napi::Object ErrorResult(Napi::Env env, const std::string& text) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("error", text);
  return o;
}

double Num(const Napi::Object& o, const char* key, double fallback) {
  Napi::Value v = o.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : fallback;
}

bool Flag(const Napi::Object& o, const char* key, bool fallback) {
  Napi::Value v = o.Get(key);
  return v.IsBoolean() ? v.As<Napi::Boolean>().Value() : fallback;
}

void Triple(const Napi::Object& o, const char* key, float out[3]) {
  Napi::Value v = o.Get(key);
  if (!v.IsArray()) return;
  Napi::Array a = v.As<Napi::Array>();
  for (uint32_t i = 0; i < 3 && i < a.Length(); ++i) {
    Napi::Value e = a.Get(i);
    if (e.IsNumber()) out[i] = e.As<Napi::Number>().FloatValue();
  }
}

TensorFormat ReadFormat(const Napi::Object& o) {
  TensorFormat f;
  f.scale = static_cast<float>(Num(o, "scale", f.scale));
  Triple(o, "mean", f.mean);
  Triple(o, "std", f.std);
  f.bgr = Flag(o, "bgr", false);
  f.layout = Flag(o, "nhwc", false) ? image::Layout::kNHWC : image::Layout::kNCHW;
  return f;
}

// Reads (src, width, height, stride) from info[0..3]; returns an error text when the buffer is too small.
std::string ReadSource(const Napi::CallbackInfo& info, RgbView* view) {
  if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    return "source must be a Uint8Array";
  Napi::Uint8Array src = info[0].As<Napi::Uint8Array>();
  view->data = src.Data();
  view->width = info[1].As<Napi::Number>().Int32Value();
  view->height = info[2].As<Napi::Number>().Int32Value();
  view->stride = info[3].As<Napi::Number>().Int32Value();
  if (view->width <= 0 || view->height <= 0 || view->stride < 3 * view->width) return "bad source geometry";
  const size_t need = static_cast<size_t>(view->stride) * static_cast<size_t>(view->height - 1) + 3 * static_cast<size_t>(view->width);
  if (src.ByteLength() < need) return "source buffer is smaller than stride * height";
  return {};
}

image::LetterboxOptions ReadLetterbox(const Napi::Object& o) {
  image::LetterboxOptions l;
  l.dst_width = static_cast<int>(Num(o, "dstWidth", 640));
  l.dst_height = static_cast<int>(Num(o, "dstHeight", 640));
  Triple(o, "pad", l.pad);
  l.center = Flag(o, "center", true);
  l.scale_up = Flag(o, "scaleUp", true);
  l.format = ReadFormat(o);
  return l;
}

Napi::Object LetterboxResult(Napi::Env env, const image::LetterboxInfo& li) {
  Napi::Object r = Napi::Object::New(env);
  r.Set("scale", li.scale);
  r.Set("padX", li.pad_x);
  r.Set("padY", li.pad_y);
  r.Set("contentWidth", li.content_width);
  r.Set("contentHeight", li.content_height);
  return r;
}

std::string CheckFloatOut(const Napi::Value& v, size_t need) {
  if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != napi_float32_array) return "output must be a Float32Array";
  if (v.As<Napi::Float32Array>().ElementLength() < need) return "output Float32Array is too small";
  return {};
}

// letterbox(src, width, height, stride, opts, out: Float32Array) -> info | {error}
Napi::Value LetterboxSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RgbView view;
  std::string err = ReadSource(info, &view);
  if (!err.empty()) return ErrorResult(env, err);
  const image::LetterboxOptions opts = ReadLetterbox(info[4].As<Napi::Object>());
  err = CheckFloatOut(info[5], static_cast<size_t>(3) * static_cast<size_t>(opts.dst_width) * static_cast<size_t>(opts.dst_height));
  if (!err.empty()) return ErrorResult(env, err);
  image::LetterboxInfo li;
  err = image::Letterbox(view, opts, info[5].As<Napi::Float32Array>().Data(), &li);
  if (!err.empty()) return ErrorResult(env, err);
  return LetterboxResult(env, li);
}

// Full frames take milliseconds: run them on the libuv pool. The JS side keeps src and out alive through
// the references below and must not write to src until the promise settles.
class LetterboxWorker : public Napi::AsyncWorker {
 public:
  LetterboxWorker(Napi::Env env, const Napi::Value& src, const Napi::Value& out, RgbView view, image::LetterboxOptions opts)
      : Napi::AsyncWorker(env, "sightflow.letterbox"),
        deferred_(Napi::Promise::Deferred::New(env)),
        src_ref_(Napi::Persistent(src.As<Napi::Object>())),
        out_ref_(Napi::Persistent(out.As<Napi::Object>())),
        view_(view),
        opts_(opts),
        out_(out.As<Napi::Float32Array>().Data()) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override { error_ = image::Letterbox(view_, opts_, out_, &info_); }

  void OnOK() override {
    Napi::Env env = Env();
    deferred_.Resolve(error_.empty() ? LetterboxResult(env, info_) : ErrorResult(env, error_));
  }

  void OnError(const Napi::Error& e) override { deferred_.Resolve(ErrorResult(Env(), e.Message())); }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference src_ref_;
  Napi::ObjectReference out_ref_;
  RgbView view_;
  image::LetterboxOptions opts_;
  float* out_;
  image::LetterboxInfo info_;
  std::string error_;
};

// letterboxAsync(src, width, height, stride, opts, out) -> Promise<info | {error}>
Napi::Value LetterboxAsync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RgbView view;
  std::string err = ReadSource(info, &view);
  const image::LetterboxOptions opts = err.empty() ? ReadLetterbox(info[4].As<Napi::Object>()) : image::LetterboxOptions{};
  if (err.empty())
    err = CheckFloatOut(info[5], static_cast<size_t>(3) * static_cast<size_t>(opts.dst_width) * static_cast<size_t>(opts.dst_height));
  if (!err.empty()) {
    Napi::Promise::Deferred d = Napi::Promise::Deferred::New(env);
    d.Resolve(ErrorResult(env, err));
    return d.Promise();
  }
  auto* worker = new LetterboxWorker(env, info[0], info[5], view, opts);
  Napi::Promise p = worker->Promise();
  worker->Queue();
  return p;
}

// cropResize(src, width, height, stride, rois: Float32Array (4 per roi), opts {width, height, ...format}, out)
Napi::Value CropResizeSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RgbView view;
  std::string err = ReadSource(info, &view);
  if (!err.empty()) return ErrorResult(env, err);
  if (!info[4].IsTypedArray() || info[4].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array)
    return ErrorResult(env, "rois must be a Float32Array");
  Napi::Float32Array rois = info[4].As<Napi::Float32Array>();
  Napi::Object o = info[5].As<Napi::Object>();
  const int w = static_cast<int>(Num(o, "width", 0)), h = static_cast<int>(Num(o, "height", 0));
  if (w <= 0 || h <= 0) return ErrorResult(env, "bad output size");
  const int count = static_cast<int>(rois.ElementLength() / 4);
  err = CheckFloatOut(info[6], static_cast<size_t>(count) * 3 * static_cast<size_t>(w) * static_cast<size_t>(h));
  if (!err.empty()) return ErrorResult(env, err);
  // BoxF is four packed floats, the same layout as the Float32Array.
  static_assert(sizeof(BoxF) == 4 * sizeof(float), "BoxF must be 4 packed floats");
  err = image::CropResize(view, reinterpret_cast<const BoxF*>(rois.Data()), count, w, h, ReadFormat(o),
                          info[6].As<Napi::Float32Array>().Data());
  if (!err.empty()) return ErrorResult(env, err);
  return env.Undefined();
}

// dominantColour(src, width, height, stride, [x1, y1, x2, y2], opts) -> {name, rgb, lab, fraction} | {error}
Napi::Value DominantColourSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RgbView view;
  std::string err = ReadSource(info, &view);
  if (!err.empty()) return ErrorResult(env, err);
  float b[4] = {0, 0, 0, 0};
  Napi::Array box = info[4].As<Napi::Array>();
  for (uint32_t i = 0; i < 4 && i < box.Length(); ++i) b[i] = box.Get(i).As<Napi::Number>().FloatValue();
  Napi::Object o = info[5].As<Napi::Object>();
  image::DominantColourOptions opts;
  opts.max_samples = static_cast<int>(Num(o, "maxSamples", opts.max_samples));
  opts.clusters = static_cast<int>(Num(o, "clusters", opts.clusters));
  opts.inset = static_cast<float>(Num(o, "inset", opts.inset));
  image::DominantColour dc;
  err = image::DominantColourOf(view, BoxF{b[0], b[1], b[2], b[3]}, opts, &dc);
  if (!err.empty()) return ErrorResult(env, err);
  Napi::Object r = Napi::Object::New(env);
  r.Set("name", dc.name);
  Napi::Array rgb = Napi::Array::New(env, 3), lab = Napi::Array::New(env, 3);
  for (uint32_t i = 0; i < 3; ++i) {
    rgb.Set(i, dc.rgb[i]);
    lab.Set(i, dc.lab[i]);
  }
  r.Set("rgb", rgb);
  r.Set("lab", lab);
  r.Set("fraction", dc.fraction);
  return r;
}

// resize(src, width, height, stride, dstWidth, dstHeight, out: Uint8Array) -> undefined | {error}
Napi::Value ResizeSync(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  RgbView view;
  std::string err = ReadSource(info, &view);
  if (!err.empty()) return ErrorResult(env, err);
  const int w = info[4].As<Napi::Number>().Int32Value(), h = info[5].As<Napi::Number>().Int32Value();
  if (w <= 0 || h <= 0) return ErrorResult(env, "bad output size");
  if (!info[6].IsTypedArray() || info[6].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
    return ErrorResult(env, "output must be a Uint8Array");
  Napi::Uint8Array out = info[6].As<Napi::Uint8Array>();
  if (out.ByteLength() < static_cast<size_t>(w) * static_cast<size_t>(h) * 3) return ErrorResult(env, "output Uint8Array is too small");
  err = image::ResizeRgb(view, w, h, out.Data());
  if (!err.empty()) return ErrorResult(env, err);
  return env.Undefined();
}

}  // namespace

void InitImage(Napi::Env env, Napi::Object exports) {
  exports.Set("imageLetterbox", Napi::Function::New(env, LetterboxSync, "imageLetterbox"));
  exports.Set("imageLetterboxAsync", Napi::Function::New(env, LetterboxAsync, "imageLetterboxAsync"));
  exports.Set("imageCropResize", Napi::Function::New(env, CropResizeSync, "imageCropResize"));
  exports.Set("imageDominantColour", Napi::Function::New(env, DominantColourSync, "imageDominantColour"));
  exports.Set("imageResize", Napi::Function::New(env, ResizeSync, "imageResize"));
}

}  // namespace sightflow
