// Decides which decoded frames are sampled. Kept apart from FFmpeg so its arithmetic is unit-tested alone.
// Sample times are origin + k*step; a frame is taken when its time reaches the next sample time, and the
// next sample time then moves past it, so a gap in a variable-rate stream never yields a burst of frames.
// Given a source rate (the decoder gives one for live sources only), "reaches" allows half the source's
// frame interval: a camera's timestamps jitter by milliseconds, and a frame 2 ms early must not be skipped
// when the sampling rate equals the source's rate (every frame wanted). The frame taken is then the one
// nearest each sample time rather than the first at or after it; without a rate (files, whose times are
// exact) it is the first at or after it.
#pragma once
#include <cstdint>

#include "decode/options.h"

namespace sightflow::decode {

class Sampler {
 public:
  // source_fps: the stream's nominal frame rate, 0 when unknown (then only rounding is allowed for).
  Sampler(SampleMode mode, double value, double source_fps = 0);
  void set_origin(double seconds) { origin_ = seconds; }
  double origin() const { return origin_; }
  double step() const { return step_; }  // seconds between sample times; 0 in keyframe mode
  double tolerance() const { return tolerance_; }  // how early a frame may be and still reach a sample time
  // The whole state (with the constructor's arguments): a resumed decoder carries on where another stopped.
  double next() const { return k_; }
  void restore(double origin, double next) {
    origin_ = origin;
    k_ = next;
  }
  // t: frame time in seconds from the stream start. Keyframe mode takes every frame it is shown
  // (the decoder only shows it key frames).
  bool take(double t);

 private:
  SampleMode mode_;
  double step_;
  double tolerance_;
  double origin_ = 0;
  double k_ = 0;  // index of the next sample time
};

}  // namespace sightflow::decode
