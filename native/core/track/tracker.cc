#include "tracker.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace sightflow::track {

Tracker::Tracker(const TrackerOptions& opts) : opts_(opts) {}

void Tracker::LiveIds(std::vector<int32_t>& out) const {
  out.clear();
  for (const Track& t : tracks_)
    if (t.id != 0) out.push_back(t.id);
  // Tracks are kept in creation order, but without report_all ids are given at confirmation, out of that order.
  std::sort(out.begin(), out.end());
}

namespace {
constexpr float kSignatureStep = 1.0f / 65535.0f;

// A signature value (a histogram share, 0..1) as the track's 16-bit fixed point; out of range or NaN clamps.
uint16_t ToFixed(float v) {
  if (!(v > 0.0f)) return 0;
  if (v >= 1.0f) return 65535;
  return static_cast<uint16_t>(std::lround(v * 65535.0f));
}

// b grown by `buffer` of its width and height on each side (C-BIoU's buffered box).
Box Widen(const Box& b, float buffer) {
  if (buffer <= 0.0f) return b;
  const float dx = (b.x2 - b.x1) * buffer, dy = (b.y2 - b.y1) * buffer;
  return Box{b.x1 - dx, b.y1 - dy, b.x2 + dx, b.y2 + dy};
}
}  // namespace

void Tracker::Associate(const Detection* dets, const std::vector<int>& det_idx, const std::vector<int>& trk_idx, float threshold,
                        float buffer) {
  const int rows = static_cast<int>(trk_idx.size()), cols = static_cast<int>(det_idx.size());
  if (rows == 0 || cols == 0) return;
  // Detections sorted by left edge: each track only visits boxes that can overlap it horizontally, so the
  // cost is about (tracks + detections) * neighbours instead of tracks * detections.
  by_x1_.resize(static_cast<size_t>(cols));
  float max_w = 0.0f;
  for (int c = 0; c < cols; ++c) {
    by_x1_[static_cast<size_t>(c)] = c;
    const Box& b = dets[det_idx[static_cast<size_t>(c)]].box;
    max_w = std::max(max_w, (b.x2 - b.x1) * (1.0f + 2.0f * buffer));
  }
  auto x1_of = [&](int c) { return dets[det_idx[static_cast<size_t>(c)]].box.x1; };
  std::sort(by_x1_.begin(), by_x1_.end(), [&](int a, int b) { return x1_of(a) < x1_of(b); });
  edges_.clear();
  for (int r = 0; r < rows; ++r) {
    const Track& t = tracks_[static_cast<size_t>(trk_idx[static_cast<size_t>(r)])];
    const Box p = Widen(t.predicted, buffer);
    auto it = std::lower_bound(by_x1_.begin(), by_x1_.end(), p.x1 - max_w, [&](int c, float v) { return x1_of(c) < v; });
    for (; it != by_x1_.end() && x1_of(*it) - (buffer > 0.0f ? max_w : 0.0f) < p.x2; ++it) {
      const Detection& d = dets[det_idx[static_cast<size_t>(*it)]];
      if (d.cls != t.cls) continue;  // class-aware: other classes never match
      const float v = buffer > 0.0f ? Iou(p, Widen(d.box, buffer)) : Iou(p, d.box);
      if (v < threshold) continue;
      // Among the pairs IoU admits, appearance weighs in (the assigner maximises the sum of weights).
      const float sim = Similarity(t, d);
      // hit_streak is 0 exactly when the track missed the previous frame (Update() resets it then).
      if (sim >= 0.0f && t.hit_streak == 0 && sim < opts_.appearance_reacquire) continue;
      const float a = opts_.appearance_weight;
      edges_.push_back(Edge{r, *it, sim >= 0.0f ? (1.0f - a) * v + a * sim : v});
    }
  }
  for (const auto& [r, c] : assigner_.Solve(edges_, rows, cols)) {
    const int ti = trk_idx[static_cast<size_t>(r)], di = det_idx[static_cast<size_t>(c)];
    det_match_[static_cast<size_t>(di)] = ti;
    trk_matched_[static_cast<size_t>(ti)] = 1;
  }
}

float Tracker::Similarity(const Track& t, const Detection& d) const {
  if (opts_.appearance_dim <= 0 || d.signature == nullptr || t.signature.empty()) return -1.0f;
  float s = 0.0f;
  for (int i = 0; i < opts_.appearance_dim; ++i)
    s += std::min(static_cast<float>(t.signature[static_cast<size_t>(i)]) * kSignatureStep, d.signature[i]);
  return s;
}

void Tracker::Hit(Track& t, const Detection& d) {
  const Box& box = d.box;
  if (opts_.appearance_dim > 0 && d.signature != nullptr) {
    const size_t n = static_cast<size_t>(opts_.appearance_dim);
    if (t.signature.empty()) {
      t.signature.resize(n);
      for (size_t i = 0; i < n; ++i) t.signature[i] = ToFixed(d.signature[i]);
    } else {
      // A running mean that follows slow changes (light, pose) but not one occluded box.
      for (size_t i = 0; i < n; ++i)
        t.signature[i] = ToFixed(0.9f * static_cast<float>(t.signature[i]) * kSignatureStep + 0.1f * d.signature[i]);
    }
  }
  t.kf.Update(box);
  t.time_since_update = 0;
  ++t.hit_streak;
  // Confirmed once min_hits consecutive matches are seen; during the first min_hits frames of the stream
  // every track counts as confirmed (SORT's warm-up rule), so the first frames are not empty.
  if (!t.confirmed && (t.hit_streak >= opts_.min_hits || frame_ <= opts_.min_hits)) t.confirmed = true;
  if (t.confirmed && t.id == 0) t.id = next_id_++;
}

void Tracker::Update(const Detection* dets, int n, std::vector<int32_t>& track_ids, std::vector<uint8_t>& confirmed, int steps) {
  ++frame_;
  // Beyond max_age + 1 intervals every track is gone anyway; the bound keeps a long gap from looping.
  steps = std::clamp(steps, 1, opts_.max_age + 1);
  // Predict, dropping tracks whose state diverged.
  size_t keep = 0;
  for (size_t i = 0; i < tracks_.size(); ++i) {
    Track& t = tracks_[i];
    for (int k = 0; k < steps; ++k) t.predicted = t.kf.Predict();
    if (t.time_since_update > 0) t.hit_streak = 0;
    t.time_since_update += steps;
    if (!t.kf.Finite()) continue;
    if (keep != i) tracks_[keep] = std::move(t);
    ++keep;
  }
  tracks_.erase(tracks_.begin() + static_cast<std::ptrdiff_t>(keep), tracks_.end());

  det_match_.assign(static_cast<size_t>(n), -1);
  trk_matched_.assign(tracks_.size(), 0);
  first_.clear();
  second_.clear();
  pool_.resize(tracks_.size());
  for (size_t i = 0; i < tracks_.size(); ++i) pool_[i] = static_cast<int>(i);
  for (int i = 0; i < n; ++i) {
    if (!opts_.byte || dets[i].score >= opts_.high_thresh) first_.push_back(i);
    else if (dets[i].score >= opts_.low_thresh) second_.push_back(i);
  }
  Associate(dets, first_, pool_, opts_.iou_threshold);
  if (opts_.byte && !second_.empty()) {
    // ByteTrack: low-score boxes may only continue tracks that were matched in the previous frame and are
    // still unmatched; they never start tracks (they are mostly occluded objects or background).
    pool_.clear();
    for (size_t i = 0; i < tracks_.size(); ++i)
      if (!trk_matched_[i] && tracks_[i].time_since_update == steps) pool_.push_back(static_cast<int>(i));
    Associate(dets, second_, pool_, opts_.second_iou_threshold);
  }

  if (opts_.buffer > 0.0f) {
    // Buffered pass: tracks still unmatched and seen within buffer_max_lost intervals, against detections
    // still unmatched, on boxes grown by `buffer` (a person walking faster than the filter's velocity, or
    // coming out from behind someone where the coasting box no longer overlaps them).
    pool_.clear();
    for (size_t i = 0; i < tracks_.size(); ++i)
      if (!trk_matched_[i] && tracks_[i].time_since_update <= opts_.buffer_max_lost) pool_.push_back(static_cast<int>(i));
    rest_.clear();
    for (const int i : first_)
      if (det_match_[static_cast<size_t>(i)] < 0) rest_.push_back(i);
    Associate(dets, rest_, pool_, opts_.iou_threshold, opts_.buffer);
  }

  track_ids.assign(static_cast<size_t>(n), 0);
  confirmed.assign(static_cast<size_t>(n), 0);
  for (int i = 0; i < n; ++i) {
    const int ti = det_match_[static_cast<size_t>(i)];
    if (ti >= 0) Hit(tracks_[static_cast<size_t>(ti)], dets[i]);
  }
  // New tracks: unmatched first-pass detections; with report_all also every other unmatched detection,
  // because each must carry an id.
  for (int i = 0; i < n; ++i) {
    if (det_match_[static_cast<size_t>(i)] >= 0) continue;
    const bool starts = !opts_.byte || dets[i].score >= opts_.high_thresh || opts_.report_all;
    if (!starts) continue;
    tracks_.push_back(Track{KalmanBox(dets[i].box), dets[i].box, {}, 0, dets[i].cls, 0, 0, false});
    if (opts_.appearance_dim > 0 && dets[i].signature != nullptr) {
      std::vector<uint16_t>& sig = tracks_.back().signature;
      sig.resize(static_cast<size_t>(opts_.appearance_dim));
      for (size_t k = 0; k < sig.size(); ++k) sig[k] = ToFixed(dets[i].signature[k]);
    }
    det_match_[static_cast<size_t>(i)] = static_cast<int>(tracks_.size() - 1);
    Track& t = tracks_.back();
    ++t.hit_streak;
    if (opts_.min_hits <= 1 || frame_ <= opts_.min_hits) t.confirmed = true;
    if (t.confirmed || opts_.report_all) t.id = next_id_++;
  }
  for (int i = 0; i < n; ++i) {
    const int ti = det_match_[static_cast<size_t>(i)];
    if (ti < 0) continue;
    Track& t = tracks_[static_cast<size_t>(ti)];
    if (t.confirmed || opts_.report_all) {
      if (t.id == 0) t.id = next_id_++;
      track_ids[static_cast<size_t>(i)] = t.id;
      confirmed[static_cast<size_t>(i)] = t.confirmed ? 1 : 0;
    }
  }
  // Forget tracks unseen for more than max_age frame intervals.
  keep = 0;
  for (size_t i = 0; i < tracks_.size(); ++i) {
    if (tracks_[i].time_since_update > opts_.max_age) continue;
    if (keep != i) tracks_[keep] = std::move(tracks_[i]);
    ++keep;
  }
  tracks_.erase(tracks_.begin() + static_cast<std::ptrdiff_t>(keep), tracks_.end());
}

}  // namespace sightflow::track
