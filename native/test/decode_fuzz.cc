// Fuzz: mutated copies (bit flips, byte runs, truncations, spliced headers, duplicated chunks) of small
// generated videos go through the decoder with varied options. Passing means no crash, and under the
// sanitizer build (scripts/test.d/20-native.sh) no memory error or leak. Deterministic (fixed seed) and
// bounded: SIGHTFLOW_FUZZ_COUNT mutants (default 1500) or SIGHTFLOW_FUZZ_SECONDS (default 100), whichever
// comes first.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "decode/video_decoder.h"
#include "support/media.h"

extern "C" {
#include <libavutil/log.h>
}

using namespace sightflow::decode;
using sightflow::testing::make_media;

static sightflow::testing::MediaDirCleanup cleanup;

namespace {

std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

int env_int(const char* name, int fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::atoi(v) : fallback;
}

struct Seed {
  std::string ext;
  std::vector<uint8_t> bytes;
};

std::vector<uint8_t> mutate(const std::vector<Seed>& seeds, size_t which, std::mt19937_64& rng) {
  std::vector<uint8_t> b = seeds[which].bytes;
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % (n == 0 ? 1 : n)); };
  const int kind = static_cast<int>(rng() % 6);
  switch (kind) {
    case 0: {  // scattered bit flips, denser near the header where parsers live
      const int flips = 1 + static_cast<int>(rng() % 24);
      for (int i = 0; i < flips; ++i) {
        const size_t limit = (rng() & 1) ? std::min<size_t>(b.size(), 4096) : b.size();
        b[pick(limit)] ^= static_cast<uint8_t>(1u << (rng() % 8));
      }
      break;
    }
    case 1:  // truncation anywhere
      b.resize(pick(b.size()));
      break;
    case 2: {  // spliced header: the start of one file on the body of another
      const Seed& other = seeds[pick(seeds.size())];
      const size_t head = pick(std::min<size_t>(other.bytes.size(), 8192));
      std::vector<uint8_t> s(other.bytes.begin(), other.bytes.begin() + static_cast<long>(head));
      const size_t from = pick(b.size());
      s.insert(s.end(), b.begin() + static_cast<long>(from), b.end());
      b.swap(s);
      break;
    }
    case 3: {  // a run of one byte value (0x00, 0xff or random) over a region
      const size_t at = pick(b.size()), len = 1 + pick(256);
      const uint8_t v = (rng() % 3 == 0) ? 0 : (rng() % 2 ? 0xff : static_cast<uint8_t>(rng()));
      for (size_t i = at; i < std::min(b.size(), at + len); ++i) b[i] = v;
      break;
    }
    case 4: {  // a chunk duplicated elsewhere (repeated boxes, NAL units, clusters)
      const size_t at = pick(b.size()), len = 1 + pick(2048), to = pick(b.size());
      std::vector<uint8_t> chunk(b.begin() + static_cast<long>(at), b.begin() + static_cast<long>(std::min(b.size(), at + len)));
      b.insert(b.begin() + static_cast<long>(to), chunk.begin(), chunk.end());
      break;
    }
    default: {  // flips and a truncation together
      for (int i = 0; i < 8; ++i) b[pick(b.size())] ^= static_cast<uint8_t>(rng());
      b.resize(b.size() / 2 + pick(b.size() / 2));
      break;
    }
  }
  return b;
}

}  // namespace

TEST_CASE("mutated videos never crash the decoder") {
  av_log_set_level(AV_LOG_QUIET);  // thousands of expected parser complaints
  const std::vector<std::pair<std::string, std::string>> recipes = {
      {"mp4", "-f lavfi -i testsrc=size=64x48:rate=25:duration=1 -c:v libx264 -preset ultrafast -g 10 -pix_fmt yuv420p"},
      {"webm", "-f lavfi -i testsrc=size=64x48:rate=25:duration=1 -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -g 10"},
      {"ts", "-f lavfi -i testsrc=size=64x48:rate=25:duration=1 -c:v libx264 -preset ultrafast -g 10 -bf 2 -pix_fmt yuv420p"},
      {"avi", "-f lavfi -i testsrc=size=66x50:rate=25:duration=1 -c:v mpeg4 -g 10"},
      {"mkv", "-f lavfi -i testsrc=size=48x36:rate=10:duration=1 -f lavfi -i sine=duration=1 -c:v mjpeg -c:a pcm_s16le -shortest"},
      {"avi", "-f lavfi -i testsrc=size=64x48:rate=25:duration=1 -c:v libx264 -preset ultrafast -g 10 -bf 3 -pix_fmt yuv420p"},
  };
  std::vector<Seed> seeds;
  for (size_t i = 0; i < recipes.size(); ++i) {
    const std::string path = make_media("seed" + std::to_string(i) + "." + recipes[i].first, recipes[i].second);
    seeds.push_back({recipes[i].first, read_file(path)});
    REQUIRE(seeds.back().bytes.size() > 100);
  }

  const int count = env_int("SIGHTFLOW_FUZZ_COUNT", 1500);
  const int seconds = env_int("SIGHTFLOW_FUZZ_SECONDS", 100);
  std::mt19937_64 rng(static_cast<uint64_t>(env_int("SIGHTFLOW_FUZZ_SEED", 20261121)));
  const auto started = std::chrono::steady_clock::now();
  std::map<std::string, int> outcomes;
  int done = 0;
  for (; done < count; ++done) {
    if (std::chrono::steady_clock::now() - started > std::chrono::seconds(seconds)) break;
    const size_t which = static_cast<size_t>(rng() % seeds.size());
    const std::vector<uint8_t> bytes = mutate(seeds, which, rng);
    const std::string path =
        (sightflow::testing::media_dir() / ("mutant." + seeds[which].ext)).string();
    write_file(path, bytes);

    Options o;
    o.input = path;
    o.threads = 1 + static_cast<int>(rng() % 2);
    o.mode = static_cast<SampleMode>(rng() % 3);
    o.value = o.mode == SampleMode::Interval ? 0.2 : 25;
    o.max_frames = 40;
    if (rng() % 3 == 0) {
      o.out_width = 1 + static_cast<int>(rng() % 80);
      o.out_height = 1 + static_cast<int>(rng() % 80);
      o.keep_aspect = rng() & 1;
    }
    if (rng() % 4 == 0) {
      o.has_start = true;
      o.unit = (rng() & 1) ? RangeUnit::Frames : RangeUnit::Seconds;
      o.start = o.unit == RangeUnit::Frames ? 5 : 0.3;
    }
    o.open_timeout_ms = o.read_timeout_ms = 10000;

    VideoDecoder d;
    std::string outcome;
    if (!d.open(o)) {
      outcome = "open:" + d.error().code;
      CHECK(!d.error().message.empty());
    } else {
      std::vector<uint8_t> buf(d.frame_bytes());
      FrameMeta meta;
      Status s;
      int frames = 0;
      while ((s = d.next(buf.data(), &meta)) == Status::Frame) ++frames;
      outcome = s == Status::Error ? "read:" + d.error().code : (frames > 0 ? "frames" : "no_frames");
      CHECK(d.stats().emitted_frames == frames);
      CHECK(d.stats().dropped_frames >= 0);
    }
    outcomes[outcome]++;
  }
  std::string summary;
  for (const auto& [k, v] : outcomes) summary += " " + k + "=" + std::to_string(v);
  MESSAGE("fuzz: " << done << " mutants in "
                   << std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started).count()
                   << " ms:" << summary);
  CHECK(done >= std::min(count, 300));
}
