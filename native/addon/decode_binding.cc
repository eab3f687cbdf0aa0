// N-API face of native/core/decode: class Decoder { open(opts), read(max, target?), close(), abort() }.
// Each call reads its arguments with the shared reader (options.h) into plain structs on the JS thread, runs on
// a thread of its own (see PromiseWorker) and settles a promise in OnOK back on the JS thread. A bad argument throws at once
// (ERR_SIGHTFLOW_DECODE_INVALID_ARG); a decoder failure rejects with an Error whose code is
// ERR_SIGHTFLOW_DECODE_<the core's code>, e.g. ERR_SIGHTFLOW_DECODE_INPUT_NOT_FOUND (read's also carries the
// counters so far as `stats`). src/native/decode.ts types it and checks every option first.
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "bindings.h"
#include "decode/guarded_io.h"
#include "decode/video_decoder.h"
#include "options.h"

extern "C" {
#include <libavutil/log.h>
}

namespace sightflow {
namespace {

using decode::FrameMeta;
using decode::Status;
using decode::VideoDecoder;

// The JS function that serves a decoder's network requests (open, more, close), callable from the demux
// thread. Released once: after that, posts are dropped (a released function must not be called).
class NetCallback {
 public:
  explicit NetCallback(Napi::ThreadSafeFunction fn) : fn_(std::move(fn)) {}
  void post(const decode::NetRequest& r) {
    std::lock_guard<std::mutex> lock(mu_);
    if (released_) return;
    auto* copy = new decode::NetRequest(r);
    const napi_status st = fn_.NonBlockingCall(copy, [](Napi::Env env, Napi::Function fn, decode::NetRequest* req) {
      const char* kind = req->kind == decode::NetRequest::Open ? "open" : req->kind == decode::NetRequest::More ? "more" : "close";
      if (env != nullptr && fn != nullptr) {
        fn.Call({Napi::String::New(env, kind), Napi::Number::New(env, static_cast<double>(req->id)), Napi::String::New(env, req->url),
                 Napi::Number::New(env, static_cast<double>(req->offset)), Napi::Number::New(env, static_cast<double>(req->end))});
      }
      delete req;
    });
    if (st != napi_ok) delete copy;
  }
  void release() {
    std::lock_guard<std::mutex> lock(mu_);
    if (released_) return;
    released_ = true;
    fn_.Release();
  }

 private:
  std::mutex mu_;
  bool released_ = false;
  Napi::ThreadSafeFunction fn_;
};

// One decoder plus the lock that serialises the workers using it; shared so a worker outlives a
// collected JS object. `io` and `net` exist when open() got an onNet function (network inputs).
struct DecoderState {
  std::mutex mu;
  VideoDecoder decoder;
  std::shared_ptr<decode::GuardedIo> io;
  std::shared_ptr<NetCallback> net;
  ~DecoderState() {
    if (net) net->release();
  }
};

Napi::Error DecodeFailure(Napi::Env env, const decode::Error& e) {
  return CodedError(env, ErrorCode("DECODE", e.code.empty() ? "failed" : e.code), e.message);
}

Napi::Object StatsObject(Napi::Env env, const decode::Stats& s) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("decodedFrames", Napi::Number::New(env, static_cast<double>(s.decoded_frames)));
  o.Set("droppedFrames", Napi::Number::New(env, static_cast<double>(s.dropped_frames)));
  o.Set("emittedFrames", Napi::Number::New(env, static_cast<double>(s.emitted_frames)));
  o.Set("decodeFailures", Napi::Number::New(env, static_cast<double>(s.decode_failures)));
  o.Set("lateDrops", Napi::Number::New(env, static_cast<double>(s.late_drops)));
  return o;
}

// 64-bit hashes travel as 16 hex digits: a JS number holds only 53 bits.
std::string Hex64(uint64_t v) {
  static const char* const kDigits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[static_cast<size_t>(i)] = kDigits[v & 15];
  return s;
}

uint64_t ParseHex64(const ArgReader& args, const OptionsReader& o, const char* key) {
  const Napi::Value v = o.Get(key);
  const std::string s = args.String(v, key, true);
  uint64_t out = 0;
  bool ok = s.size() == 16;
  for (char c : s) {
    const int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) ok = false;
    out = (out << 4) | static_cast<uint64_t>(d < 0 ? 0 : d);
  }
  if (!ok) args.OutOfRange("string", "of 16 lowercase hex digits", key, v);
  return out;
}

constexpr int64_t kMaxSafe = 9007199254740991;  // stream ticks and counters as JS numbers carry them exactly

// The cursor as JS sees it (DecoderCursor in src/native/decode.ts); ReadCursor is its inverse.
Napi::Object CursorObject(Napi::Env env, const decode::Cursor& c) {
  Napi::Object o = Napi::Object::New(env);
  const auto num = [&](int64_t v) { return Napi::Number::New(env, static_cast<double>(v)); };
  o.Set("v", c.version);
  o.Set("index", num(c.index));
  o.Set("ptsMs", num(c.pts_ms));
  o.Set("pts", c.has_pts ? num(c.pts) : env.Null());
  o.Set("keyTs", num(c.key_ts));
  o.Set("startPts", c.start_pts_known ? num(c.start_pts) : env.Null());
  o.Set("origin", c.origin_set ? Napi::Number::New(env, c.sampler_origin) : env.Null());
  o.Set("nextSample", Napi::Number::New(env, c.sampler_next));
  o.Set("readDts", c.has_read_dts ? num(c.read_dts) : env.Null());
  o.Set("decodedFrames", num(c.decoded_frames));
  o.Set("droppedFrames", num(c.dropped_frames));
  o.Set("emittedFrames", num(c.emitted_frames));
  o.Set("decodeFailures", num(c.decode_failures));
  o.Set("skippedDecodes", num(c.skipped_decodes));
  o.Set("setup", Hex64(c.setup_hash));
  o.Set("hash", Hex64(c.frame_hash));
  return o;
}

decode::Cursor ReadCursor(const ArgReader& args, const Napi::Value& value) {
  const OptionsReader o(args, value, "resume");
  decode::Cursor c;
  c.version = static_cast<int>(o.Integer("v", std::nullopt, 1, 1000000));
  c.index = o.Integer("index", std::nullopt, 0, kMaxSafe);
  c.pts_ms = o.Integer("ptsMs", std::nullopt, -kMaxSafe, kMaxSafe);
  c.has_pts = !o.Get("pts").IsNull();
  c.pts = c.has_pts ? o.Integer("pts", std::nullopt, -kMaxSafe, kMaxSafe) : 0;
  c.key_ts = o.Integer("keyTs", std::nullopt, -kMaxSafe, kMaxSafe);
  c.start_pts_known = !o.Get("startPts").IsNull();
  c.start_pts = c.start_pts_known ? o.Integer("startPts", std::nullopt, -kMaxSafe, kMaxSafe) : 0;
  c.origin_set = !o.Get("origin").IsNull();
  c.sampler_origin = c.origin_set ? o.Number("origin", std::nullopt, -1e15, 1e15) : 0;
  c.sampler_next = o.Number("nextSample", std::nullopt, 0, 1e300);
  c.has_read_dts = !o.Get("readDts").IsNull();
  c.read_dts = c.has_read_dts ? o.Integer("readDts", std::nullopt, -kMaxSafe, kMaxSafe) : 0;
  c.decoded_frames = o.Integer("decodedFrames", std::nullopt, 0, kMaxSafe);
  c.dropped_frames = o.Integer("droppedFrames", std::nullopt, 0, kMaxSafe);
  c.emitted_frames = o.Integer("emittedFrames", std::nullopt, 1, kMaxSafe);
  c.decode_failures = o.Integer("decodeFailures", std::nullopt, 0, kMaxSafe);
  c.skipped_decodes = o.Integer("skippedDecodes", std::nullopt, 0, kMaxSafe);
  c.setup_hash = ParseHex64(args, o, "setup");
  c.frame_hash = ParseHex64(args, o, "hash");
  return c;
}

decode::Options ParseOptions(const Napi::Value& value) {
  const ArgReader args(value.Env(), "DECODE");
  const OptionsReader o(args, value, "options");
  decode::Options opts;
  opts.input = o.String("input", true);
  const std::string mode = o.OneOf("mode", "fps", {"fps", "interval", "keyframe"});
  opts.mode = mode == "interval" ? decode::SampleMode::Interval
              : mode == "keyframe" ? decode::SampleMode::Keyframe
                                   : decode::SampleMode::Fps;
  opts.value = o.Number("value", 1.0, 0, 1e9, true);
  opts.unit = o.OneOf("unit", "seconds", {"seconds", "frames"}) == "frames" ? decode::RangeUnit::Frames : decode::RangeUnit::Seconds;
  opts.has_start = o.Has("start");
  opts.start = o.Number("start", 0.0, 0, 1e15);
  opts.has_end = o.Has("end");
  opts.end = opts.has_start ? o.Number("end", 0.0, opts.start, 1e15, true) : o.Number("end", 0.0, 0, 1e15, true);
  opts.max_frames = o.Integer("maxFrames", 3000, 1, 1000000000);
  opts.threads = static_cast<int>(o.Integer("threads", 0, 0, 64));
  opts.out_width = static_cast<int>(o.Integer("width", 0, 1, 16384));
  opts.out_height = static_cast<int>(o.Integer("height", 0, 1, 16384));
  opts.keep_aspect = o.Boolean("keepAspect", true);
  opts.open_timeout_ms = o.Integer("openTimeoutMs", 15000, 1, 3600000);
  opts.probe_timeout_ms = o.Integer("probeTimeoutMs", 0, 0, 3600000);
  opts.read_timeout_ms = o.Integer("readTimeoutMs", 15000, 1, 3600000);
  const std::string hw = o.OneOf("hwaccel", "none", {"none", "auto", "cuda"});
  opts.hwaccel = hw == "auto" ? decode::HwAccel::Auto : hw == "cuda" ? decode::HwAccel::Cuda : decode::HwAccel::None;
  opts.hwaccel_device = static_cast<int>(o.Integer("hwaccelDevice", 0, 0, 255));
  if (o.Has("resume")) {
    opts.has_resume = true;
    opts.resume = ReadCursor(args, o.Get("resume"));
  }
  return opts;
}

// Base for the promise-returning workers. A decoder call blocks for as long as its input makes it: a network
// read waits on bytes the JS thread feeds (src/media/guarded-source.ts), a batch decodes many frames. On
// libuv's shared pool (4 threads unless UV_THREADPOOL_SIZE says otherwise) a few slow sources would hold
// every thread, and sharp, fs and DNS lookups queue behind them (a lookup the JS host needs to feed one
// of those decoders included). So each call runs on a thread of its own and hands its result back to the
// JS thread through a thread-safe function; calls on one decoder are serialised by DecoderState::mu, so
// there are at most about as many threads as open decoders.
class PromiseWorker {
 public:
  PromiseWorker(Napi::Env env, std::shared_ptr<DecoderState> state)
      : state_(std::move(state)), deferred_(Napi::Promise::Deferred::New(env)), env_(env) {}
  virtual ~PromiseWorker() = default;
  PromiseWorker(const PromiseWorker&) = delete;
  PromiseWorker& operator=(const PromiseWorker&) = delete;
  Napi::Promise Promise() { return deferred_.Promise(); }

  // Starts the call; the worker deletes itself once it settled the promise.
  void Queue() {
    // Referenced until released, so the process stays up for a pending call as it would for pool work.
    done_ = Napi::ThreadSafeFunction::New(env_, Napi::Function::New(env_, [](const Napi::CallbackInfo&) {}), "sightflow.decode", 0, 1);
    try {
      std::thread([this] { Run(); }).detach();
    } catch (const std::system_error& e) {
      done_.Release();
      deferred_.Reject(CodedError(env_, ErrorCode("DECODE", "failed"), std::string("Could not start a decode thread: ") + e.what()).Value());
      delete this;
    }
  }

 protected:
  virtual void Execute() = 0;
  virtual void OnOK() = 0;
  Napi::Env Env() const { return env_; }
  std::shared_ptr<DecoderState> state_;
  Napi::Promise::Deferred deferred_;

 private:
  void Run() {
    Execute();
    Napi::ThreadSafeFunction done = done_;
    const napi_status st = done.BlockingCall(this, [](Napi::Env env, Napi::Function, PromiseWorker* w) {
      if (env != nullptr) {
        Napi::HandleScope scope(env);
        try {
          w->OnOK();
        } catch (const Napi::Error& e) {
          w->deferred_.Reject(e.Value());
        }
      }
      delete w;
    });
    // Not queued only while the environment shuts down: nothing can be settled any more, and the worker's
    // JS references must not be freed from this thread, so it is left to the teardown.
    (void)st;
    done.Release();
  }

  Napi::Env env_;
  Napi::ThreadSafeFunction done_;
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
      deferred_.Reject(DecodeFailure(env, error_).Value());
      return;
    }
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
    r.Set("hwaccel", info_.hwaccel);
    r.Set("hwaccelDevice", info_.hwaccel_device < 0 ? env.Null() : Napi::Number::New(env, info_.hwaccel_device));
    r.Set("hwaccelFallback", info_.hwaccel_fallback.empty() ? env.Null() : Napi::String::New(env, info_.hwaccel_fallback));
    r.Set("finalUrl", info_.final_url);
    r.Set("live", info_.live);
    r.Set("resumedBy", info_.resumed_by.empty() ? env.Null() : Napi::String::New(env, info_.resumed_by));
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
      decode::Cursor cursor;
      if (dec.cursor(&cursor)) cursors_.push_back(cursor);
    }
    if (!target_data_) owned_->resize(metas_.size() * frame_bytes_);
    stats_ = dec.stats();
    error_ = dec.error();
  }

  void OnOK() override {
    Napi::Env env = Env();
    if (status_ == Status::Error) {
      // Frames decoded before the failure in this batch are dropped with it (their memory with owned_).
      Napi::Error e = DecodeFailure(env, error_);
      e.Value().Set("stats", StatsObject(env, stats_));
      deferred_.Reject(e.Value());
      return;
    }
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
    Napi::Float64Array wall = Napi::Float64Array::New(env, n);
    for (size_t i = 0; i < n; ++i) {
      wall[i] = static_cast<double>(metas_[i].wall_ms);
      index[i] = static_cast<double>(metas_[i].index);
      pts[i] = static_cast<double>(metas_[i].pts_ms);
      key[i] = metas_[i].keyframe ? 1 : 0;
    }
    const char* status = status_ == Status::Frame ? "more" : status_ == Status::End ? "end" : "max_frames";
    r.Set("status", status);
    r.Set("count", Napi::Number::New(env, static_cast<double>(n)));
    r.Set("frameBytes", Napi::Number::New(env, static_cast<double>(frame_bytes_)));
    r.Set("data", data);
    r.Set("index", index);
    r.Set("ptsMs", pts);
    r.Set("keyframe", key);
    r.Set("wallMs", wall);
    // One per frame for a file; null for a live input, which has no cursor.
    if (cursors_.size() == n && n > 0) {
      Napi::Array cursors = Napi::Array::New(env, n);
      for (size_t i = 0; i < n; ++i) cursors.Set(static_cast<uint32_t>(i), CursorObject(env, cursors_[i]));
      r.Set("cursors", cursors);
    } else {
      r.Set("cursors", n > 0 ? env.Null() : Napi::Array::New(env, 0));
    }
    r.Set("stats", StatsObject(env, stats_));
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
  std::vector<decode::Cursor> cursors_;
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
  void OnOK() override {
    // Every request the decoder made is closed by now; nothing posts after this.
    if (state_->net) state_->net->release();
    deferred_.Resolve(Env().Undefined());
  }
};

class DecoderWrap : public Napi::ObjectWrap<DecoderWrap> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "Decoder",
                       {InstanceMethod<&DecoderWrap::Open>("open"), InstanceMethod<&DecoderWrap::Read>("read"),
                        InstanceMethod<&DecoderWrap::Close>("close"), InstanceMethod<&DecoderWrap::Abort>("abort"),
                        InstanceMethod<&DecoderWrap::NetHead>("netHead"), InstanceMethod<&DecoderWrap::NetPush>("netPush"),
                        InstanceMethod<&DecoderWrap::NetEnd>("netEnd"), InstanceMethod<&DecoderWrap::NetFail>("netFail")});
  }

  explicit DecoderWrap(const Napi::CallbackInfo& info)
      : Napi::ObjectWrap<DecoderWrap>(info), state_(std::make_shared<DecoderState>()) {}

 private:
  Napi::Value Open(const Napi::CallbackInfo& info) {
    decode::Options opts = ParseOptions(info[0]);
    // onNet(kind, id, url, offset, end): the host that fetches every network byte (src/media/guarded-source.ts).
    const Napi::Value on_net = info[0].As<Napi::Object>().Get("onNet");
    if (on_net.IsFunction() && !state_->io) {
      auto fn = Napi::ThreadSafeFunction::New(info.Env(), on_net.As<Napi::Function>(), "sightflow.net", 0, 1);
      fn.Unref(info.Env());
      state_->net = std::make_shared<NetCallback>(fn);
      std::weak_ptr<NetCallback> net = state_->net;
      state_->io = std::make_shared<decode::GuardedIo>([net](const decode::NetRequest& r) {
        if (auto n = net.lock()) n->post(r);
      });
      std::lock_guard<std::mutex> lock(state_->mu);
      state_->decoder.set_io(state_->io);
    }
    auto* w = new OpenWorker(info.Env(), state_, std::move(opts));
    Napi::Promise p = w->Promise();
    w->Queue();
    return p;
  }

  Napi::Value Read(const Napi::CallbackInfo& info) {
    const ArgReader args(info.Env(), "DECODE");
    const auto max = static_cast<size_t>(args.Integer(info[0], "max", 1, 1000000000));
    Napi::Uint8Array target;
    if (!info[1].IsUndefined()) target = args.Typed<Napi::Uint8Array>(info[1], "target", napi_uint8_array, "Uint8Array");
    auto* w = new ReadWorker(info.Env(), state_, max, target);
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

  // The host's answers to onNet requests; each is a no-op once the request was closed.
  Napi::Value NetHead(const Napi::CallbackInfo& info) {
    if (!state_->io) return info.Env().Undefined();
    decode::NetHead head;
    const auto id = static_cast<int64_t>(info[0].As<Napi::Number>().Int64Value());
    head.size = static_cast<int64_t>(info[1].As<Napi::Number>().Int64Value());
    head.seekable = info[2].As<Napi::Boolean>().Value();
    head.final_url = info[3].As<Napi::String>().Utf8Value();
    state_->io->head(id, head);
    return info.Env().Undefined();
  }

  Napi::Value NetPush(const Napi::CallbackInfo& info) {
    if (!state_->io) return Napi::Number::New(info.Env(), -1);
    const auto id = static_cast<int64_t>(info[0].As<Napi::Number>().Int64Value());
    const auto data = info[1].As<Napi::Uint8Array>();
    return Napi::Number::New(info.Env(), state_->io->push(id, data.Data(), data.ByteLength()));
  }

  Napi::Value NetEnd(const Napi::CallbackInfo& info) {
    if (state_->io) state_->io->end(static_cast<int64_t>(info[0].As<Napi::Number>().Int64Value()));
    return info.Env().Undefined();
  }

  Napi::Value NetFail(const Napi::CallbackInfo& info) {
    if (!state_->io) return info.Env().Undefined();
    state_->io->fail(static_cast<int64_t>(info[0].As<Napi::Number>().Int64Value()), info[1].As<Napi::String>().Utf8Value(),
                     info[2].As<Napi::String>().Utf8Value(), info[3].As<Napi::Boolean>().Value());
    return info.Env().Undefined();
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
