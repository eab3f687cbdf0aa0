// See nvml.h. The declarations are NVML's documented C API: every call returns an nvmlReturn_t (0 is
// success), a device is an opaque handle, and the two structs read here are plain unsigned fields.
#include "gpu/nvml.h"

#include <dlfcn.h>

#include <map>
#include <mutex>

namespace sightflow::gpu {
namespace {

using Ret = int;
using Device = void*;
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};
constexpr Ret kSuccess = 0;
constexpr int kTemperatureGpu = 0;
constexpr unsigned kTextSize = 256;

struct Api {
  void* handle = nullptr;
  std::string open_error;
  bool initialised = false;
  Ret (*init)() = nullptr;
  const char* (*error_string)(Ret) = nullptr;
  Ret (*driver_version)(char*, unsigned) = nullptr;
  Ret (*count)(unsigned*) = nullptr;
  Ret (*by_index)(unsigned, Device*) = nullptr;
  Ret (*name)(Device, char*, unsigned) = nullptr;
  Ret (*uuid)(Device, char*, unsigned) = nullptr;
  Ret (*utilization)(Device, Utilization*) = nullptr;
  Ret (*memory)(Device, Memory*) = nullptr;
  Ret (*decoder)(Device, unsigned*, unsigned*) = nullptr;
  Ret (*power)(Device, unsigned*) = nullptr;
  Ret (*temperature)(Device, int, unsigned*) = nullptr;
};

std::mutex g_mu;
std::map<std::string, Api> g_apis;

template <typename F>
void Bind(void* handle, const char* symbol, F* out) {
  *out = reinterpret_cast<F>(dlsym(handle, symbol));
}

// Opens the library and finds its calls, once per name. Holding g_mu.
Api& Open(const std::string& library) {
  auto found = g_apis.find(library);
  if (found != g_apis.end()) return found->second;
  Api& api = g_apis[library];
  api.handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!api.handle) {
    const char* e = dlerror();
    api.open_error = e ? e : ("cannot open " + library);
    return api;
  }
  Bind(api.handle, "nvmlInit_v2", &api.init);
  Bind(api.handle, "nvmlErrorString", &api.error_string);
  Bind(api.handle, "nvmlSystemGetDriverVersion", &api.driver_version);
  Bind(api.handle, "nvmlDeviceGetCount_v2", &api.count);
  Bind(api.handle, "nvmlDeviceGetHandleByIndex_v2", &api.by_index);
  Bind(api.handle, "nvmlDeviceGetName", &api.name);
  Bind(api.handle, "nvmlDeviceGetUUID", &api.uuid);
  Bind(api.handle, "nvmlDeviceGetUtilizationRates", &api.utilization);
  Bind(api.handle, "nvmlDeviceGetMemoryInfo", &api.memory);
  Bind(api.handle, "nvmlDeviceGetDecoderUtilization", &api.decoder);
  Bind(api.handle, "nvmlDeviceGetPowerUsage", &api.power);
  Bind(api.handle, "nvmlDeviceGetTemperature", &api.temperature);
  if (!api.init || !api.count || !api.by_index) api.open_error = library + " has no nvmlInit_v2, nvmlDeviceGetCount_v2 or nvmlDeviceGetHandleByIndex_v2";
  return api;
}

std::string Describe(const Api& api, const char* call, Ret r) {
  const char* text = api.error_string ? api.error_string(r) : nullptr;
  return std::string(call) + " failed: " + (text ? text : "error " + std::to_string(r));
}

std::string Text(Ret (*f)(Device, char*, unsigned), Device d) {
  char buf[kTextSize] = {0};
  if (!f || f(d, buf, kTextSize) != kSuccess) return "";
  buf[kTextSize - 1] = 0;
  return buf;
}

DeviceStats ReadDevice(const Api& api, unsigned index) {
  DeviceStats s;
  s.index = index;
  Device d = nullptr;
  const Ret r = api.by_index(index, &d);
  if (r != kSuccess) {
    s.error = Describe(api, "nvmlDeviceGetHandleByIndex_v2", r);
    return s;
  }
  s.uuid = Text(api.uuid, d);
  s.name = Text(api.name, d);
  Utilization u{};
  if (api.utilization && api.utilization(d, &u) == kSuccess && u.gpu <= 100) {
    s.has_utilization = true;
    s.utilization = u.gpu / 100.0;
  }
  Memory m{};
  if (api.memory && api.memory(d, &m) == kSuccess) {
    s.has_memory = true;
    s.memory_used = m.used;
    s.memory_total = m.total;
  }
  unsigned dec = 0, period = 0;
  if (api.decoder && api.decoder(d, &dec, &period) == kSuccess && dec <= 100) {
    s.has_decoder = true;
    s.decoder_utilization = dec / 100.0;
  }
  unsigned milliwatts = 0;
  if (api.power && api.power(d, &milliwatts) == kSuccess) {
    s.has_power = true;
    s.power_watts = milliwatts / 1000.0;
  }
  unsigned celsius = 0;
  if (api.temperature && api.temperature(d, kTemperatureGpu, &celsius) == kSuccess) {
    s.has_temperature = true;
    s.temperature_celsius = celsius;
  }
  return s;
}

}  // namespace

Status Query(const std::string& library) {
  Status out;
  Api* api = nullptr;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    api = &Open(library);
    if (!api->open_error.empty()) {
      out.reason = api->open_error;
      return out;
    }
    // Started once it succeeds; a driver not loaded yet is asked again on the next call. NVML counts its
    // starts, and this process never shuts it down: the readings are wanted until the process exits.
    if (!api->initialised) {
      const Ret r = api->init();
      if (r != kSuccess) {
        out.reason = Describe(*api, "nvmlInit_v2", r);
        return out;
      }
      api->initialised = true;
    }
  }
  // NVML's calls are thread-safe; the map entry is never erased, so `api` stays valid outside the lock.
  if (api->driver_version) {
    char buf[kTextSize] = {0};
    if (api->driver_version(buf, kTextSize) == kSuccess) {
      buf[kTextSize - 1] = 0;
      out.driver_version = buf;
    }
  }
  unsigned count = 0;
  const Ret r = api->count(&count);
  if (r != kSuccess) {
    out.reason = Describe(*api, "nvmlDeviceGetCount_v2", r);
    return out;
  }
  out.available = true;
  for (unsigned i = 0; i < count && i < 1024; i++) out.devices.push_back(ReadDevice(*api, i));
  return out;
}

}  // namespace sightflow::gpu
