// N-API surface of native/core/track: the tracker as a JS class. update() runs on the JS thread: it is
// microseconds for realistic scenes, and a worker hop would cost more than the work. Options and arrays are
// read with the shared reader (options.h): a bad one throws ERR_SIGHTFLOW_TRACK_INVALID_ARG.
// src/native/track.ts types the class and checks options and detections first.
#include <string>
#include <vector>

#include "bindings.h"
#include "options.h"
#include "track/tracker.h"

namespace sightflow {
namespace {

class TrackerWrap : public Napi::ObjectWrap<TrackerWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Tracker",
                       {InstanceMethod<&TrackerWrap::Update>("update"), InstanceMethod<&TrackerWrap::LiveTracks>("liveTracks"),
                        InstanceMethod<&TrackerWrap::LiveIds>("liveIds"),
                        InstanceMethod<&TrackerWrap::FrameCount>("frameCount"),
                        InstanceMethod<&TrackerWrap::Snapshot>("snapshot"), InstanceMethod<&TrackerWrap::Restore>("restore")});
  }

  explicit TrackerWrap(const Napi::CallbackInfo& info) : Napi::ObjectWrap<TrackerWrap>(info), tracker_(Read(info)) {}

 private:
  // new Tracker({maxAge, minHits, iouThreshold, byte, highThresh, lowThresh, secondIouThreshold, reportAll, buffer,
  // bufferMaxLost, appearanceDim, appearanceWeight, appearanceReacquire}),
  // every key optional.
  static track::TrackerOptions Read(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "TRACK");
    const OptionsReader o(args, info[0], "options", true);
    track::TrackerOptions t;
    t.max_age = static_cast<int>(o.Integer("maxAge", t.max_age, 0, 100000));
    t.min_hits = static_cast<int>(o.Integer("minHits", t.min_hits, 1, 1000));
    t.iou_threshold = static_cast<float>(o.Number("iouThreshold", t.iou_threshold, 0.01, 1));
    t.byte = o.Boolean("byte", t.byte);
    const double high = o.Number("highThresh", t.high_thresh, 0, 1);
    t.high_thresh = static_cast<float>(high);
    t.low_thresh = static_cast<float>(o.Number("lowThresh", t.low_thresh, 0, high));
    t.second_iou_threshold = static_cast<float>(o.Number("secondIouThreshold", t.second_iou_threshold, 0.01, 1));
    t.report_all = o.Boolean("reportAll", t.report_all);
    t.buffer = static_cast<float>(o.Number("buffer", t.buffer, 0, 10));
    t.buffer_max_lost = static_cast<int>(o.Integer("bufferMaxLost", t.buffer_max_lost, 1, 100000));
    t.appearance_dim = static_cast<int>(o.Integer("appearanceDim", t.appearance_dim, 0, 4096));
    t.appearance_weight = static_cast<float>(o.Number("appearanceWeight", t.appearance_weight, 0, 1));
    t.appearance_reacquire = static_cast<float>(o.Number("appearanceReacquire", t.appearance_reacquire, 0, 1));
    return t;
  }

  // update(boxes: Float32Array [x1,y1,x2,y2]*n, scores: Float32Array n, classes: Int32Array n, steps?: integer,
  //        signatures?: Float32Array appearanceDim*n)
  //   -> Int32Array of 2n: track ids (0 = not reported) then confirmed flags
  Napi::Value Update(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    const ArgReader args(env, "TRACK");
    Napi::Float32Array scores = args.Typed<Napi::Float32Array>(info[1], "scores", napi_float32_array, "Float32Array");
    const size_t n = scores.ElementLength();
    const std::string per_score = "of " + std::to_string(n) + " values (one per score)";
    Napi::Float32Array boxes = args.Typed<Napi::Float32Array>(info[0], "boxes", napi_float32_array, "Float32Array",
                                                              "of " + std::to_string(4 * n) + " values (4 per score)",
                                                              [n](size_t len) { return len == 4 * n; });
    Napi::Int32Array classes = args.Typed<Napi::Int32Array>(info[2], "classes", napi_int32_array, "Int32Array", per_score,
                                                            [n](size_t len) { return len == n; });
    dets_.resize(n);
    const float* b = boxes.Data();
    for (size_t i = 0; i < n; ++i)
      dets_[i] = track::Detection{track::Box{b[4 * i], b[4 * i + 1], b[4 * i + 2], b[4 * i + 3]}, scores[i], classes[i]};
    int steps = 1;
    if (info.Length() > 3 && !info[3].IsUndefined()) steps = static_cast<int>(args.Integer(info[3], "steps", 1, 1000000));
    const size_t dim = static_cast<size_t>(tracker_.AppearanceDim());
    if (info.Length() > 4 && !info[4].IsUndefined() && dim > 0) {
      Napi::Float32Array sig = args.Typed<Napi::Float32Array>(info[4], "signatures", napi_float32_array, "Float32Array",
                                                              "of " + std::to_string(dim * n) + " values (appearanceDim per score)",
                                                              [n, dim](size_t len) { return len == dim * n; });
      signatures_.assign(sig.Data(), sig.Data() + dim * n);
      for (size_t i = 0; i < n; ++i) dets_[i].signature = signatures_.data() + dim * i;
    }
    tracker_.Update(dets_.data(), static_cast<int>(n), ids_, confirmed_, steps);
    Napi::Int32Array out = Napi::Int32Array::New(env, 2 * n);
    for (size_t i = 0; i < n; ++i) {
      out[i] = ids_[i];
      out[n + i] = confirmed_[i];
    }
    return out;
  }

  Napi::Value LiveTracks(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), tracker_.LiveTracks()); }
  // liveIds() -> Int32Array: the live tracks' ids, ascending (tracks without an id yet are left out).
  Napi::Value LiveIds(const Napi::CallbackInfo& info) {
    tracker_.LiveIds(live_);
    Napi::Int32Array out = Napi::Int32Array::New(info.Env(), live_.size());
    for (size_t i = 0; i < live_.size(); ++i) out[i] = live_[i];
    return out;
  }
  Napi::Value FrameCount(const Napi::CallbackInfo& info) {
    return Napi::Number::New(info.Env(), static_cast<double>(tracker_.FrameCount()));
  }

  // snapshot() -> Buffer: the tracker's state (native/core/track/tracker_snapshot.cc has the format).
  Napi::Value Snapshot(const Napi::CallbackInfo& info) {
    const std::vector<uint8_t> bytes = tracker_.Snapshot();
    return Napi::Buffer<uint8_t>::Copy(info.Env(), bytes.data(), bytes.size());
  }

  // restore(bytes: Uint8Array (a Buffer is one)) -> boolean: false, with the tracker unchanged, for bytes
  // that are not a snapshot of this format version taken under these options.
  Napi::Value Restore(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "TRACK");
    Napi::Uint8Array bytes = args.Typed<Napi::Uint8Array>(info[0], "snapshot", napi_uint8_array, "Uint8Array");
    return Napi::Boolean::New(info.Env(), tracker_.Restore(bytes.Data(), bytes.ElementLength()));
  }

  track::Tracker tracker_;
  std::vector<track::Detection> dets_;
  std::vector<float> signatures_;
  std::vector<int32_t> ids_;
  std::vector<uint8_t> confirmed_;
  std::vector<int32_t> live_;
};

}  // namespace

void InitTrack(Napi::Env env, Napi::Object exports) { exports.Set("Tracker", TrackerWrap::Define(env)); }

}  // namespace sightflow
