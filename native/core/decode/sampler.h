// Decides which decoded frames are sampled. Kept apart from FFmpeg so its arithmetic is unit-tested alone.
// Sample times are origin + k*step; a frame is taken when its time reaches the next sample time, and the
// next sample time then moves past it, so a gap in a variable-rate stream never yields a burst of frames.
#pragma once
#include <cstdint>

#include "decode/options.h"

namespace sightflow::decode {

class Sampler {
 public:
  Sampler(SampleMode mode, double value);
  void set_origin(double seconds) { origin_ = seconds; }
  double origin() const { return origin_; }
  double step() const { return step_; }  // seconds between sample times; 0 in keyframe mode
  // t: frame time in seconds from the stream start. Keyframe mode takes every frame it is shown
  // (the decoder only shows it key frames).
  bool take(double t);

 private:
  SampleMode mode_;
  double step_;
  double origin_ = 0;
  double k_ = 0;  // index of the next sample time
};

}  // namespace sightflow::decode
