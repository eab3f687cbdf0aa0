// abort() from another thread while open() is blocked on the network (a host that takes the request and never
// answers: the guarded network path, as every http(s) input reads), and the open timeout on the same host:
// both return promptly and free everything (the sanitizer build checks the freeing). Without a host an
// http(s) input is refused: FFmpeg never connects by itself.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "decode/guarded_io.h"
#include "decode/video_decoder.h"

using namespace sightflow::decode;
using Clock = std::chrono::steady_clock;

namespace {

// A host that takes every request and never answers.
std::shared_ptr<GuardedIo> silent_host(std::atomic<int>* requests) {
  return std::make_shared<GuardedIo>([requests](const NetRequest& r) {
    if (r.kind == NetRequest::Open) requests->fetch_add(1);
  });
}

[[maybe_unused]] double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

TEST_CASE("abort() from another thread stops a blocked open within 1 s") {
  std::atomic<int> requests{0};
  VideoDecoder d;
  d.set_io(silent_host(&requests));
  Options o;
  o.input = "http://video.test/video.mp4";
  o.open_timeout_ms = 30000;
  Clock::time_point aborted_at;
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    aborted_at = Clock::now();
    d.abort();
  });
  const bool ok = d.open(o);
  const auto returned_at = Clock::now();
  aborter.join();
  const double after_abort = std::chrono::duration<double>(returned_at - aborted_at).count();
  CHECK_FALSE(ok);
  CHECK(d.error().code == "aborted");
  CHECK(after_abort < 1.0);
  CHECK(requests.load() == 1);
}

TEST_CASE("a silent host fails open with code timeout after open_timeout_ms") {
  std::atomic<int> requests{0};
  VideoDecoder d;
  d.set_io(silent_host(&requests));
  Options o;
  o.input = "http://video.test/video.mp4";
  o.open_timeout_ms = 400;
  const auto t0 = Clock::now();
  CHECK_FALSE(d.open(o));
  CHECK(d.error().code == "timeout");
  const double took = seconds_since(t0);
  CHECK(took >= 0.35);
  CHECK(took < 3.0);
}

TEST_CASE("without a host an http input is refused before any connection") {
  VideoDecoder d;
  Options o;
  o.input = "http://127.0.0.1:9/video.mp4";
  CHECK_FALSE(d.open(o));
  CHECK(d.error().code == "fetch_failed");
}
