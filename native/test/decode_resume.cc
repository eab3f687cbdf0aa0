// Resuming a file decode from a cursor (Options::resume): for every sampled frame k of an undisturbed decode
// (of vtest.avi, every 4th and those next to a change of key frame), a fresh decoder resumed from frame k's
// cursor must give exactly frames k+1..n (index, time, pixel hash), the same end and the same final counters. Three inputs: a variable-rate H.264 clip with B-frames (made here), and
// the evaluation videos vtest.avi (H.264 in AVI, packets without presentation times, four key frames) and
// TUD-Campus (MPEG-4 Part 2 in MP4), skipped with a message when the evaluation data is absent
// (SIGHTFLOW_EVAL_DIR, default ../shared/eval beside the project). Also: the fallback when the seek lands
// wrong, the clear failure for a cursor whose frame is not there, and the XXH64 test vectors.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "decode/frame_hash.h"
#include "decode/video_decoder.h"
#include "support/media.h"

using namespace sightflow::decode;
using sightflow::testing::make_media;

static sightflow::testing::MediaDirCleanup cleanup;

namespace {

struct Frame {
  int64_t index = 0;
  int64_t pts_ms = 0;
  uint64_t hash = 0;
  Cursor cursor;
};

struct Run {
  bool opened = false;
  std::string resumed_by;
  Error error;
  std::vector<Frame> frames;
  Status status = Status::End;
  Stats stats;
};

Run decode(const Options& o) {
  Run run;
  VideoDecoder d;
  run.opened = d.open(o);
  if (!run.opened) {
    run.error = d.error();
    return run;
  }
  run.resumed_by = d.info().resumed_by;
  std::vector<uint8_t> buf(d.frame_bytes());
  FrameMeta meta;
  while ((run.status = d.next(buf.data(), &meta)) == Status::Frame) {
    Frame f;
    f.index = meta.index;
    f.pts_ms = meta.pts_ms;
    f.hash = frame_hash(buf.data(), buf.size());
    REQUIRE(d.cursor(&f.cursor));
    run.frames.push_back(f);
  }
  run.stats = d.stats();
  run.error = d.error();
  return run;
}

Options with_resume(Options o, const Cursor& c) {
  o.has_resume = true;
  o.resume = c;
  return o;
}

// The resumed run must be the tail of the full one, frame for frame, with the same end and counters.
void check_tail(const Run& full, size_t k, const Run& resumed) {
  CAPTURE(k);
  REQUIRE(resumed.opened);
  REQUIRE(resumed.frames.size() == full.frames.size() - k - 1);
  for (size_t i = 0; i < resumed.frames.size(); ++i) {
    const Frame& want = full.frames[k + 1 + i];
    const Frame& got = resumed.frames[i];
    CAPTURE(i);
    CHECK(got.index == want.index);
    CHECK(got.pts_ms == want.pts_ms);
    CHECK(got.hash == want.hash);
  }
  CHECK(resumed.status == full.status);
  CHECK(resumed.stats.decoded_frames == full.stats.decoded_frames);
  CHECK(resumed.stats.dropped_frames == full.stats.dropped_frames);
  CHECK(resumed.stats.emitted_frames == full.stats.emitted_frames);
  CHECK(resumed.stats.decode_failures == full.stats.decode_failures);
}

// Resumes from the cursor of every `stride`-th frame, the last, and each frame on either side of a change of
// key frame (where a seek lands elsewhere); with stride 1, every frame. Returns the number of frames.
size_t resume_everywhere(const Options& o, size_t stride = 1) {
  const Run full = decode(o);
  REQUIRE(full.opened);
  REQUIRE(full.frames.size() >= 2);
  const size_t n = full.frames.size();
  for (size_t k = 0; k < n; ++k) {
    const Cursor& c = full.frames[k].cursor;
    const bool edge = k + 1 == n || (k > 0 && full.frames[k - 1].cursor.key_ts != c.key_ts) ||
                      (k + 1 < n && full.frames[k + 1].cursor.key_ts != c.key_ts);
    if (k % stride != 0 && !edge) continue;
    CHECK(c.index == full.frames[k].index);
    CHECK(c.frame_hash == full.frames[k].hash);
    const Run resumed = decode(with_resume(o, c));
    check_tail(full, k, resumed);
    CHECK(resumed.resumed_by == "seek");
  }
  return full.frames.size();
}

Options opts(const std::string& input, double fps) {
  Options o;
  o.input = input;
  o.threads = 2;
  o.value = fps;
  return o;
}

// 250 frames of 320x240 H.264 with up to 3 B-frames (pyramid): 25 fps for 4 s, 10 fps for 10 s, then 30 fps;
// a key frame every 40 frames.
std::string vfr_bframes() {
  return make_media("resume_vfr_bframes.mp4",
                    "-f lavfi -i testsrc=size=320x240:rate=25:duration=10 "
                    "-vf \"settb=1/1000,setpts='if(lt(N,100),N/25,if(lt(N,200),4+(N-100)/10,14+(N-200)/30))/TB'\" "
                    "-fps_mode vfr -c:v libx264 -preset veryfast -bf 3 -g 40 -keyint_min 40 -sc_threshold 0 "
                    "-pix_fmt yuv420p");
}

std::string eval_video(const char* rel) {
  const char* env = std::getenv("SIGHTFLOW_EVAL_DIR");
  const std::filesystem::path root =
      env && *env ? std::filesystem::path(env)
                  : std::filesystem::path(__FILE__).parent_path().parent_path().parent_path().parent_path() / "shared" / "eval";
  const std::filesystem::path p = root / rel;
  return std::filesystem::exists(p) ? p.string() : std::string();
}

}  // namespace

TEST_CASE("XXH64 test vectors") {
  const auto h = [](const char* s) { return frame_hash(reinterpret_cast<const uint8_t*>(s), std::strlen(s)); };
  CHECK(h("") == 0xEF46DB3751D8E999ULL);
  CHECK(h("a") == 0xD24EC4F1A98C6E5BULL);
  CHECK(h("abc") == 0x44BC2CF5AD770999ULL);
  CHECK(h("Nobody inspects the spammish repetition") == 0xFBCEA83C8A378BF1ULL);
}

TEST_CASE("variable-rate H.264 with B-frames: every resume continues exactly") {
  const std::string clip = vfr_bframes();
  struct Variant {
    const char* name;
    void (*apply)(Options&);
  };
  const std::vector<Variant> variants = {
      {"fps 3", [](Options&) {}},
      {"interval 0.7", [](Options& o) { o.mode = SampleMode::Interval; o.value = 0.7; }},
      {"seconds 2.3..12.1", [](Options& o) { o.has_start = o.has_end = true; o.start = 2.3; o.end = 12.1; }},
      {"frames 33..181 at 2 fps",
       [](Options& o) {
         o.unit = RangeUnit::Frames;
         o.has_start = o.has_end = true;
         o.start = 33;
         o.end = 181;
         o.value = 2;
       }},
      {"keyframe", [](Options& o) { o.mode = SampleMode::Keyframe; }},
      {"max_frames 9", [](Options& o) { o.max_frames = 9; }},
      {"scaled to 200 wide", [](Options& o) { o.out_width = 200; }},
  };
  for (const auto& v : variants) {
    CAPTURE(v.name);
    Options o = opts(clip, 3);
    v.apply(o);
    resume_everywhere(o);
  }
}

TEST_CASE("a decoder with another thread count resumes another's cursor exactly") {
  // The codec's delay (how far packets are read ahead of the frames) follows the thread count, and a task may
  // continue on a machine with another core count.
  for (const SampleMode mode : {SampleMode::Fps, SampleMode::Keyframe}) {
    CAPTURE(static_cast<int>(mode));
    Options o = opts(vfr_bframes(), 3);
    o.mode = mode;
    o.threads = 8;
    const Run full = decode(o);
    REQUIRE(full.frames.size() >= 4);
    for (const int threads : {1, 3}) {
      Options other = o;
      other.threads = threads;
      for (size_t k = 0; k + 1 < full.frames.size(); k += 2) check_tail(full, k, decode(with_resume(other, full.frames[k].cursor)));
    }
  }
}

// Every 4th frame and the key-frame edges: each resume decodes from a key frame to the end, and all 80 under the
// sanitizers took most of this suite's time for no case the sample lacks.
TEST_CASE("vtest.avi (no presentation times, four key frames): resumes at 1 fps continue exactly") {
  const std::string avi = eval_video("tracking/vtest_PETS09-S2L1_full/vtest.avi");
  if (avi.empty()) {
    MESSAGE("skipped: evaluation data not found (set SIGHTFLOW_EVAL_DIR)");
    return;
  }
  CHECK(resume_everywhere(opts(avi, 1), 4) == 80);
  Options kf = opts(avi, 1);
  kf.mode = SampleMode::Keyframe;
  resume_everywhere(kf);
}

TEST_CASE("TUD-Campus: every resume at 5 fps continues exactly") {
  const std::string mp4 = eval_video("tracking/TUD-Campus/TUD-Campus.mp4");
  if (mp4.empty()) {
    MESSAGE("skipped: evaluation data not found (set SIGHTFLOW_EVAL_DIR)");
    return;
  }
  resume_everywhere(opts(mp4, 5));
  resume_everywhere(opts(mp4, 25));
}

TEST_CASE("a seek that lands wrong falls back to the replay from the start; a frame not there fails clearly") {
  const Options o = opts(vfr_bframes(), 3);
  const Run full = decode(o);
  REQUIRE(full.frames.size() > 20);
  const size_t k = full.frames.size() - 5;
  Cursor c = full.frames[k].cursor;

  // A key frame after the cursor's frame: the seek passes it, the replay finds it.
  Cursor late = c;
  late.key_ts = full.frames.back().cursor.pts + 1000;
  const Run by_replay = decode(with_resume(o, late));
  check_tail(full, k, by_replay);
  CHECK(by_replay.resumed_by == "replay");

  // The stream start: found by the seek path, only later.
  Cursor early = c;
  early.key_ts = 0;
  const Run by_seek = decode(with_resume(o, early));
  check_tail(full, k, by_seek);
  CHECK(by_seek.resumed_by == "seek");

  // Other pixels: neither path finds the frame.
  Cursor wrong = c;
  wrong.frame_hash ^= 1;
  const Run bad = decode(with_resume(o, wrong));
  CHECK_FALSE(bad.opened);
  CHECK(bad.error.code == "resume_mismatch");

  // Another index for the same pixels and time (a cursor of another decode): not there either.
  Cursor moved = c;
  moved.index += 1;
  moved.has_pts = false;
  CHECK(decode(with_resume(o, moved)).error.code == "resume_mismatch");

  // Other options, another version, more frames than max_frames: refused before decoding.
  Options other = o;
  other.value = 4;
  CHECK(decode(with_resume(other, c)).error.code == "resume_mismatch");
  Cursor v2 = c;
  v2.version = 2;
  CHECK(decode(with_resume(o, v2)).error.code == "resume_mismatch");
  Options capped = o;
  capped.max_frames = 3;
  CHECK(decode(with_resume(capped, c)).error.code == "resume_mismatch");
}

TEST_CASE("max_frames counts the whole task: a resume at the cap gives max_frames at once") {
  Options o = opts(vfr_bframes(), 3);
  o.max_frames = 6;
  const Run full = decode(o);
  REQUIRE(full.status == Status::MaxFrames);
  REQUIRE(full.frames.size() == 6);
  const Run resumed = decode(with_resume(o, full.frames.back().cursor));
  REQUIRE(resumed.opened);
  CHECK(resumed.frames.empty());
  CHECK(resumed.status == Status::MaxFrames);
  CHECK(resumed.stats.decoded_frames == full.stats.decoded_frames);
}
