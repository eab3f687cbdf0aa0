// The NVIDIA driver's management library (NVML), read at run time: each card's utilisation, memory, video
// decoder use, power and temperature, what nvidia-smi shows. The library comes with the driver
// (libnvidia-ml.so.1) and is opened with dlopen on first use, never linked: a host without a driver has no
// such file and gets a status saying so. Only the few calls below are declared (core/gpu/nvml.cc), by their
// documented C signatures.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace sightflow::gpu {

// One card as NVML numbers it (nvidia-smi's index, in PCI bus order). A reading the card does not support
// (or that failed) is absent: its `has_` flag is false.
struct DeviceStats {
  unsigned index = 0;
  std::string uuid;
  std::string name;
  // Set when the card could not be read at all (its handle); the readings are then all absent.
  std::string error;
  bool has_utilization = false;
  double utilization = 0;  // 0-1: share of the last sample period in which a kernel ran
  bool has_memory = false;
  uint64_t memory_used = 0;
  uint64_t memory_total = 0;
  bool has_decoder = false;
  double decoder_utilization = 0;  // 0-1: the video decoders (NVDEC)
  bool has_power = false;
  double power_watts = 0;
  bool has_temperature = false;
  double temperature_celsius = 0;
};

struct Status {
  // False without the library or when it could not start (no driver loaded, no permission): `reason` says why.
  bool available = false;
  std::string reason;
  std::string driver_version;
  std::vector<DeviceStats> devices;
};

// Opens `library` once (later calls reuse it) and reads every card. Safe from any thread.
Status Query(const std::string& library);

}  // namespace sightflow::gpu
