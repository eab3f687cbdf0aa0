// SORT's constant-velocity Kalman filter on [cx, cy, s (area), r (aspect w/h), vx, vy, vs]; r is constant.
// Noise settings are SORT's (abewley/sort), so behaviour matches the reference tracker.
#pragma once
#include "box.h"

namespace sightflow::track {

class KalmanBox {
 public:
  explicit KalmanBox(const Box& first);
  // Advances one frame and returns the predicted box.
  Box Predict();
  // Corrects the state with a measured box.
  void Update(const Box& measured);
  Box State() const;
  // False once the state has diverged (NaN/inf); such tracks are dropped.
  bool Finite() const;

 private:
  double x_[7];
  double p_[7][7];
};

}  // namespace sightflow::track
