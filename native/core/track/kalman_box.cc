#include "kalman_box.h"

#include <cmath>

namespace sightflow::track {
namespace {

void ToMeasurement(const Box& b, double z[4]) {
  const double w = static_cast<double>(b.x2) - b.x1, h = static_cast<double>(b.y2) - b.y1;
  z[0] = b.x1 + w / 2.0;
  z[1] = b.y1 + h / 2.0;
  z[2] = w * h;
  z[3] = w / h;
}

// Inverts a symmetric positive-definite 4x4 matrix in place (Gauss-Jordan with partial pivoting).
bool Invert4(double a[4][4]) {
  double inv[4][4] = {{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}};
  for (int c = 0; c < 4; ++c) {
    int piv = c;
    for (int r = c + 1; r < 4; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[piv][c])) piv = r;
    if (std::fabs(a[piv][c]) < 1e-12) return false;
    if (piv != c)
      for (int k = 0; k < 4; ++k) {
        std::swap(a[c][k], a[piv][k]);
        std::swap(inv[c][k], inv[piv][k]);
      }
    const double d = a[c][c];
    for (int k = 0; k < 4; ++k) {
      a[c][k] /= d;
      inv[c][k] /= d;
    }
    for (int r = 0; r < 4; ++r) {
      if (r == c) continue;
      const double f = a[r][c];
      if (f == 0.0) continue;
      for (int k = 0; k < 4; ++k) {
        a[r][k] -= f * a[c][k];
        inv[r][k] -= f * inv[c][k];
      }
    }
  }
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 4; ++k) a[r][k] = inv[r][k];
  return true;
}

}  // namespace

KalmanBox::KalmanBox(const Box& first) {
  double z[4];
  ToMeasurement(first, z);
  for (int i = 0; i < 7; ++i) {
    x_[i] = i < 4 ? z[i] : 0.0;
    for (int j = 0; j < 7; ++j) p_[i][j] = 0.0;
  }
  // Unobserved velocities start very uncertain (SORT: P[4:,4:] *= 1000, then P *= 10).
  for (int i = 0; i < 7; ++i) p_[i][i] = i < 4 ? 10.0 : 10000.0;
}

KalmanBox::KalmanBox(const double x[7], const double p[49]) {
  for (int i = 0; i < 7; ++i) {
    x_[i] = x[i];
    for (int j = 0; j < 7; ++j) p_[i][j] = p[7 * i + j];
  }
}

void KalmanBox::Export(double x[7], double p[49]) const {
  for (int i = 0; i < 7; ++i) {
    x[i] = x_[i];
    for (int j = 0; j < 7; ++j) p[7 * i + j] = p_[i][j];
  }
}

Box KalmanBox::Predict() {
  if (x_[6] + x_[2] <= 0.0) x_[6] = 0.0;  // area must not go negative
  x_[0] += x_[4];
  x_[1] += x_[5];
  x_[2] += x_[6];
  // P = F P F^T + Q, with F = I + (position <- velocity) written out instead of multiplied.
  double fp[7][7];
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) fp[i][j] = p_[i][j] + (i < 3 ? p_[i + 4][j] : 0.0);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) p_[i][j] = fp[i][j] + (j < 3 ? fp[i][j + 4] : 0.0);
  static constexpr double kQ[7] = {1, 1, 1, 1, 0.01, 0.01, 0.0001};
  for (int i = 0; i < 7; ++i) p_[i][i] += kQ[i];
  return State();
}

void KalmanBox::Update(const Box& measured) {
  double z[4];
  ToMeasurement(measured, z);
  static constexpr double kR[4] = {1, 1, 10, 10};
  double s[4][4];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) s[i][j] = p_[i][j] + (i == j ? kR[i] : 0.0);
  if (!Invert4(s)) return;
  // K = P H^T S^-1 (7x4); H picks the first four state entries.
  double k[7][4];
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 4; ++j) {
      double acc = 0.0;
      for (int m = 0; m < 4; ++m) acc += p_[i][m] * s[m][j];
      k[i][j] = acc;
    }
  double y[4];
  for (int i = 0; i < 4; ++i) y[i] = z[i] - x_[i];
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 4; ++j) x_[i] += k[i][j] * y[j];
  // P = (I - K H) P = P - K * P[0:4, :]
  double hp[4][7];
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 7; ++j) hp[i][j] = p_[i][j];
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 7; ++j) {
      double acc = 0.0;
      for (int m = 0; m < 4; ++m) acc += k[i][m] * hp[m][j];
      p_[i][j] -= acc;
    }
}

Box KalmanBox::State() const {
  const double s = x_[2] > 0.0 ? x_[2] : 0.0;
  const double r = x_[3] > 0.0 ? x_[3] : 0.0;
  const double w = std::sqrt(s * r);
  const double h = w > 0.0 ? s / w : 0.0;
  return Box{static_cast<float>(x_[0] - w / 2.0), static_cast<float>(x_[1] - h / 2.0), static_cast<float>(x_[0] + w / 2.0),
             static_cast<float>(x_[1] + h / 2.0)};
}

bool KalmanBox::Finite() const {
  for (double v : x_)
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace sightflow::track
