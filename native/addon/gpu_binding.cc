// N-API surface of native/core/gpu: the cards' readings from the NVIDIA driver's management library, read on
// the libuv pool (starting the library can take a while on a card without persistence mode).
// src/native/gpu.ts types it.
#include <string>
#include <utility>

#include "bindings.h"
#include "gpu/nvml.h"
#include "options.h"

namespace sightflow {
namespace {

class GpuStatusWorker : public Napi::AsyncWorker {
 public:
  GpuStatusWorker(Napi::Env env, std::string library)
      : Napi::AsyncWorker(env, "sightflow.gpuStatus"), deferred_(Napi::Promise::Deferred::New(env)), library_(std::move(library)) {}

  Napi::Promise Promise() const { return deferred_.Promise(); }

  void Execute() override { status_ = gpu::Query(library_); }

  void OnOK() override {
    Napi::Env env = Env();
    Napi::Object out = Napi::Object::New(env);
    out.Set("available", Napi::Boolean::New(env, status_.available));
    if (!status_.reason.empty()) out.Set("reason", status_.reason);
    if (!status_.driver_version.empty()) out.Set("driverVersion", status_.driver_version);
    Napi::Array devices = Napi::Array::New(env, status_.devices.size());
    for (size_t i = 0; i < status_.devices.size(); i++) {
      const gpu::DeviceStats& s = status_.devices[i];
      Napi::Object d = Napi::Object::New(env);
      d.Set("index", Napi::Number::New(env, s.index));
      d.Set("uuid", s.uuid);
      d.Set("name", s.name);
      if (!s.error.empty()) d.Set("error", s.error);
      if (s.has_utilization) d.Set("utilization", Napi::Number::New(env, s.utilization));
      if (s.has_memory) {
        d.Set("memoryUsedBytes", Napi::Number::New(env, static_cast<double>(s.memory_used)));
        d.Set("memoryTotalBytes", Napi::Number::New(env, static_cast<double>(s.memory_total)));
      }
      if (s.has_decoder) d.Set("decoderUtilization", Napi::Number::New(env, s.decoder_utilization));
      if (s.has_power) d.Set("powerWatts", Napi::Number::New(env, s.power_watts));
      if (s.has_temperature) d.Set("temperatureCelsius", Napi::Number::New(env, s.temperature_celsius));
      devices.Set(static_cast<uint32_t>(i), d);
    }
    out.Set("devices", devices);
    deferred_.Resolve(out);
  }

  void OnError(const Napi::Error& e) override { deferred_.Reject(CodedError(Env(), ErrorCode("GPU", "failed"), e.Message()).Value()); }

 private:
  Napi::Promise::Deferred deferred_;
  std::string library_;
  gpu::Status status_;
};

// gpuStatusAsync(library: string) -> Promise<{available, reason?, driverVersion?, devices: [...]}>. A host
// without the library resolves with available false and the loader's reason; it never rejects for that.
Napi::Value GpuStatusAsync(const Napi::CallbackInfo& info) {
  const ArgReader args(info.Env(), "GPU");
  std::string library = args.String(info[0], "library", true);
  auto* worker = new GpuStatusWorker(info.Env(), std::move(library));
  Napi::Promise p = worker->Promise();
  worker->Queue();
  return p;
}

}  // namespace

void InitGpu(Napi::Env env, Napi::Object exports) { exports.Set("gpuStatusAsync", Napi::Function::New(env, GpuStatusAsync, "gpuStatusAsync")); }

}  // namespace sightflow
