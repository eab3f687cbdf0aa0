// The live reading thread of VideoDecoder, fed through GuardedIo by a host thread that plays the JS side:
// an endless MPEG-TS response (no size, not seekable) is a live input. Checks that frames arrive, that the
// newest frame wins when the caller is slow, and that close() and abort() end the thread whatever it is
// doing: blocked in a read on a silent host, mid-request while the host keeps pushing, waiting in next().
// Run under ASan/UBSan by scripts/test.d/20-native.sh, so a race on the hand-over or a use after close shows.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "decode/guarded_io.h"
#include "decode/video_decoder.h"
#include "support/media.h"

using sightflow::decode::FrameMeta;
using sightflow::decode::GuardedIo;
using sightflow::decode::NetHead;
using sightflow::decode::NetRequest;
using sightflow::decode::Options;
using sightflow::decode::Status;
using sightflow::decode::VideoDecoder;

namespace {

using Clock = std::chrono::steady_clock;

int64_t ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

// 20 s of 160x120 at 10 fps in MPEG-TS, a key frame every 10 frames: a camera-like stream.
const std::vector<uint8_t>& ts_bytes() {
  static const std::vector<uint8_t> bytes = [] {
    const std::string path = sightflow::testing::make_media(
        "live_20s.ts",
        "-f lavfi -i testsrc=size=160x120:rate=10:duration=20 -c:v libx264 -preset ultrafast -g 10 -keyint_min 10 "
        "-sc_threshold 0 -pix_fmt yuv420p -f mpegts");
    std::ifstream in(path, std::ios::binary);
    return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
  }();
  return bytes;
}

// The host: answers the first open with a head saying "no size, not seekable" and pushes the stream in
// chunks. `stall_after` bytes: then it goes silent (a source that stops sending without closing).
// `chunk_delay`: pause between chunks (a source paced in real time). It stops when the decoder closes the
// request (push returns -1) or when told to.
struct Host {
  std::shared_ptr<GuardedIo> io;
  std::mutex mu;
  std::vector<NetRequest> seen;
  std::atomic<int64_t> open_id{0};
  std::atomic<bool> quit{false};
  std::atomic<bool> gone{false};  // a push was refused: the decoder dropped the request
  std::atomic<int64_t> pushed{0};
  std::thread feeder;
  size_t stall_after = SIZE_MAX;
  std::chrono::milliseconds chunk_delay{2};

  Host() {
    io = std::make_shared<GuardedIo>([this](const NetRequest& r) {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(r);
      if (r.kind == NetRequest::Open && open_id.load() == 0) {
        open_id.store(r.id);
        // Like the JS host, answers come from another thread than the request's.
        feeder = std::thread([this, id = r.id] { feed(id); });
      }
    });
  }
  ~Host() { stop(); }
  void stop() {
    quit.store(true);
    std::thread t;
    {
      std::lock_guard<std::mutex> lock(mu);
      t = std::move(feeder);
    }
    if (t.joinable()) t.join();
  }
  void feed(int64_t id) {
    io->head(id, NetHead{-1, false, ""});
    const auto& data = ts_bytes();
    size_t at = 0;
    const size_t chunk = 188 * 20;
    while (!quit.load() && at < data.size() && at < stall_after) {
      const size_t n = std::min({chunk, data.size() - at, stall_after - at});
      const int r = io->push(id, data.data() + at, n);
      if (r < 0) {
        gone.store(true);
        return;
      }
      at += n;
      pushed.store(static_cast<int64_t>(at));
      std::this_thread::sleep_for(chunk_delay);
    }
    if (at >= data.size()) io->end(id);
    // Silent from here (stalled) until the decoder drops the request or the test ends.
    while (!quit.load()) {
      // A push of nothing tells whether the request still exists, as the JS host learns it from push().
      if (io->push(id, nullptr, 0) < 0) {
        gone.store(true);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  size_t closes() {
    std::lock_guard<std::mutex> lock(mu);
    size_t n = 0;
    for (const auto& r : seen) n += r.kind == NetRequest::Close;
    return n;
  }
};

Options live_options() {
  Options o;
  o.input = "http://camera.test/live.ts";
  o.value = 5;  // 5 of the 10 frames per second
  o.max_frames = 1000;
  o.open_timeout_ms = 10000;
  o.read_timeout_ms = 10000;
  o.threads = 1;
  return o;
}

}  // namespace

TEST_CASE("a live input is read by its own thread: a burst loses nothing, a caller far behind gets the newest") {
  // The host pushes much faster than the stream plays (a burst, like an HLS segment or a backlog).
  Host host;
  VideoDecoder dec;
  dec.set_io(host.io);
  REQUIRE(dec.open(live_options()));
  CHECK(dec.info().live);
  CHECK(dec.info().total_frames == -1);
  std::vector<uint8_t> buf(dec.frame_bytes());
  FrameMeta meta;
  // A caller that takes a while per frame yet keeps up with real time: every sampled frame (every second
  // frame of the 10 fps source) reaches it, none is replaced while it works.
  int64_t last_index = -1;
  for (int i = 0; i < 8; ++i) {
    REQUIRE(dec.next(buf.data(), &meta) == Status::Frame);
    if (last_index >= 0) CHECK(meta.index == last_index + 2);
    last_index = meta.index;
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
  }
  CHECK(dec.stats().late_drops == 0);
  // A caller more than a second behind real time: the thread stops waiting for it and the newest frame wins.
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  REQUIRE(dec.next(buf.data(), &meta) == Status::Frame);
  CHECK(meta.index > last_index + 2);
  CHECK(dec.stats().late_drops > 0);
  CHECK(dec.stats().emitted_frames == 9);
  // close() while the thread is mid-stream and the host still pushing: the thread ends, the request closes.
  const auto t0 = Clock::now();
  dec.close();
  CHECK(ms_since(t0) < 2000);
  CHECK(host.closes() >= 1);
  host.stop();
}

TEST_CASE("close() while the thread waits for the caller to take a frame returns promptly") {
  Host host;
  VideoDecoder dec;
  dec.set_io(host.io);
  REQUIRE(dec.open(live_options()));
  std::vector<uint8_t> buf(dec.frame_bytes());
  FrameMeta meta;
  REQUIRE(dec.next(buf.data(), &meta) == Status::Frame);
  // The burst fills the slot at once; the thread then waits for the slot (up to the lag bound).
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  const auto t0 = Clock::now();
  dec.close();
  CHECK(ms_since(t0) < 500);
  host.stop();
}

TEST_CASE("the live thread reads to the end of a finished source and reports End") {
  Host host;
  host.chunk_delay = std::chrono::milliseconds(0);
  VideoDecoder dec;
  dec.set_io(host.io);
  Options o = live_options();
  o.value = 2;
  REQUIRE(dec.open(o));
  std::vector<uint8_t> buf(dec.frame_bytes());
  FrameMeta meta;
  Status s;
  int frames = 0;
  while ((s = dec.next(buf.data(), &meta)) == Status::Frame) ++frames;
  CHECK(s == Status::End);
  CHECK(frames >= 1);
  CHECK(dec.stats().emitted_frames == frames);
  dec.close();
}

TEST_CASE("the caller's frame cap stops next() while the thread reads on") {
  Host host;
  VideoDecoder dec;
  dec.set_io(host.io);
  Options o = live_options();
  o.max_frames = 3;
  REQUIRE(dec.open(o));
  std::vector<uint8_t> buf(dec.frame_bytes());
  FrameMeta meta;
  for (int i = 0; i < 3; ++i) REQUIRE(dec.next(buf.data(), &meta) == Status::Frame);
  CHECK(dec.next(buf.data(), &meta) == Status::MaxFrames);
  dec.close();
}

TEST_CASE("abort() ends a next() waiting on a silent source, and the blocked read with it") {
  Host host;
  host.stall_after = 120000;  // enough for the probe, then silence
  VideoDecoder dec;
  dec.set_io(host.io);
  REQUIRE(dec.open(live_options()));
  std::vector<uint8_t> buf(dec.frame_bytes());
  FrameMeta meta;
  // Drain what came before the stall; the next call then waits on the thread, which waits on the host.
  Status s = Status::Frame;
  std::thread aborter([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    dec.abort();
  });
  const auto t0 = Clock::now();
  while ((s = dec.next(buf.data(), &meta)) == Status::Frame) {
  }
  const int64_t waited = ms_since(t0);
  aborter.join();
  CHECK(s == Status::Error);
  CHECK(dec.error().code == "aborted");
  CHECK(waited >= 1400);
  CHECK(waited < 4000);
  // Every later call fails the same way; close() joins the (already finished) thread.
  CHECK(dec.next(buf.data(), &meta) == Status::Error);
  dec.close();
  host.stop();
  CHECK(host.closes() >= 1);
}

TEST_CASE("close() while the thread is blocked reading a silent source returns promptly") {
  Host host;
  host.stall_after = 120000;
  VideoDecoder dec;
  dec.set_io(host.io);
  REQUIRE(dec.open(live_options()));
  // Let the thread use up the bytes and block in the guarded read.
  for (int i = 0; i < 200 && host.pushed.load() < 120000; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = Clock::now();
  dec.close();
  CHECK(ms_since(t0) < 1500);
  // The request is closed: the host learns it on its next push and stops.
  for (int i = 0; i < 200 && !host.gone.load(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(host.gone.load());
  host.stop();
  // Closing again is harmless, and a read after close fails without writing (no frame left by the thread).
  dec.close();
  std::vector<uint8_t> buf(16);
  FrameMeta meta;
  CHECK(dec.next(buf.data(), &meta) == Status::Error);
  CHECK(!dec.error().code.empty());
}

TEST_CASE("a live source that stops sending ends with timeout after read_timeout_ms") {
  Host host;
  host.stall_after = 120000;
  VideoDecoder dec;
  dec.set_io(host.io);
  Options o = live_options();
  o.read_timeout_ms = 500;
  REQUIRE(dec.open(o));
  std::vector<uint8_t> buf(dec.frame_bytes());
  FrameMeta meta;
  Status s;
  while ((s = dec.next(buf.data(), &meta)) == Status::Frame) {
  }
  CHECK(s == Status::Error);
  CHECK(dec.error().code == "timeout");
  dec.close();
}

TEST_CASE("destroying an open live decoder mid-stream joins its thread (no close() first)") {
  Host host;
  {
    VideoDecoder dec;
    dec.set_io(host.io);
    REQUIRE(dec.open(live_options()));
    std::vector<uint8_t> buf(dec.frame_bytes());
    FrameMeta meta;
    REQUIRE(dec.next(buf.data(), &meta) == Status::Frame);
  }
  host.stop();
  CHECK(host.closes() >= 1);
}

TEST_CASE("abort() racing next() and close() from other threads, many times") {
  // Short streams, aborted at varying points (during open's aftermath, mid-read, while next() waits).
  for (int round = 0; round < 12; ++round) {
    Host host;
    host.chunk_delay = std::chrono::milliseconds(3);
    VideoDecoder dec;
    dec.set_io(host.io);
    REQUIRE(dec.open(live_options()));
    std::vector<uint8_t> buf(dec.frame_bytes());
    std::atomic<bool> done{false};
    Status last = Status::Frame;
    std::thread reader([&] {
      FrameMeta meta;
      while ((last = dec.next(buf.data(), &meta)) == Status::Frame) {
      }
      done.store(true);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(round * 15));
    dec.abort();
    reader.join();
    CHECK(done.load());
    // A late abort may find the short stream already read to its end.
    if (last == Status::Error) CHECK(dec.error().code == "aborted");
    else CHECK(last == Status::End);
    dec.close();
    host.stop();
  }
}
