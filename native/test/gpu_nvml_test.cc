// Unit tests of the NVIDIA driver's readings where there is no driver (CI): a library that is not there and
// one without NVML's calls both give a status that says why and no cards, asked once or from many threads at
// once (the loader's state under its lock, read under the sanitizers). The readings of cards, through a
// stand-in for the driver's library, are tested from Node (test/native/gpu.test.ts).
#include <doctest/doctest.h>

#include <string>
#include <thread>
#include <vector>

#include "gpu/nvml.h"

using sightflow::gpu::Query;
using sightflow::gpu::Status;

TEST_CASE("no library: not available, the loader's reason, no cards") {
  const Status s = Query("/nonexistent/libnvidia-ml.so.1");
  CHECK_FALSE(s.available);
  CHECK(s.reason.find("/nonexistent/libnvidia-ml.so.1") != std::string::npos);
  CHECK(s.devices.empty());
  CHECK(Query("/nonexistent/libnvidia-ml.so.1").reason == s.reason);
}

TEST_CASE("a library without NVML's calls is not taken for the driver") {
  const Status s = Query("libm.so.6");
  CHECK_FALSE(s.available);
  CHECK(s.reason == "libm.so.6 has no nvmlInit_v2, nvmlDeviceGetCount_v2 or nvmlDeviceGetHandleByIndex_v2");
}

TEST_CASE("asked from many threads at once, every answer the same") {
  std::vector<std::thread> threads;
  std::vector<Status> got(16);
  for (size_t i = 0; i < got.size(); i++)
    threads.emplace_back([&got, i] { got[i] = Query(i % 2 ? "libm.so.6" : "/nonexistent/libnvidia-ml-threads.so.1"); });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < got.size(); i++) {
    CHECK_FALSE(got[i].available);
    CHECK(got[i].reason == got[i % 2].reason);
  }
}
