// Sampling arithmetic alone: which frame times a Sampler takes.
#include <doctest/doctest.h>

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
