// N-API surface of native/core/image: letterbox and a model's stretched input (both also on the libuv pool,
// both writing a float tensor or, with the option `bytes`, the RGB bytes a model normalises itself),
// batched ROI crops, plain RGB resize and colour names (boxes' dominant colours on the pool). Every argument
// is read with the shared reader (options.h): a bad one throws ERR_SIGHTFLOW_IMAGE_INVALID_ARG, so the core
// never sees a buffer smaller than the geometry says.
// A failure the core reports throws (or, for the async calls, rejects with) ERR_SIGHTFLOW_IMAGE_FAILED.
// src/native/image.ts types these functions and checks their inputs first.
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "image/colour_names.h"
#include "image/crop_resize.h"
#include "image/jpeg_decode.h"
#include "image/letterbox.h"
#include "image/resize.h"
#include "options.h"

namespace sightflow {
namespace {

using image::BoxF;
using image::RgbView;
using image::TensorFormat;

constexpr int64_t kMaxSide = 32768;

TensorFormat ReadFormat(const OptionsReader& o) {
  TensorFormat f;
  f.scale = static_cast<float>(o.Number("scale", f.scale, -1e9, 1e9));
  o.Triple("mean", f.mean);
  o.Triple("std", f.std, true);
  f.bgr = o.Boolean("bgr", false);
  f.layout = o.Boolean("nhwc", false) ? image::Layout::kNHWC : image::Layout::kNCHW;
  return f;
}

// Reads (src, width, height, stride) from info[0..3]; the buffer must hold stride * (height - 1) + 3 * width.
RgbView ReadSource(const ArgReader& args, const Napi::CallbackInfo& info) {
  RgbView view;
  view.width = static_cast<int>(args.Integer(info[1], "width", 1, kMaxSide));
  view.height = static_cast<int>(args.Integer(info[2], "height", 1, kMaxSide));
  view.stride = static_cast<int>(args.Integer(info[3], "stride", 3 * static_cast<int64_t>(view.width), INT32_MAX));
  const size_t need = static_cast<size_t>(view.stride) * static_cast<size_t>(view.height - 1) + 3 * static_cast<size_t>(view.width);
  auto src = args.Typed<Napi::Uint8Array>(info[0], "source", napi_uint8_array, "Uint8Array",
                                          "of at least " + std::to_string(need) + " bytes (stride x (height - 1) + 3 x width)",
                                          [need](size_t n) { return n >= need; });
  view.data = src.Data();
  return view;
}

Napi::Float32Array ReadFloatOut(const ArgReader& args, const Napi::Value& v, size_t need) {
  return args.Typed<Napi::Float32Array>(v, "out", napi_float32_array, "Float32Array",
                                        "of at least " + std::to_string(need) + " elements", [need](size_t n) { return n >= need; });
}

// Where a letterbox or stretch writes: a float tensor, or (option `bytes`) the RGB bytes of a model that
// normalises its input itself, into a Uint8Array.
struct TensorOut {
  Napi::TypedArray array;
  float* floats = nullptr;
  uint8_t* bytes = nullptr;
};

TensorOut ReadTensorOut(const ArgReader& args, const OptionsReader& o, const Napi::Value& v, size_t need) {
  TensorOut out;
  if (o.Boolean("bytes", false)) {
    Napi::Uint8Array a = args.Typed<Napi::Uint8Array>(v, "out", napi_uint8_array, "Uint8Array",
                                                      "of at least " + std::to_string(need) + " bytes", [need](size_t n) { return n >= need; });
    out.array = a;
    out.bytes = a.Data();
  } else {
    Napi::Float32Array a = ReadFloatOut(args, v, need);
    out.array = a;
    out.floats = a.Data();
  }
  return out;
}

image::LetterboxOptions ReadLetterbox(const ArgReader& args, const Napi::Value& v) {
  const OptionsReader o(args, v, "options");
  image::LetterboxOptions l;
  l.dst_width = static_cast<int>(o.Integer("dstWidth", 640, 1, kMaxSide));
  l.dst_height = static_cast<int>(o.Integer("dstHeight", 640, 1, kMaxSide));
  o.Triple("pad", l.pad);
  l.center = o.Boolean("center", true);
  l.scale_up = o.Boolean("scaleUp", true);
  l.format = ReadFormat(o);
  return l;
}

size_t TensorSize(int count, int width, int height) {
  return static_cast<size_t>(count) * 3 * static_cast<size_t>(width) * static_cast<size_t>(height);
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

// letterbox(src, width, height, stride, opts, out: Float32Array, or Uint8Array with opts.bytes) -> info
Napi::Value LetterboxSync(const Napi::CallbackInfo& info) {
  const ArgReader args(info.Env(), "IMAGE");
  const RgbView view = ReadSource(args, info);
  const image::LetterboxOptions opts = ReadLetterbox(args, info[4]);
  const TensorOut out = ReadTensorOut(args, OptionsReader(args, info[4], "options"), info[5], TensorSize(1, opts.dst_width, opts.dst_height));
  image::LetterboxInfo li;
  const std::string err = out.bytes != nullptr ? image::LetterboxBytes(view, opts, out.bytes, &li)
                                               : image::Letterbox(view, opts, out.floats, &li);
  if (!err.empty()) args.Fail("failed", err);
  return LetterboxResult(info.Env(), li);
}

// Full frames take milliseconds: such work runs on the libuv pool and settles a promise. The JS side keeps
// src and out alive through the references held here and must not write to src until it settles. Execute()
// of a subclass sets error_ on a failure the core reports; Result() is the value it resolves with.
class TensorJob : public Napi::AsyncWorker {
 public:
  TensorJob(Napi::Env env, const char* name, const Napi::Value& src, const TensorOut& out)
      : Napi::AsyncWorker(env, name),
        deferred_(Napi::Promise::Deferred::New(env)),
        src_ref_(Napi::Persistent(src.As<Napi::Object>())),
        out_ref_(Napi::Persistent(out.array.As<Napi::Object>())),
        out_(out.floats),
        bytes_(out.bytes) {}

  // Queues the job and gives its promise (N-API deletes the job once it has settled it).
  Napi::Promise Start() {
    Napi::Promise p = deferred_.Promise();
    Queue();
    return p;
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (error_.empty()) {
      deferred_.Resolve(Result(env));
    } else {
      deferred_.Reject(CodedError(env, ErrorCode("IMAGE", "failed"), error_).Value());
    }
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(CodedError(Env(), ErrorCode("IMAGE", "failed"), e.Message()).Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference src_ref_;
  Napi::ObjectReference out_ref_;

 protected:
  virtual Napi::Value Result(Napi::Env env) = 0;
  float* out_;      // the float tensor, or null when writing bytes
  uint8_t* bytes_;  // the bytes, or null when writing floats
  std::string error_;
};

class LetterboxWorker : public TensorJob {
 public:
  LetterboxWorker(Napi::Env env, const Napi::Value& src, const TensorOut& out, RgbView view, image::LetterboxOptions opts)
      : TensorJob(env, "sightflow.letterbox", src, out), view_(view), opts_(opts) {}

  void Execute() override {
    error_ = bytes_ != nullptr ? image::LetterboxBytes(view_, opts_, bytes_, &info_) : image::Letterbox(view_, opts_, out_, &info_);
  }

 protected:
  Napi::Value Result(Napi::Env env) override { return LetterboxResult(env, info_); }

 private:
  RgbView view_;
  image::LetterboxOptions opts_;
  image::LetterboxInfo info_;
};

// letterboxAsync(src, width, height, stride, opts, out) -> Promise<info>; bad arguments throw at once.
Napi::Value LetterboxAsync(const Napi::CallbackInfo& info) {
  const ArgReader args(info.Env(), "IMAGE");
  const RgbView view = ReadSource(args, info);
  const image::LetterboxOptions opts = ReadLetterbox(args, info[4]);
  const TensorOut out = ReadTensorOut(args, OptionsReader(args, info[4], "options"), info[5], TensorSize(1, opts.dst_width, opts.dst_height));
  return (new LetterboxWorker(info.Env(), info[0], out, view, opts))->Start();
}

// cropResize(src, width, height, stride, rois: Float32Array (4 per roi), opts {width, height, halveWidth, ...format}, out)
Napi::Value CropResizeSync(const Napi::CallbackInfo& info) {
  const ArgReader args(info.Env(), "IMAGE");
  const RgbView view = ReadSource(args, info);
  Napi::Float32Array rois = args.Typed<Napi::Float32Array>(info[4], "rois", napi_float32_array, "Float32Array",
                                                           "of 4 values per roi", [](size_t n) { return n % 4 == 0; });
  const OptionsReader o(args, info[5], "options");
  const int w = static_cast<int>(o.Integer("width", std::nullopt, 1, kMaxSide));
  const int h = static_cast<int>(o.Integer("height", std::nullopt, 1, kMaxSide));
  const TensorFormat format = ReadFormat(o);
  const int count = static_cast<int>(rois.ElementLength() / 4);
  Napi::Float32Array out = ReadFloatOut(args, info[6], TensorSize(count, w, h));
  RgbView source = view;
  if (o.Boolean("halveWidth", false)) {
    if (view.width < 2) args.Fail("failed", "halveWidth needs an image at least 2 pixels wide");
    source.pairs = true;
    source.width = view.width / 2;
  }
  // BoxF is four packed floats, the same layout as the Float32Array.
  static_assert(sizeof(BoxF) == 4 * sizeof(float), "BoxF must be 4 packed floats");
  const std::string err = image::CropResize(source, reinterpret_cast<const BoxF*>(rois.Data()), count, w, h, format, out.Data());
  if (!err.empty()) args.Fail("failed", err);
  return info.Env().Undefined();
}

// A model's stretched input from a whole frame, on the libuv pool (a 720p frame took 1.1-1.6 ms of the main
// thread when it ran there): an optional box shrink by whole factors (2x1 read on the fly, as halveWidth
// above; any other into a scratch of the pool thread's own), then the bilinear pass over the whole image.
class StretchWorker : public TensorJob {
 public:
  StretchWorker(Napi::Env env, const Napi::Value& src, const TensorOut& out, RgbView view, int fx, int fy, int w, int h, TensorFormat format)
      : TensorJob(env, "sightflow.stretch", src, out), view_(view), fx_(fx), fy_(fy), w_(w), h_(h), format_(format) {}

  void Execute() override {
    // Kept per pool thread: a 1080p frame's shrink is ~1 MB, which a fresh allocation per frame would fault in.
    thread_local std::vector<uint8_t> scratch;
    RgbView source = view_;
    if (fx_ == 2 && fy_ == 1) {
      source.pairs = true;
      source.width = view_.width / 2;
    } else if (fx_ > 1 || fy_ > 1) {
      const int sw = view_.width / fx_;
      const int sh = view_.height / fy_;
      scratch.resize(static_cast<size_t>(sw) * static_cast<size_t>(sh) * 3);
      error_ = image::ShrinkRgb(view_, fx_, fy_, scratch.data());
      if (!error_.empty()) return;
      source = RgbView{scratch.data(), sw, sh, 3 * sw, false};
    }
    const BoxF whole{0, 0, static_cast<float>(source.width), static_cast<float>(source.height)};
    error_ = bytes_ != nullptr ? image::CropResizeBytes(source, &whole, 1, w_, h_, bytes_)
                               : image::CropResize(source, &whole, 1, w_, h_, format_, out_);
  }

 protected:
  Napi::Value Result(Napi::Env env) override { return env.Undefined(); }

 private:
  RgbView view_;
  int fx_, fy_, w_, h_;
  TensorFormat format_;
};

// stretchAsync(src, width, height, stride, opts {width, height, shrinkX, shrinkY, bytes, ...format}, out) ->
// Promise<undefined>; bad arguments throw at once.
Napi::Value StretchAsync(const Napi::CallbackInfo& info) {
  const ArgReader args(info.Env(), "IMAGE");
  const RgbView view = ReadSource(args, info);
  const OptionsReader o(args, info[4], "options");
  const int w = static_cast<int>(o.Integer("width", std::nullopt, 1, kMaxSide));
  const int h = static_cast<int>(o.Integer("height", std::nullopt, 1, kMaxSide));
  const int fx = static_cast<int>(o.Integer("shrinkX", 1, 1, view.width));
  const int fy = static_cast<int>(o.Integer("shrinkY", 1, 1, view.height));
  const TensorFormat format = ReadFormat(o);
  const TensorOut out = ReadTensorOut(args, o, info[5], TensorSize(1, w, h));
  return (new StretchWorker(info.Env(), info[0], out, view, fx, fy, w, h, format))->Start();
}

// resize(src, width, height, stride, dstWidth, dstHeight, out: Uint8Array) -> undefined
Napi::Value ResizeSync(const Napi::CallbackInfo& info) {
  const ArgReader args(info.Env(), "IMAGE");
  const RgbView view = ReadSource(args, info);
  const int w = static_cast<int>(args.Integer(info[4], "dstWidth", 1, kMaxSide));
  const int h = static_cast<int>(args.Integer(info[5], "dstHeight", 1, kMaxSide));
  const size_t need = static_cast<size_t>(w) * static_cast<size_t>(h) * 3;
  Napi::Uint8Array out = args.Typed<Napi::Uint8Array>(info[6], "out", napi_uint8_array, "Uint8Array",
                                                      "of at least " + std::to_string(need) + " bytes", [need](size_t n) { return n >= need; });
  const std::string err = image::ResizeRgb(view, w, h, out.Data());
  if (!err.empty()) args.Fail("failed", err);
  return info.Env().Undefined();
}

// shrink(src, width, height, stride, fx, fy, out: Uint8Array) -> undefined
Napi::Value ShrinkSync(const Napi::CallbackInfo& info) {
  const ArgReader args(info.Env(), "IMAGE");
  const RgbView view = ReadSource(args, info);
  const int fx = static_cast<int>(args.Integer(info[4], "fx", 1, kMaxSide));
  const int fy = static_cast<int>(args.Integer(info[5], "fy", 1, kMaxSide));
  const size_t need = static_cast<size_t>(view.width / fx) * static_cast<size_t>(view.height / fy) * 3;
  Napi::Uint8Array out = args.Typed<Napi::Uint8Array>(info[6], "out", napi_uint8_array, "Uint8Array",
                                                      "of at least " + std::to_string(need) + " bytes", [need](size_t n) { return n >= need; });
  const std::string err = image::ShrinkRgb(view, fx, fy, out.Data());
  if (!err.empty()) args.Fail("failed", err);
  return info.Env().Undefined();
}

// JPEG decoding on the libuv pool. The JS side keeps the bytes alive through the reference below and must
// not write to them until the promise settles. Resolves { width, height, data } for a decoded image,
// { unsupported: reason } for a well-formed file this decoder leaves to another, and rejects with
// ERR_SIGHTFLOW_IMAGE_FAILED and the reason for a corrupt one. With `into` large enough the pixels are written
// there and the result is { width, height, into: true } (no data). width and height are the decoded size
// (ceil(size / shrink) with a shrink), upright (with an orientation of 5-8 the file's height is the width).
class JpegWorker : public Napi::AsyncWorker {
 public:
  JpegWorker(Napi::Env env, Napi::Uint8Array src, int64_t max_pixels, Napi::Uint8Array into, int shrink,
             int orientation)
      : Napi::AsyncWorker(env, "sightflow.jpeg"),
        deferred_(Napi::Promise::Deferred::New(env)),
        src_ref_(Napi::Persistent(src.As<Napi::Object>())),
        data_(src.Data()),
        size_(src.ByteLength()),
        max_pixels_(max_pixels),
        shrink_(shrink),
        orientation_(orientation) {
    if (!into.IsEmpty()) {
      into_ref_ = Napi::Persistent(into.As<Napi::Object>());
      target_ = {into.Data(), into.ByteLength()};
    }
  }

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    status_ = image::DecodeJpegRgb(data_, size_, max_pixels_, &image_, &reason_, target_, shrink_, orientation_);
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (status_ == image::JpegStatus::kFailed) {
      deferred_.Reject(CodedError(env, ErrorCode("IMAGE", "failed"), reason_).Value());
      return;
    }
    Napi::Object r = Napi::Object::New(env);
    if (status_ == image::JpegStatus::kUnsupported) {
      r.Set("unsupported", reason_);
    } else {
      r.Set("width", image_.width);
      r.Set("height", image_.height);
      if (image_.in_target) {
        r.Set("into", true);
        deferred_.Resolve(r);
        return;
      }
      // The decoded pixels become the Buffer's memory as they are (no copy of a megabyte per photo).
      auto* pixels = new std::vector<uint8_t>(std::move(image_.rgb));
      r.Set("data", Napi::Buffer<uint8_t>::New(env, pixels->data(), pixels->size(),
                                               [](Napi::Env, uint8_t*, std::vector<uint8_t>* v) { delete v; }, pixels));
    }
    deferred_.Resolve(r);
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(CodedError(Env(), ErrorCode("IMAGE", "failed"), e.Message()).Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference src_ref_;
  Napi::ObjectReference into_ref_;
  image::JpegTarget target_;
  const uint8_t* data_;
  size_t size_;
  int64_t max_pixels_;
  int shrink_;
  int orientation_;
  image::JpegImage image_;
  image::JpegStatus status_ = image::JpegStatus::kFailed;
  std::string reason_;
};

// jpegDecodeAsync(bytes: Uint8Array, maxPixels, into?: Uint8Array, shrink = 1, orientation = 1) -> Promise; bad
// arguments throw at once.
Napi::Value JpegDecodeAsync(const Napi::CallbackInfo& info) {
  const ArgReader args(info.Env(), "IMAGE");
  auto src = args.Typed<Napi::Uint8Array>(info[0], "bytes", napi_uint8_array, "Uint8Array", "that is not empty",
                                          [](size_t n) { return n > 0; });
  const int64_t max_pixels = args.Integer(info[1], "maxPixels", 1, int64_t{1} << 40);
  // Optional memory to decode into (used when it holds the whole image); the JS side must not touch it, nor
  // give it to another decode, until the promise settles.
  Napi::Uint8Array into;
  if (info.Length() > 2 && !info[2].IsUndefined()) {
    into = args.Typed<Napi::Uint8Array>(info[2], "into", napi_uint8_array, "Uint8Array", "that is not empty",
                                        [](size_t n) { return n > 0; });
  }
  int shrink = 1;
  if (info.Length() > 3 && !info[3].IsUndefined()) {
    // 3, 5, 6 and 7 are refused by the decoder with its reason (the JavaScript side never asks for them).
    shrink = static_cast<int>(args.Integer(info[3], "shrink", 1, 8));
  }
  int orientation = 1;
  if (info.Length() > 4 && !info[4].IsUndefined())
    orientation = static_cast<int>(args.Integer(info[4], "orientation", 1, 8));
  auto* worker = new JpegWorker(info.Env(), src, max_pixels, into, shrink, orientation);
  Napi::Promise p = worker->Promise();
  worker->Queue();
  return p;
}

// The dominant colour of each of a frame's boxes on the libuv pool: a detect's colours are the serving
// thread's largest per-image part in JavaScript (docs/capacity.md, "Colour names"). The JS side keeps the
// pixels alive through the reference below and must not write to them until the promise settles.
class DominantColoursWorker : public Napi::AsyncWorker {
 public:
  DominantColoursWorker(Napi::Env env, const Napi::Value& src, RgbView view, std::vector<image::ColourGrid> grids)
      : Napi::AsyncWorker(env, "sightflow.colours"),
        deferred_(Napi::Promise::Deferred::New(env)),
        src_ref_(Napi::Persistent(src.As<Napi::Object>())),
        view_(view),
        grids_(std::move(grids)),
        names_(grids_.size()) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override {
    for (size_t i = 0; i < grids_.size(); i++) names_[i] = image::DominantColour(view_, grids_[i]);
  }

  void OnOK() override {
    Napi::Env env = Env();
    auto out = Napi::Uint8Array::New(env, names_.size());
    for (size_t i = 0; i < names_.size(); i++) out[i] = names_[i];
    deferred_.Resolve(out);
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(CodedError(Env(), ErrorCode("IMAGE", "failed"), e.Message()).Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  Napi::ObjectReference src_ref_;
  RgbView view_;
  std::vector<image::ColourGrid> grids_;
  std::vector<uint8_t> names_;
};

// dominantColoursAsync(src, width, height, stride, grids: Int32Array, 5 per box: x0, x1, y0, y1, step) ->
// Promise<Uint8Array> (a colour index per box, 255 for an empty grid); each grid must lie inside the frame.
Napi::Value DominantColoursAsync(const Napi::CallbackInfo& info) {
  const ArgReader args(info.Env(), "IMAGE");
  const RgbView view = ReadSource(args, info);
  auto g = args.Typed<Napi::Int32Array>(info[4], "grids", napi_int32_array, "Int32Array", "of 5 values a box",
                                        [](size_t n) { return n % 5 == 0; });
  std::vector<image::ColourGrid> grids(g.ElementLength() / 5);
  for (size_t i = 0; i < grids.size(); i++) {
    image::ColourGrid& c = grids[i];
    c.x0 = g[5 * i];
    c.x1 = g[5 * i + 1];
    c.y0 = g[5 * i + 2];
    c.y1 = g[5 * i + 3];
    c.step = g[5 * i + 4];
    if (c.x0 < 0 || c.x1 < c.x0 || c.x1 > view.width || c.y0 < 0 || c.y1 < c.y0 || c.y1 > view.height || c.step < 1)
      args.Fail("invalid_arg", "grid " + std::to_string(i) + " is not inside the " + std::to_string(view.width) + "x" +
                                   std::to_string(view.height) + " frame with a step of at least 1");
  }
  auto* worker = new DominantColoursWorker(info.Env(), info[0], view, std::move(grids));
  Napi::Promise p = worker->Promise();
  worker->Queue();
  return p;
}

// colourNames(rgb: Uint8Array) -> Uint8Array: each RGB triple's colour index.
Napi::Value ColourNames(const Napi::CallbackInfo& info) {
  const ArgReader args(info.Env(), "IMAGE");
  auto rgb = args.Typed<Napi::Uint8Array>(info[0], "rgb", napi_uint8_array, "Uint8Array", "of whole RGB triples",
                                          [](size_t n) { return n % 3 == 0; });
  const size_t n = rgb.ElementLength() / 3;
  auto out = Napi::Uint8Array::New(info.Env(), n);
  const uint8_t* p = rgb.Data();
  uint8_t* o = out.Data();
  for (size_t i = 0; i < n; i++) o[i] = image::ColourIndex(p[3 * i], p[3 * i + 1], p[3 * i + 2]);
  return out;
}

}  // namespace

void InitImage(Napi::Env env, Napi::Object exports) {
  exports.Set("imageLetterbox", Napi::Function::New(env, LetterboxSync, "imageLetterbox"));
  exports.Set("imageLetterboxAsync", Napi::Function::New(env, LetterboxAsync, "imageLetterboxAsync"));
  exports.Set("imageCropResize", Napi::Function::New(env, CropResizeSync, "imageCropResize"));
  exports.Set("imageStretchAsync", Napi::Function::New(env, StretchAsync, "imageStretchAsync"));
  exports.Set("imageResize", Napi::Function::New(env, ResizeSync, "imageResize"));
  exports.Set("imageShrink", Napi::Function::New(env, ShrinkSync, "imageShrink"));
  exports.Set("imageJpegDecodeAsync", Napi::Function::New(env, JpegDecodeAsync, "imageJpegDecodeAsync"));
  exports.Set("imageDominantColoursAsync", Napi::Function::New(env, DominantColoursAsync, "imageDominantColoursAsync"));
  exports.Set("imageColourNames", Napi::Function::New(env, ColourNames, "imageColourNames"));
}

}  // namespace sightflow
