// Unit tests of the tracker core: assignment optimality, Kalman motion, id lifecycle, class awareness,
// ByteTrack's low-score pass, appearance and the buffered pass.
#include <doctest/doctest.h>

#include <set>
#include <vector>

#include "track/assignment.h"
#include "track/kalman_box.h"
#include "track/tracker.h"

using namespace sightflow::track;

namespace {

Detection Det(float x, float y, float w = 40, float h = 80, float score = 0.9f, int cls = 0) {
  return Detection{Box{x, y, x + w, y + h}, score, cls};
}

struct Run {
  Tracker tracker;
  std::vector<int32_t> ids;
  std::vector<uint8_t> confirmed;
  explicit Run(TrackerOptions o) : tracker(o) {}
  std::vector<int32_t> Step(const std::vector<Detection>& d, int steps = 1) {
    tracker.Update(d.data(), static_cast<int>(d.size()), ids, confirmed, steps);
    return ids;
  }
};

}  // namespace

TEST_CASE("Hungarian finds the optimum a greedy choice misses") {
  // Greedy takes (0,0)=1 then (1,1)=10: 11; optimum is (0,1)+(1,0) = 2+3 = 5.
  const double cost[] = {1, 2, 3, 10};
  std::vector<int> a;
  Hungarian(cost, 2, 2, a);
  CHECK(a[0] == 1);
  CHECK(a[1] == 0);
  const double rect[] = {5, 1, 9, 4, 8, 0};  // 2 x 3
  Hungarian(rect, 2, 3, a);
  CHECK(a[0] == 1);
  CHECK(a[1] == 2);
}

TEST_CASE("Assigner maximises IoU within the threshold and over components") {
  // rows: tracks, cols: detections. Track 0 overlaps both detections 0 and 1; track 1 only detection 0;
  // track 3 / detection 3 form a separate component.
  const std::vector<Edge> edges = {{0, 0, 0.6f}, {0, 1, 0.5f}, {1, 0, 0.55f}, {3, 3, 0.4f}};
  Assigner a;
  auto m = a.Solve(edges, 4, 4);
  std::set<std::pair<int, int>> got(m.begin(), m.end());
  CHECK(got == std::set<std::pair<int, int>>{{0, 1}, {1, 0}, {3, 3}});
  // More rows than columns: the better pair wins.
  const std::vector<Edge> tall = {{0, 0, 0.4f}, {1, 0, 0.9f}, {2, 0, 0.5f}};
  auto t = a.Solve(tall, 3, 1);
  REQUIRE(t.size() == 1);
  CHECK(t[0] == std::pair<int, int>{1, 0});
  CHECK(a.Solve({}, 3, 3).empty());
}

TEST_CASE("Kalman box learns a constant velocity") {
  KalmanBox k(Box{0, 0, 10, 20});
  for (int t = 1; t <= 10; ++t) {
    k.Predict();
    k.Update(Box{5.0f * t, 0, 5.0f * t + 10, 20});
  }
  const Box p = k.Predict();
  CHECK(p.x1 == doctest::Approx(55).epsilon(0.05));
  CHECK(p.x2 - p.x1 == doctest::Approx(10).epsilon(0.05));
  CHECK(p.y2 - p.y1 == doctest::Approx(20).epsilon(0.05));
}

TEST_CASE("ids start at 1, need min_hits, and are never reused") {
  TrackerOptions o;
  o.min_hits = 3;
  o.max_age = 2;
  Run r(o);
  // Warm-up: during the first min_hits frames tracks are reported at once.
  CHECK(r.Step({Det(0, 0)}) == std::vector<int32_t>{1});
  CHECK(r.Step({Det(2, 0)}) == std::vector<int32_t>{1});
  for (int t = 0; t < 5; ++t) r.Step({});
  CHECK(r.tracker.LiveTracks() == 0);
  // After warm-up a new object needs 3 hits; its id is given at confirmation (no gaps in confirmed ids).
  CHECK(r.Step({Det(300, 0)}) == std::vector<int32_t>{0});
  CHECK(r.Step({Det(302, 0)}) == std::vector<int32_t>{0});
  CHECK(r.Step({Det(304, 0)}) == std::vector<int32_t>{2});
  CHECK(r.Step({Det(306, 0)}) == std::vector<int32_t>{2});
}

TEST_CASE("report_all gives every detection a stable id from its first frame") {
  TrackerOptions o;
  o.report_all = true;
  o.min_hits = 3;
  Run r(o);
  for (int t = 0; t < 5; ++t) r.Step({});
  auto a = r.Step({Det(0, 0), Det(200, 0)});
  CHECK(a == std::vector<int32_t>{1, 2});
  CHECK(r.confirmed[0] == 0);
  auto b = r.Step({Det(203, 0), Det(3, 0)});
  CHECK(b == std::vector<int32_t>{2, 1});
  r.Step({Det(6, 0), Det(206, 0)});
  CHECK(r.confirmed[0] == 1);
}

TEST_CASE("crossing targets keep their ids through an occlusion") {
  TrackerOptions o;
  o.min_hits = 1;
  o.max_age = 10;
  Run r(o);
  // Two pedestrians walk towards each other at 6 px/frame; B vanishes for 4 frames while they overlap.
  std::vector<int32_t> first;
  for (int t = 0; t < 60; ++t) {
    const float ax = 10.0f + 6.0f * t, bx = 370.0f - 6.0f * t;
    const bool b_hidden = t >= 28 && t < 32;
    std::vector<Detection> d{Det(ax, 100)};
    if (!b_hidden) d.push_back(Det(bx, 104));
    auto ids = r.Step(d);
    if (t == 0) first = ids;
    CHECK(ids[0] == first[0]);
    if (!b_hidden) CHECK(ids[1] == first[1]);
  }
}

TEST_CASE("skipped frames: motion is predicted over the gap, and max_age counts it") {
  TrackerOptions o;
  o.min_hits = 1;
  o.max_age = 5;
  // A 40 px wide box moving 12 px a frame; then 4 frames are skipped (48 px: IoU with the one-step
  // prediction 0.04, with the four-step one about 1).
  for (const int steps : {1, 4}) {
    Run r(o);
    for (int t = 0; t < 8; ++t) CHECK(r.Step({Det(12.0f * t, 0)}) == std::vector<int32_t>{1});
    const auto after = r.Step({Det(12.0f * 11, 0)}, steps);
    CHECK(after == std::vector<int32_t>{steps == 4 ? 1 : 2});
  }
  // Seven intervals without a match are beyond max_age 5 even as a single call.
  Run r(o);
  for (int t = 0; t < 4; ++t) r.Step({Det(12.0f * t, 0)});
  r.Step({}, 7);
  CHECK(r.tracker.LiveTracks() == 0);
}

TEST_CASE("classes never match each other") {
  TrackerOptions o;
  o.min_hits = 1;
  Run r(o);
  auto a = r.Step({Det(0, 0, 40, 80, 0.9f, 1)});
  auto b = r.Step({Det(1, 0, 40, 80, 0.9f, 2)});
  CHECK(a[0] != b[0]);
  auto c = r.Step({Det(2, 0, 40, 80, 0.9f, 1)});
  CHECK(c[0] == a[0]);
}

TEST_CASE("ByteTrack keeps a track alive with a low-score box and never starts one from it") {
  TrackerOptions o;
  o.byte = true;
  o.min_hits = 1;
  o.high_thresh = 0.6f;
  o.low_thresh = 0.1f;
  Run r(o);
  auto a = r.Step({Det(0, 0)});
  auto b = r.Step({Det(2, 0, 40, 80, 0.3f)});
  CHECK(b[0] == a[0]);
  auto c = r.Step({Det(500, 0, 40, 80, 0.3f)});
  CHECK(c[0] == 0);
  auto d = r.Step({Det(500, 0, 40, 80, 0.05f)});
  CHECK(d[0] == 0);
}

TEST_CASE("many separate objects: every one keeps its id") {
  TrackerOptions o;
  o.min_hits = 1;
  Run r(o);
  std::vector<int32_t> first;
  for (int t = 0; t < 20; ++t) {
    std::vector<Detection> d;
    for (int i = 0; i < 200; ++i) d.push_back(Det(static_cast<float>((i % 20) * 60 + t), static_cast<float>((i / 20) * 100 + t), 30, 60));
    auto ids = r.Step(d);
    if (t == 0) {
      first = ids;
      CHECK(std::set<int32_t>(ids.begin(), ids.end()).size() == 200);
    }
    CHECK(ids == first);
  }
}

TEST_CASE("appearance keeps two overlapping people apart where IoU alone swaps them") {
  // Two people side by side (heavy overlap) for five frames, then a little apart the other way round.
  std::vector<float> red(8, 0.0f), blue(8, 0.0f);
  red[0] = 1.0f;
  blue[7] = 1.0f;
  auto run = [&](TrackerOptions o) {
    Run r(o);
    std::vector<int32_t> first;
    for (int f = 0; f < 5; ++f) {
      Detection a = Det(100, 100), b = Det(110, 100);
      a.signature = red.data();
      b.signature = blue.data();
      first = r.Step({a, b});
    }
    Detection a = Det(108, 100), b = Det(102, 100);  // red now right of blue
    a.signature = red.data();
    b.signature = blue.data();
    const auto now = r.Step({a, b});
    return std::make_pair(first, now);
  };
  TrackerOptions plain;
  plain.report_all = true;
  auto [p0, p1] = run(plain);
  CHECK(p1[0] == p0[1]);  // IoU alone: each box goes to the track whose prediction it overlaps most
  CHECK(p1[1] == p0[0]);
  TrackerOptions looks = plain;
  looks.appearance_dim = 8;
  looks.appearance_weight = 0.8f;
  auto [a0, a1] = run(looks);
  CHECK(a1[0] == a0[0]);
  CHECK(a1[1] == a0[1]);
}

TEST_CASE("the buffered pass finds a track its prediction no longer overlaps, only if it was seen recently") {
  auto run = [](TrackerOptions o, int gap) {
    Run r(o);
    int32_t id = 0;
    for (int f = 0; f < 5; ++f) id = r.Step({Det(100, 100)})[0];
    for (int f = 0; f < gap; ++f) r.Step({});
    return std::make_pair(id, r.Step({Det(135, 100)})[0]);  // IoU with the prediction ~0.07
  };
  TrackerOptions plain;
  plain.report_all = true;
  auto [p0, p1] = run(plain, 0);
  CHECK(p1 != p0);
  TrackerOptions buffered = plain;
  buffered.buffer = 1.0f;
  buffered.buffer_max_lost = 10;
  auto [b0, b1] = run(buffered, 0);
  CHECK(b1 == b0);
  auto [c0, c1] = run(buffered, 5);  // lost 6 intervals: still within 10
  CHECK(c1 == c0);
  auto [d0, d1] = run(buffered, 12);  // lost 13 intervals: a new person
  CHECK(d1 != d0);
}
