// Sampling arithmetic alone: which frame times a Sampler takes.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "decode/sampler.h"

using sightflow::decode::SampleMode;
using sightflow::decode::Sampler;

static std::vector<int> taken(Sampler s, int frames, double fps) {
  std::vector<int> out;
  for (int i = 0; i < frames; ++i) {
    if (s.take(i / fps)) out.push_back(i);
  }
  return out;
}

TEST_CASE("1 fps over 10 s at 25 fps takes frames 0, 25, ..., 225") {
  const auto got = taken(Sampler(SampleMode::Fps, 1), 250, 25);
  REQUIRE(got.size() == 10);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == static_cast<int>(i) * 25);
}

TEST_CASE("interval 2 s takes every 50th frame") {
  CHECK(taken(Sampler(SampleMode::Interval, 2), 250, 25) == std::vector<int>{0, 50, 100, 150, 200});
}

TEST_CASE("a rate above the source rate takes every frame once") {
  CHECK(taken(Sampler(SampleMode::Fps, 100), 30, 25).size() == 30);
}

TEST_CASE("29.97 fps source at 1 fps: one frame per second, none twice") {
  const auto got = taken(Sampler(SampleMode::Fps, 1), 300, 30000.0 / 1001);
  CHECK(got.size() == 10);  // the last frame is at 9.977 s: samples at 0..9 s
  CHECK(got[1] == 30);      // first frame at or after 1.0 s is frame 30 (1.001 s)
}

TEST_CASE("a gap in a variable-rate stream yields one frame, not a burst") {
  Sampler s(SampleMode::Fps, 1);
  CHECK(s.take(0.0));
  CHECK_FALSE(s.take(0.5));
  CHECK(s.take(5.2));   // a 4.7 s gap
  CHECK_FALSE(s.take(5.9));
  CHECK(s.take(6.0));
}

TEST_CASE("origin moves the sample grid") {
  Sampler s(SampleMode::Fps, 1);
  s.set_origin(2.0);
  CHECK(s.take(2.0));
  CHECK_FALSE(s.take(2.96));
  CHECK(s.take(3.0));
}

TEST_CASE("key-frame mode takes whatever it is shown") {
  Sampler s(SampleMode::Keyframe, 0);
  CHECK(s.take(0));
  CHECK(s.take(0.04));
}

TEST_CASE("extreme rates stay defined (no integer overflow)") {
  Sampler fast(SampleMode::Fps, 1e300);
  CHECK(fast.take(0));
  CHECK(fast.take(1e9));
  Sampler slow(SampleMode::Fps, 1e-300);
  CHECK(slow.take(0));
  CHECK_FALSE(slow.take(1e12));
}

// A camera's timestamps jitter: frames of a 5 fps stream arrive 196-204 ms apart (seen from a live RTSP
// source under load). Sampling it at its own rate must keep every frame.
static std::vector<double> jittered(int frames, double fps, double jitter_s) {
  std::vector<double> out;
  for (int i = 0; i < frames; ++i) out.push_back(i / fps + ((i % 3) - 1) * jitter_s);  // -j, 0, +j, ...
  return out;
}

TEST_CASE("a jittered source sampled at its own rate keeps every frame") {
  Sampler with_rate(SampleMode::Fps, 5, 5);
  int kept = 0;
  for (double t : jittered(100, 5, 0.004)) kept += with_rate.take(t) ? 1 : 0;
  CHECK(kept == 100);
  // Without the source's rate only rounding is allowed for: the early frames are skipped.
  Sampler without(SampleMode::Fps, 5);
  kept = 0;
  for (double t : jittered(100, 5, 0.004)) kept += without.take(t) ? 1 : 0;
  CHECK(kept < 100);
}

TEST_CASE("a jittered 25 fps source at 5 fps gives one frame in five") {
  Sampler s(SampleMode::Fps, 5, 25);
  std::vector<int> got;
  const auto times = jittered(250, 25, 0.004);
  for (size_t i = 0; i < times.size(); ++i) {
    if (s.take(times[i])) got.push_back(static_cast<int>(i));
  }
  REQUIRE(got.size() == 50);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == static_cast<int>(i) * 5);
}

TEST_CASE("with the source's rate known, exact aligned timestamps sample as before") {
  const auto got = taken(Sampler(SampleMode::Fps, 1, 25), 250, 25);
  REQUIRE(got.size() == 10);
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == static_cast<int>(i) * 25);
  CHECK(taken(Sampler(SampleMode::Interval, 2, 25), 250, 25) == std::vector<int>{0, 50, 100, 150, 200});
  CHECK(taken(Sampler(SampleMode::Fps, 100, 25), 30, 25).size() == 30);
  const auto ntsc = taken(Sampler(SampleMode::Fps, 1, 30000.0 / 1001), 300, 30000.0 / 1001);
  CHECK(ntsc.size() == 10);
  CHECK(ntsc[1] == 30);
  // Sample times between frames: the nearest frame, not the first at or after (why files pass no rate).
  CHECK(taken(Sampler(SampleMode::Fps, 2, 25), 50, 25) == std::vector<int>{0, 12, 25, 37});
  CHECK(taken(Sampler(SampleMode::Fps, 2), 50, 25) == std::vector<int>{0, 13, 25, 38});
}

TEST_CASE("the tolerance never lets more than one frame a step through") {
  // A wrong, low nominal rate (1 fps claimed, 25 sent) caps the tolerance at half a step.
  Sampler s(SampleMode::Fps, 5, 1);
  CHECK(s.tolerance() == doctest::Approx(0.1));
  // 10 s of frames: sample cells of 0.2 s shifted by the tolerance, one frame in each (the shifted grid's
  // first cell starts before the first frame, so 51 cells meet the 10 s), never two in one.
  std::vector<double> kept;
  for (int i = 0; i < 250; ++i) {
    if (s.take(i / 25.0)) kept.push_back(i / 25.0);
  }
  CHECK(kept.size() <= 51);
  CHECK(kept.size() >= 50);
  for (size_t i = 1; i < kept.size(); ++i) {
    CHECK(std::floor((kept[i] + s.tolerance()) / 0.2) > std::floor((kept[i - 1] + s.tolerance()) / 0.2));
  }
}
