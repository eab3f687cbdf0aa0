// GuardedIo, the host-fed byte path of network inputs: an open waits for the host's head, reads drain the
// queue in order, a full queue asks the host to pause and a drained one asks for more, a seek becomes a new
// ranged request, a fatal failure stops everything, and the interrupt check ends a wait on a silent host.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "decode/guarded_io.h"

extern "C" {
#include <libavformat/avio.h>
#include <libavutil/error.h>
}

using sightflow::decode::GuardedIo;
using sightflow::decode::NetHead;
using sightflow::decode::NetRequest;

namespace {

struct Host {
  std::mutex mu;
  std::vector<NetRequest> seen;
  void post(const NetRequest& r) {
    std::lock_guard<std::mutex> lock(mu);
    seen.push_back(r);
  }
  // Waits for the n-th request (1-based) and returns it.
  NetRequest nth(size_t n) {
    for (int i = 0; i < 500; ++i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (seen.size() >= n) return seen[n - 1];
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    FAIL("the host saw no request " << n);
    return {};
  }
};

}  // namespace

TEST_CASE("open waits for the head, reads come in order, a seek is a new ranged request") {
  Host host;
  GuardedIo io([&](const NetRequest& r) { host.post(r); });
  std::vector<uint8_t> data(1000000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  std::thread serve([&] {
    const NetRequest open = host.nth(1);
    CHECK(open.kind == NetRequest::Open);
    CHECK(open.url == "http://example.test/v.mp4");
    io.head(open.id, NetHead{static_cast<int64_t>(data.size()), true, "http://example.test/final.mp4"});
    io.push(open.id, data.data(), data.size());
    io.end(open.id);
    // After the seek: the old request is closed and a ranged one opened at the new position.
    const NetRequest close = host.nth(2);
    CHECK(close.kind == NetRequest::Close);
    const NetRequest ranged = host.nth(3);
    CHECK(ranged.kind == NetRequest::Open);
    CHECK(ranged.url == "http://example.test/final.mp4");
    CHECK(ranged.offset == 900000);
    io.head(ranged.id, NetHead{static_cast<int64_t>(data.size()), true, ranged.url});
    io.push(ranged.id, data.data() + 900000, 100000);
    io.end(ranged.id);
  });
  AVIOContext* pb = nullptr;
  NetHead head;
  REQUIRE(io.open("http://example.test/v.mp4", 0, -1, &pb, &head) == 0);
  CHECK(head.final_url == "http://example.test/final.mp4");
  CHECK(avio_size(pb) == 1000000);
  std::vector<uint8_t> got(1000);
  REQUIRE(avio_read(pb, got.data(), 1000) == 1000);
  CHECK(std::equal(got.begin(), got.end(), data.begin()));
  // Far enough that neither FFmpeg's buffer nor GuardedIo's read-on threshold covers it.
  REQUIRE(avio_seek(pb, 900000, SEEK_SET) == 900000);
  REQUIRE(avio_read(pb, got.data(), 1000) == 1000);
  CHECK(std::equal(got.begin(), got.end(), data.begin() + 900000));
  serve.join();
  io.close(pb);
}

TEST_CASE("a full queue pauses the host and a drained one asks for more") {
  Host host;
  GuardedIo io([&](const NetRequest& r) { host.post(r); }, 4096);
  std::thread serve([&] {
    const NetRequest open = host.nth(1);
    io.head(open.id, NetHead{-1, false, ""});
    std::vector<uint8_t> chunk(4096, 1);
    CHECK(io.push(open.id, chunk.data(), chunk.size()) == 1);
    const NetRequest more = host.nth(2);
    CHECK(more.kind == NetRequest::More);
    CHECK(more.id == open.id);
    io.end(open.id);
  });
  AVIOContext* pb = nullptr;
  REQUIRE(io.open("http://example.test/live.ts", 0, -1, &pb) == 0);
  std::vector<uint8_t> got(8192);
  int total = 0;
  for (;;) {
    const int n = avio_read(pb, got.data(), static_cast<int>(got.size()));
    if (n <= 0) break;
    total += n;
  }
  CHECK(total == 4096);
  serve.join();
  io.close(pb);
}

TEST_CASE("a fatal failure is kept and sticks; the interrupt check ends a wait on a silent host") {
  Host host;
  GuardedIo io([&](const NetRequest& r) { host.post(r); });
  std::thread serve([&] {
    const NetRequest open = host.nth(1);
    io.fail(open.id, "fetch_failed", "refused by policy", true);
  });
  AVIOContext* pb = nullptr;
  CHECK(io.open("http://example.test/a", 0, -1, &pb) == AVERROR_EXIT);
  serve.join();
  CHECK(io.fatal());
  CHECK(io.failure().message == "refused by policy");

  GuardedIo silent([](const NetRequest&) {});
  std::atomic<bool> stop{false};
  silent.set_interrupt([&] { return stop.load(); });
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    stop.store(true);
  });
  const auto t0 = std::chrono::steady_clock::now();
  CHECK(silent.open("http://example.test/b", 0, -1, &pb) == AVERROR_EXIT);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  CHECK(ms < 1000);
  later.join();
}
