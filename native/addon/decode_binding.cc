// N-API face of native/core/decode: class Decoder { open(opts), read(max, target?), close(), abort() }.
// Each call copies its arguments into plain structs on the JS thread, runs on the libuv pool
// (Napi::AsyncWorker) and resolves a promise in OnOK. Nothing throws across the boundary: failures resolve
// with {error: {code, message}} and src/video/decoder.ts throws them with the caller's stack.
// TypeScript validates every option first (see decoder.ts); this side trusts them.
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "decode/video_decoder.h"

extern "C" {
#include <libavutil/log.h>
}

namespace sightflow {
namespace {

using decode::FrameMeta;
using decode::Status;
using decode::VideoDecoder;

// One decoder plus the lock that serialises the workers using it; shared so a worker outlives a
// collected JS object.
struct DecoderState {
  std::mutex mu;
  VideoDecoder decoder;
};

Napi::Value ErrorValue(Napi::Env env, const decode::Error& e) {
  Napi::Object err = Napi::Object::New(env);
  err.Set("code", e.code);
  err.Set("message", e.message);
  return err;
}

Napi::Object StatsObject(Napi::Env env, const decode::Stats& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("decodedFrames", Napi::Number::New(env, static_cast<double>(s.decoded_frames)));
  o.Set("droppedFrames", Napi::Number::New(env, static_cast<double>(s.dropped_frames)));
  o.Set("emittedFrames", Napi::Number::New(env, static_cast<double>(s.emitted_frames)));
  o.Set("decodeFailures", Napi::Number::New(env, static_cast<double>(s.decode_failures)));
  return o;
}

template <typename T>
T Get(const Napi::Object& o, const char* key, T fallback);

template <>
double Get<double>(const Napi::Object& o, const char* key, double fallback) {
  Napi::Value v = o.Get(key);
  return v.IsNumber() ? v.As<Napi::Number>().DoubleValue() : fallback;
}
template <>
bool Get<bool>(const Napi::Object& o, const char* key, bool fallback) {
  Napi::Value v = o.Get(key);
  return v.IsBoolean() ? v.As<Napi::Boolean>().Value() : fallback;
}
template <>
std::string Get<std::string>(const Napi::Object& o, const char* key, std::string fallback) {
  Napi::Value v = o.Get(key);
  return v.IsString() ? v.As<Napi::String>().Utf8Value() : fallback;
}

decode::Options ParseOptions(const Napi::Object& o) {
  decode::Options opts;
  opts.input = Get<std::string>(o, "input", "");
  const std::string mode = Get<std::string>(o, "mode", "fps");
  opts.mode = mode == "interval" ? decode::SampleMode::Interval
              : mode == "keyframe" ? decode::SampleMode::Keyframe
                                   : decode::SampleMode::Fps;
  opts.value = Get<double>(o, "value", 1.0);
  opts.has_start = o.Get("start").IsNumber();
  opts.start = Get<double>(o, "start", 0);
  opts.has_end = o.Get("end").IsNumber();
  opts.end = Get<double>(o, "end", 0);
  opts.unit = Get<std::string>(o, "unit", "seconds") == "frames" ? decode::RangeUnit::Frames : decode::RangeUnit::Seconds;
  opts.max_frames = static_cast<int64_t>(Get<double>(o, "maxFrames", 3000));
  opts.threads = static_cast<int>(Get<double>(o, "threads", 0));
  opts.out_width = static_cast<int>(Get<double>(o, "width", 0));
  opts.out_height = static_cast<int>(Get<double>(o, "height", 0));
  opts.keep_aspect = Get<bool>(o, "keepAspect", true);
  opts.open_timeout_ms = static_cast<int64_t>(Get<double>(o, "openTimeoutMs", 15000));
  opts.read_timeout_ms = static_cast<int64_t>(Get<double>(o, "readTimeoutMs", 15000));
  return opts;
}

// Base for the promise-returning workers.
class PromiseWorker : public Napi::AsyncWorker {
 public:
  PromiseWorker(Napi::Env env, std::shared_ptr<DecoderState> state)
      : Napi::AsyncWorker(env, "sightflow.decode"), state_(std::move(state)), deferred_(Napi::Promise::Deferred::New(env)) {}
  Napi::Promise Promise() { return deferred_.Promise(); }

 protected:
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }
  std::shared_ptr<DecoderState> state_;
  Napi::Promise::Deferred deferred_;
};

class OpenWorker : public PromiseWorker {
 public:
  OpenWorker(Napi::Env env, std::shared_ptr<DecoderState> state, decode::Options opts)
      : PromiseWorker(env, std::move(state)), opts_(std::move(opts)) {}

  void Execute() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    ok_ = state_->decoder.open(opts_);
    info_ = state_->decoder.info();
    error_ = state_->decoder.error();
  }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::Object r = Napi::Object::New(env);
    if (!ok_) {
      r.Set("error", ErrorValue(env, error_));
      deferred_.Resolve(r);
      return;
    }
    r.Set("error", env.Null());
    r.Set("width", info_.width);
    r.Set("height", info_.height);
    r.Set("outWidth", info_.out_width);
    r.Set("outHeight", info_.out_height);
    r.Set("fps", info_.fps);
    r.Set("totalFrames", info_.total_frames >= 0 ? Napi::Number::New(env, static_cast<double>(info_.total_frames)) : env.Null());
    r.Set("durationMs", info_.duration_ms >= 0 ? Napi::Number::New(env, static_cast<double>(info_.duration_ms)) : env.Null());
    r.Set("seekable", info_.seekable);
    r.Set("codec", info_.codec);
    r.Set("format", info_.format);
    r.Set("finalUrl", info_.final_url);
    deferred_.Resolve(r);
  }

 private:
  decode::Options opts_;
  bool ok_ = false;
  decode::Info info_;
  decode::Error error_;
};

class ReadWorker : public PromiseWorker {
 public:
  // target (optional) is caller memory the frames are written into; it is kept alive by a reference.
  ReadWorker(Napi::Env env, std::shared_ptr<DecoderState> state, size_t max_count, Napi::Uint8Array target)
      : PromiseWorker(env, std::move(state)), max_count_(max_count) {
    if (!target.IsEmpty()) {
      target_ref_ = Napi::Persistent(target.As<Napi::Object>());
      target_data_ = target.Data();
      target_bytes_ = target.ByteLength();
    }
  }

  void Execute() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    VideoDecoder& dec = state_->decoder;
    frame_bytes_ = dec.frame_bytes();
    size_t limit = max_count_;
    if (target_data_ && frame_bytes_ > 0) limit = std::min(limit, target_bytes_ / frame_bytes_);
    status_ = Status::Frame;
    while (metas_.size() < limit) {
      uint8_t* dst;
      if (target_data_) {
        dst = target_data_ + metas_.size() * frame_bytes_;
      } else {
        owned_->resize((metas_.size() + 1) * frame_bytes_);
        dst = owned_->data() + metas_.size() * frame_bytes_;
      }
      FrameMeta meta;
      status_ = dec.next(dst, &meta);
      if (status_ != Status::Frame) break;
      metas_.push_back(meta);
    }
    if (!target_data_) owned_->resize(metas_.size() * frame_bytes_);
    stats_ = dec.stats();
    error_ = dec.error();
  }

  void OnOK() override {
    Napi::Env env = Env();
    const size_t n = metas_.size();
    Napi::Object r = Napi::Object::New(env);
    Napi::Uint8Array data;
    if (target_data_) {
      Napi::Uint8Array target = target_ref_.Value().As<Napi::Uint8Array>();
      data = Napi::Uint8Array::New(env, n * frame_bytes_, target.ArrayBuffer(), target.ByteOffset());
    } else {
      auto* vec = owned_.release();
      Napi::ArrayBuffer ab = vec->empty()
                                 ? Napi::ArrayBuffer::New(env, 0)
                                 : Napi::ArrayBuffer::New(env, vec->data(), vec->size(),
                                                          [](Napi::Env, void*, std::vector<uint8_t>* v) { delete v; }, vec);
      if (vec->empty()) delete vec;
      data = Napi::Uint8Array::New(env, ab.ByteLength(), ab, 0);
    }
    Napi::Float64Array index = Napi::Float64Array::New(env, n);
    Napi::Float64Array pts = Napi::Float64Array::New(env, n);
    Napi::Uint8Array key = Napi::Uint8Array::New(env, n);
    for (size_t i = 0; i < n; ++i) {
      index[i] = static_cast<double>(metas_[i].index);
      pts[i] = static_cast<double>(metas_[i].pts_ms);
      key[i] = metas_[i].keyframe ? 1 : 0;
    }
    const char* status = status_ == Status::Frame     ? "more"
                         : status_ == Status::End       ? "end"
                         : status_ == Status::MaxFrames ? "max_frames"
                                                        : "error";
    r.Set("status", status);
    r.Set("count", Napi::Number::New(env, static_cast<double>(n)));
    r.Set("frameBytes", Napi::Number::New(env, static_cast<double>(frame_bytes_)));
    r.Set("data", data);
    r.Set("index", index);
    r.Set("ptsMs", pts);
    r.Set("keyframe", key);
    r.Set("stats", StatsObject(env, stats_));
    r.Set("error", status_ == Status::Error ? ErrorValue(env, error_) : env.Null());
    deferred_.Resolve(r);
  }

 private:
  size_t max_count_;
  Napi::ObjectReference target_ref_;
  uint8_t* target_data_ = nullptr;
  size_t target_bytes_ = 0;
  std::unique_ptr<std::vector<uint8_t>> owned_ = std::make_unique<std::vector<uint8_t>>();
  size_t frame_bytes_ = 0;
  std::vector<FrameMeta> metas_;
  Status status_ = Status::End;
  decode::Stats stats_;
  decode::Error error_;
};

// Frees every FFmpeg object (and so closes the connection) off the JS thread. It waits for the lock, so
// after abort() it runs as soon as the in-flight read noticed the abort.
class CloseWorker : public PromiseWorker {
 public:
  using PromiseWorker::PromiseWorker;
  void Execute() override {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->decoder.close();
  }
  void OnOK() override { deferred_.Resolve(Env().Undefined()); }
};

class DecoderWrap : public Napi::ObjectWrap<DecoderWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Decoder",
                       {InstanceMethod<&DecoderWrap::Open>("open"), InstanceMethod<&DecoderWrap::Read>("read"),
                        InstanceMethod<&DecoderWrap::Close>("close"), InstanceMethod<&DecoderWrap::Abort>("abort")});
  }

  explicit DecoderWrap(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<DecoderWrap>(info), state_(std::make_shared<DecoderState>()) {}

 private:
  Napi::Value Open(const Napi::CallbackInfo& info) {
    Napi::Object opts = info[0].IsObject() ? info[0].As<Napi::Object>() : Napi::Object::New(info.Env());
    auto* w = new OpenWorker(info.Env(), state_, ParseOptions(opts));
    Napi::Promise p = w->Promise();
    w->Queue();
    return p;
  }

  Napi::Value Read(const Napi::CallbackInfo& info) {
    const double max = info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : 1;
    Napi::Uint8Array target;
    if (info.Length() > 1 && info[1].IsTypedArray() &&
        info[1].As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
      target = info[1].As<Napi::Uint8Array>();
    }
    auto* w = new ReadWorker(info.Env(), state_, max >= 1 ? static_cast<size_t>(max) : 1, target);
    Napi::Promise p = w->Promise();
    w->Queue();
    return p;
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    auto* w = new CloseWorker(info.Env(), state_);
    Napi::Promise p = w->Promise();
    w->Queue();
    return p;
  }

  // Flags the decoder at once (a blocked read returns within ~100 ms), then frees it like close().
  Napi::Value Abort(const Napi::CallbackInfo& info) {
    state_->decoder.abort();
    return Close(info);
  }

  std::shared_ptr<DecoderState> state_;
};

}  // namespace

void InitDecode(Napi::Env env, Napi::Object exports) {
  // FFmpeg logs to stderr by default; every failure reaches the caller as a code + message instead.
  // SIGHTFLOW_FFMPEG_LOG_LEVEL (an AV_LOG_* number, e.g. 16 for errors) turns it back on for debugging.
  const char* level = std::getenv("SIGHTFLOW_FFMPEG_LOG_LEVEL");
  av_log_set_level(level && *level ? std::atoi(level) : AV_LOG_QUIET);
  exports.Set("Decoder", DecoderWrap::Define(env));
}

}  // namespace sightflow
