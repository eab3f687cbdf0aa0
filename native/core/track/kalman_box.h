// SORT's constant-velocity Kalman filter on [cx, cy, s (area), r (aspect w/h), vx, vy, vs]; r is constant.
// Noise settings are SORT's (abewley/sort), so behaviour matches the reference tracker.
#pragma once
#include "box.h"

namespace sightflow::track {

class KalmanBox {
 public:
  explicit KalmanBox(const Box& first);
  // A filter with exactly this state x and covariance P (row-major 7x7), as Export() gave them: what
  // Tracker::Restore rebuilds a track's filter from, bit for bit.
  KalmanBox(const double x[7], const double p[49]);
  // Advances one frame and returns the predicted box.
  Box Predict();
  // Corrects the state with a measured box.
  void Update(const Box& measured);
  Box State() const;
  // False once the state has diverged (NaN/inf); such tracks are dropped.
  bool Finite() const;
  void Export(double x[7], double p[49]) const;

 private:
  double x_[7];
  double p_[7][7];
};

}  // namespace sightflow::track
