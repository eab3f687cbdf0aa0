#include "decode/sampler.h"

#include <algorithm>
#include <cmath>

namespace sightflow::decode {

// Timestamps become doubles through a time base; 0.1 ms absorbs the rounding so a frame at exactly
// 1.000 s is not missed because 1/25*25 came out as 0.99999999.
static constexpr double kEpsilon = 1e-4;

Sampler::Sampler(SampleMode mode, double value, double source_fps) : mode_(mode) {
  if (mode == SampleMode::Fps) step_ = value > 0 ? 1.0 / value : 1.0;
  else if (mode == SampleMode::Interval) step_ = value > 0 ? value : 1.0;
  else step_ = 0;
  // Half a source frame, and never more than half a step: at most one frame is taken per step either way
  // (the next sample time is computed from the same shifted time).
  const double half_frame = source_fps > 0 ? 0.5 / source_fps : 0;
  tolerance_ = std::max(kEpsilon, std::min(half_frame, 0.5 * step_));
}

bool Sampler::take(double t) {
  if (mode_ == SampleMode::Keyframe) return true;
  const double rel = t - origin_;
  if (rel + tolerance_ < k_ * step_) return false;
  // Next sample strictly after this frame. k is a double: extreme rates must not overflow an integer.
  k_ = std::max(1.0, std::floor((rel + tolerance_) / step_) + 1);
  return true;
}

}  // namespace sightflow::decode
