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

TEST_CASE("LiveIds lists the live tracks' ids ascending: tentative ones without an id left out, dead ones gone") {
  TrackerOptions o;
  o.min_hits = 2;
  o.max_age = 1;
  Run r(o);
  std::vector<int32_t> live;
  r.Step({});
  r.Step({});  // past the warm-up: a track needs 2 hits for its id
  r.tracker.LiveIds(live);
  CHECK(live.empty());
  r.Step({Det(0, 0), Det(300, 0)});
  r.tracker.LiveIds(live);
  CHECK(live.empty());  // two tentative tracks, no id yet
  CHECK(r.Step({Det(302, 0), Det(2, 0)}) == std::vector<int32_t>{1, 2});
  r.Step({Det(600, 0), Det(4, 0)});  // the track at 300 coasts; a tentative one starts at 600
  r.tracker.LiveIds(live);
  CHECK(live == std::vector<int32_t>{1, 2});
  CHECK(r.Step({Det(602, 0), Det(6, 0)}) == std::vector<int32_t>{3, 2});  // 1 (at 300) is over max_age
  r.tracker.LiveIds(live);
  CHECK(live == std::vector<int32_t>{2, 3});
  Tracker restored(o);
  const std::vector<uint8_t> snap = r.tracker.Snapshot();
  REQUIRE(restored.Restore(snap.data(), snap.size()));
  std::vector<int32_t> again;
  restored.LiveIds(again);
  CHECK(again == live);
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

TEST_CASE("a track that missed its previous frame takes no box that looks unlike it; one seen in it does") {
  std::vector<float> red(8, 0.0f), blue(8, 0.0f);
  red[0] = 1.0f;
  blue[7] = 1.0f;
  // A red person for five frames, `gap` empty frames, then a blue person where the red one was.
  auto run = [&](TrackerOptions o, int gap) {
    Run r(o);
    int32_t id = 0;
    for (int f = 0; f < 5; ++f) {
      Detection a = Det(100, 100);
      a.signature = red.data();
      id = r.Step({a})[0];
    }
    for (int f = 0; f < gap; ++f) r.Step({});
    Detection b = Det(100, 100);
    b.signature = blue.data();
    return std::make_pair(id, r.Step({b})[0]);
  };
  TrackerOptions looks;
  looks.report_all = true;
  looks.appearance_dim = 8;
  looks.appearance_weight = 0.8f;
  auto [p0, p1] = run(looks, 1);
  CHECK(p1 == p0);  // without the check: the coasting track takes whoever turns up
  TrackerOptions reacquire = looks;
  reacquire.appearance_reacquire = 0.35f;
  auto [r0, r1] = run(reacquire, 1);
  CHECK(r1 != r0);
  auto [s0, s1] = run(reacquire, 0);  // matched in the previous frame: overlap alone decides
  CHECK(s1 == s0);
  reacquire.buffer = 1.0f;  // the buffered pass checks it too
  auto [b0, b1] = run(reacquire, 1);
  CHECK(b1 != b0);
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

namespace {

// A deterministic scene for the snapshot tests: objects born and dying at their own frames, crossing each
// other, hidden now and then, of two classes, with scores low enough for ByteTrack's second pass at times,
// colour signatures of a few bins each, and some calls that skip frames.
struct Scene {
  int dim;
  std::vector<std::vector<float>> signatures;  // per object
  explicit Scene(int d) : dim(d) {
    uint32_t s = 12345;
    auto next = [&s] { return (s = s * 1664525u + 1013904223u) >> 8; };
    for (int o = 0; o < 14; ++o) {
      std::vector<float> sig(static_cast<size_t>(dim), 0.0f);
      for (int k = 0; k < 4 && dim > 0; ++k) sig[next() % static_cast<uint32_t>(dim)] += 0.25f;
      signatures.push_back(sig);
    }
  }
  // Frame f's detections; frames are numbered from 0.
  std::vector<Detection> At(int f) const {
    std::vector<Detection> out;
    for (int o = 0; o < 14; ++o) {
      const int birth = 5 * o, death = birth + 40 + 7 * (o % 5);
      if (f < birth || f >= death) continue;
      if ((f + o) % 11 == 0 || (o % 4 == 1 && f % 17 < 3)) continue;  // hidden this frame
      const int t = f - birth;
      const float dir = o % 2 == 0 ? 1.0f : -1.0f;
      const float x = (o % 2 == 0 ? 20.0f : 600.0f) + dir * (3.0f + static_cast<float>(o % 3)) * static_cast<float>(t);
      const float y = 40.0f + 25.0f * static_cast<float>(o % 6) + 0.5f * static_cast<float>(t % 9);
      Detection d = Det(x, y, 40.0f + static_cast<float>(o % 3) * 4.0f, 90.0f, (f + 2 * o) % 7 == 0 ? 0.3f : 0.9f, o % 5 == 4 ? 1 : 0);
      if (dim > 0 && o % 6 != 5) d.signature = signatures[static_cast<size_t>(o)].data();
      out.push_back(d);
    }
    return out;
  }
  static int Steps(int f) { return f % 23 == 22 ? 3 : 1; }
};

struct Frame {
  std::vector<int32_t> ids;
  std::vector<uint8_t> confirmed;
  std::vector<uint8_t> after;  // the snapshot taken after this frame
};

std::vector<Frame> Reference(const TrackerOptions& o, const Scene& scene, int n) {
  Tracker t(o);
  std::vector<Frame> out;
  for (int f = 0; f < n; ++f) {
    Frame fr;
    const auto d = scene.At(f);
    t.Update(d.data(), static_cast<int>(d.size()), fr.ids, fr.confirmed, Scene::Steps(f));
    fr.after = t.Snapshot();
    out.push_back(std::move(fr));
  }
  return out;
}

std::vector<std::pair<const char*, TrackerOptions>> SnapshotConfigs() {
  TrackerOptions sort;  // SORT: defaults, only confirmed tracks reported
  TrackerOptions byte;
  byte.byte = true;
  byte.report_all = true;
  byte.high_thresh = 0.5f;
  byte.low_thresh = 0.1f;
  TrackerOptions crowd;  // the video pipeline's: buffered pass and appearance
  crowd.report_all = true;
  crowd.buffer = 1.0f;
  crowd.buffer_max_lost = 10;
  crowd.appearance_dim = 32;
  crowd.appearance_weight = 0.8f;
  crowd.appearance_reacquire = 0.35f;
  return {{"sort", sort}, {"bytetrack", byte}, {"buffered+appearance", crowd}};
}

}  // namespace

TEST_CASE("a restored tracker continues with bit-identical output and state") {
  constexpr int kFrames = 110;
  for (const auto& [name, o] : SnapshotConfigs()) {
    CAPTURE(name);
    const Scene scene(o.appearance_dim);
    const auto ref = Reference(o, scene, kFrames);
    // The scene must exercise what is restored: live tracks, signatures, tracks reported and not.
    size_t most = 0;
    for (const Frame& fr : ref) most = std::max(most, fr.after.size());
    CHECK(most > 1000);
    for (int k = 0; k < kFrames - 1; k += 3) {
      CAPTURE(k);
      Tracker t(o);
      REQUIRE(t.Restore(ref[static_cast<size_t>(k)].after.data(), ref[static_cast<size_t>(k)].after.size()));
      CHECK(t.Snapshot() == ref[static_cast<size_t>(k)].after);
      CHECK(t.FrameCount() == k + 1);
      std::vector<int32_t> ids;
      std::vector<uint8_t> confirmed;
      for (int f = k + 1; f < kFrames; ++f) {
        const auto d = scene.At(f);
        t.Update(d.data(), static_cast<int>(d.size()), ids, confirmed, Scene::Steps(f));
        const Frame& want = ref[static_cast<size_t>(f)];
        REQUIRE(ids == want.ids);
        REQUIRE(confirmed == want.confirmed);
        REQUIRE(t.Snapshot() == want.after);
      }
    }
  }
}

TEST_CASE("a fresh tracker's snapshot restores, and restoring twice is the same") {
  TrackerOptions o;
  Tracker a(o), b(o);
  const auto empty = a.Snapshot();
  CHECK(b.Restore(empty.data(), empty.size()));
  CHECK(b.Snapshot() == empty);
  CHECK(b.Restore(empty.data(), empty.size()));
  CHECK(b.LiveTracks() == 0);
}

TEST_CASE("malformed, truncated, other-version and other-options snapshots are refused, the tracker unchanged") {
  const auto configs = SnapshotConfigs();
  const TrackerOptions o = configs[2].second;
  const Scene scene(o.appearance_dim);
  const auto ref = Reference(o, scene, 30);
  const std::vector<uint8_t> good = ref.back().after;
  // The tracker the bad inputs are fed to holds another state (frame 12's), which must survive each refusal.
  Tracker t(o);
  REQUIRE(t.Restore(ref[12].after.data(), ref[12].after.size()));
  const std::vector<uint8_t> before = t.Snapshot();
  auto refused = [&](const std::vector<uint8_t>& bad) {
    const bool ok = t.Restore(bad.data(), bad.size());
    const bool unchanged = t.Snapshot() == before;
    return !ok && unchanged;
  };
  // Every truncation, including nothing at all.
  for (size_t len = 0; len < good.size(); ++len) {
    CAPTURE(len);
    REQUIRE(refused(std::vector<uint8_t>(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len))));
  }
  CHECK(!t.Restore(nullptr, 0));
  auto with = [&](size_t at, uint8_t v) {
    auto bad = good;
    bad[at] = v;
    return bad;
  };
  CHECK(refused(with(0, 'X')));  // magic
  CHECK(refused(with(4, 1)));    // version 1 (the signature as floats): refused, not misread
  CHECK(refused(with(4, 3)));    // version 3
  CHECK(refused(with(5, 1)));    // version 258
  CHECK(refused(with(6, static_cast<uint8_t>(good[6] + 1))));  // options: max_age
  auto longer = good;
  longer.push_back(0);
  CHECK(refused(longer));  // trailing bytes
  // The track count (after magic, version, options, next_id, frame) far beyond what the bytes can hold.
  const size_t count_at = 4 + 2 + 46 + 4 + 8;
  CHECK(refused(with(count_at + 3, 0x7f)));
  // The first track: id, cls, hit_streak, time_since_update (one-byte varints here), then confirmed.
  for (size_t i = 0; i < 4; ++i) REQUIRE(good[count_at + 4 + i] < 0x80);
  CHECK(refused(with(count_at + 4 + 4, 2)));  // confirmed must be 0 or 1
  REQUIRE(good[52] < 0x80);
  CHECK(refused(with(count_at + 4, good[52])));  // id at next_id
  CHECK(refused(with(count_at + 4, 0x80)));      // a varint cut short by the next byte's value...
  auto endless = good;                           // ...and one longer than five bytes
  for (size_t i = 0; i < 6; ++i) endless.insert(endless.begin() + static_cast<std::ptrdiff_t>(count_at + 4), 0x80);
  CHECK(refused(endless));
  auto padded = good;  // a non-canonical varint (1 written as 0x81 0x00)
  padded[count_at + 4] = static_cast<uint8_t>(padded[count_at + 4] | 0x80);
  padded.insert(padded.begin() + static_cast<std::ptrdiff_t>(count_at + 5), 0x00);
  CHECK(refused(padded));

  // Other options: every field counts, and a snapshot taken under them is refused.
  std::vector<TrackerOptions> others(13, o);
  others[0].max_age = 31;
  others[1].min_hits = 2;
  others[2].iou_threshold = 0.31f;
  others[3].byte = true;
  others[4].high_thresh = 0.6f;
  others[5].low_thresh = 0.2f;
  others[6].second_iou_threshold = 0.4f;
  others[7].report_all = false;
  others[8].buffer = 0.5f;
  others[9].buffer_max_lost = 9;
  others[10].appearance_dim = 16;
  others[11].appearance_weight = 0.7f;
  others[12].appearance_reacquire = 0.3f;
  for (size_t i = 0; i < others.size(); ++i) {
    CAPTURE(i);
    Tracker other(others[i]);
    CHECK(!other.Restore(good.data(), good.size()));
    CHECK(other.Snapshot() == Tracker(others[i]).Snapshot());
    const auto theirs = other.Snapshot();
    CHECK(refused(theirs));
  }

  // Random corruption: each mutated input is either refused with the tracker unchanged, or (a flipped bit of
  // a value) accepted; never a crash or an out-of-bounds read, which the sanitizer build would report.
  uint32_t s = 99;
  auto next = [&s] { return (s = s * 1664525u + 1013904223u) >> 8; };
  int accepted = 0, rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    auto bad = good;
    const int flips = 1 + static_cast<int>(next() % 4);
    for (int k = 0; k < flips; ++k) bad[next() % bad.size()] ^= static_cast<uint8_t>(1u << (next() % 8));
    if (next() % 5 == 0) bad.resize(next() % bad.size());
    Tracker u(o);
    REQUIRE(u.Restore(ref[12].after.data(), ref[12].after.size()));
    if (u.Restore(bad.data(), bad.size())) {
      ++accepted;
      std::vector<int32_t> ids;
      std::vector<uint8_t> confirmed;
      const auto d = scene.At(30);
      u.Update(d.data(), static_cast<int>(d.size()), ids, confirmed);  // whatever it holds, Update is safe
    } else {
      ++rejected;
      REQUIRE(u.Snapshot() == ref[12].after);
    }
  }
  CHECK(accepted > 0);
  CHECK(rejected > 0);
}
