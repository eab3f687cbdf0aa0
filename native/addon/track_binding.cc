// N-API surface of native/core/track: the tracker as a JS class. update() runs on the JS thread: it is
// microseconds for realistic scenes, and a worker hop would cost more than the work. TypeScript
// (src/video/tracker.ts) validates options and inputs; this layer trusts them and re-checks only lengths.
#include <vector>

#include "bindings.h"
#include "track/tracker.h"

namespace sightflow {
namespace {

class TrackerWrap : public Napi::ObjectWrap<TrackerWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Tracker",
                       {InstanceMethod<&TrackerWrap::Update>("update"), InstanceMethod<&TrackerWrap::LiveTracks>("liveTracks"),
                        InstanceMethod<&TrackerWrap::FrameCount>("frameCount")});
  }

  explicit TrackerWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<TrackerWrap>(info), tracker_(Read(info)) {}

 private:
  static track::TrackerOptions Read(const Napi::CallbackInfo& info) {
    track::TrackerOptions o;
    if (info.Length() < 1 || !info[0].IsObject()) return o;
    Napi::Object obj = info[0].As<Napi::Object>();
    auto num = [&](const char* key, double fallback) {
      Napi::Value v = obj.Get(key);
      return v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : fallback;
    };
    auto flag = [&](const char* key, bool fallback) {
      Napi::Value v = obj.Get(key);
      return v.IsBoolean() ? v.As<Napi::Boolean>().Value() : fallback;
    };
    o.max_age = static_cast<int>(num("maxAge", o.max_age));
    o.min_hits = static_cast<int>(num("minHits", o.min_hits));
    o.iou_threshold = static_cast<float>(num("iouThreshold", o.iou_threshold));
    o.byte = flag("byte", o.byte);
    o.high_thresh = static_cast<float>(num("highThresh", o.high_thresh));
    o.low_thresh = static_cast<float>(num("lowThresh", o.low_thresh));
    o.second_iou_threshold = static_cast<float>(num("secondIouThreshold", o.second_iou_threshold));
    o.report_all = flag("reportAll", o.report_all);
    return o;
  }

  // update(boxes: Float32Array [x1,y1,x2,y2]*n, scores: Float32Array n, classes: Int32Array n)
  //   -> Int32Array of 2n: track ids (0 = not reported) then confirmed flags; or {error}
  Napi::Value Update(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (info.Length() < 3 || !info[0].IsTypedArray() || !info[1].IsTypedArray() || !info[2].IsTypedArray() ||
        info[0].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array ||
        info[1].As<Napi::TypedArray>().TypedArrayType() != napi_float32_array ||
        info[2].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array) {
      Napi::Object e = Napi::Object::New(env);
      e.Set("error", "update expects (Float32Array boxes, Float32Array scores, Int32Array classes)");
      return e;
    }
    Napi::Float32Array boxes = info[0].As<Napi::Float32Array>(), scores = info[1].As<Napi::Float32Array>();
    Napi::Int32Array classes = info[2].As<Napi::Int32Array>();
    const size_t n = scores.ElementLength();
    if (boxes.ElementLength() != 4 * n || classes.ElementLength() != n) {
      Napi::Object e = Napi::Object::New(env);
      e.Set("error", "boxes must hold 4 numbers per score and classes one per score");
      return e;
    }
    dets_.resize(n);
    const float* b = boxes.Data();
    for (size_t i = 0; i < n; ++i)
      dets_[i] = track::Detection{track::Box{b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]}, scores[i], classes[i]};
    tracker_.Update(dets_.data(), static_cast<int>(n), ids_, confirmed_);
    Napi::Int32Array out = Napi::Int32Array::New(env, 2 * n);
    for (size_t i = 0; i < n; ++i) {
      out[i] = ids_[i];
      out[n + i] = confirmed_[i];
    }
    return out;
  }

  Napi::Value LiveTracks(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), tracker_.LiveTracks()); }
  Napi::Value FrameCount(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(tracker_.FrameCount()));
  }

  track::Tracker tracker_;
  std::vector<track::Detection> dets_;
  std::vector<int32_t> ids_;
  std::vector<uint8_t> confirmed_;
};

}  // namespace

void InitTrack(Napi::Env env, Napi::Object exports) { exports.Set("Tracker", TrackerWrap::Define(env)); }

}  // namespace sightflow
