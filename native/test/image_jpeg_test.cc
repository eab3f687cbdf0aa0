// The JPEG decoder against files made here with libjpeg's own encoder: exact pixels of a lossless-enough
// baseline and a progressive file, greyscale widened to RGB, CMYK left to the caller, a cut-off file, the
// pixel limit, a progressive file with more scans than the bound (a CPU bomb), and thousands of mutated
// files that must fail or decode, never crash (the sanitizer build runs this too); the same at a shrink (1/2,
// 1/4, 1/8 while decoding); EXIF orientations turned upright, strip by strip.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <algorithm>
#include <vector>

#include <jpeglib.h>

#include "image/jpeg_decode.h"
#include "image/orient.h"

using namespace sightflow::image;

namespace {

struct Encoded {
  std::vector<uint8_t> bytes;
};

// Encodes w x h pixels of `components` channels (1 grey, 3 RGB, 4 CMYK); scans, when given, replace the
// default script (each entry: component index or -1 for all, Ss, Se, Ah, Al).
Encoded Encode(int w, int h, int components, bool progressive, const std::vector<jpeg_scan_info>& scans = {}, int quality = 95) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* buf = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &buf, &size);
  c.image_width = static_cast<JDIMENSION>(w);
  c.image_height = static_cast<JDIMENSION>(h);
  c.input_components = components;
  c.in_color_space = components == 1 ? JCS_GRAYSCALE : components == 4 ? JCS_CMYK : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, TRUE);
  if (progressive) jpeg_simple_progression(&c);
  if (!scans.empty()) {
    c.scan_info = scans.data();
    c.num_scans = static_cast<int>(scans.size());
  }
  jpeg_start_compress(&c, TRUE);
  std::vector<uint8_t> row(static_cast<size_t>(w * components));
  while (c.next_scanline < c.image_height) {
    for (int x = 0; x < w; ++x)
      for (int k = 0; k < components; ++k) row[static_cast<size_t>(x * components + k)] = static_cast<uint8_t>((x * 7 + static_cast<int>(c.next_scanline) * 3 + k * 50) & 0xff);
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  Encoded e{std::vector<uint8_t>(buf, buf + size)};
  std::free(buf);
  return e;
}

JpegStatus Decode(const std::vector<uint8_t>& b, JpegImage* img, std::string* reason, int64_t max_pixels = 1 << 26) {
  return DecodeJpegRgb(b.data(), b.size(), max_pixels, img, reason);
}

}  // namespace

TEST_CASE("baseline and progressive RGB decode to the same pixels, close to what was encoded") {
  const auto base = Encode(48, 32, 3, false);
  const auto prog = Encode(48, 32, 3, true);
  JpegImage a, b;
  std::string why;
  REQUIRE(Decode(base.bytes, &a, &why) == JpegStatus::kOk);
  REQUIRE(Decode(prog.bytes, &b, &why) == JpegStatus::kOk);
  CHECK(a.width == 48);
  CHECK(a.height == 32);
  REQUIRE(a.rgb.size() == 48u * 32u * 3u);
  CHECK(a.rgb == b.rgb);
}

TEST_CASE("a target that holds the image gets the pixels; a smaller one is left alone") {
  const auto e = Encode(48, 32, 3, true);
  JpegImage own, into, small;
  std::string why;
  REQUIRE(Decode(e.bytes, &own, &why) == JpegStatus::kOk);
  std::vector<uint8_t> target(48u * 32u * 3u + 16u, 0xAB);
  REQUIRE(DecodeJpegRgb(e.bytes.data(), e.bytes.size(), 1 << 26, &into, &why, JpegTarget{target.data(), target.size()}) == JpegStatus::kOk);
  CHECK(into.in_target);
  CHECK(into.rgb.empty());
  CHECK(std::equal(own.rgb.begin(), own.rgb.end(), target.begin()));
  CHECK(target[48u * 32u * 3u] == 0xAB);  // nothing written past the image
  std::vector<uint8_t> tiny(100, 0xAB);
  REQUIRE(DecodeJpegRgb(e.bytes.data(), e.bytes.size(), 1 << 26, &small, &why, JpegTarget{tiny.data(), tiny.size()}) == JpegStatus::kOk);
  CHECK(!small.in_target);
  CHECK(small.rgb == own.rgb);
  CHECK(tiny == std::vector<uint8_t>(100, 0xAB));
  // A file that fails part-way reports no target use.
  std::vector<uint8_t> cut(e.bytes.begin(), e.bytes.begin() + static_cast<long>(e.bytes.size() / 2));
  JpegImage failed;
  CHECK(DecodeJpegRgb(cut.data(), cut.size(), 1 << 26, &failed, &why, JpegTarget{target.data(), target.size()}) == JpegStatus::kFailed);
  CHECK(!failed.in_target);
}

TEST_CASE("greyscale widens to RGB; CMYK is left to the caller") {
  JpegImage img;
  std::string why;
  REQUIRE(Decode(Encode(16, 8, 1, false).bytes, &img, &why) == JpegStatus::kOk);
  REQUIRE(img.rgb.size() == 16u * 8u * 3u);
  for (size_t i = 0; i < img.rgb.size(); i += 3) {
    CHECK(img.rgb[i] == img.rgb[i + 1]);
    CHECK(img.rgb[i] == img.rgb[i + 2]);
  }
  JpegImage cmyk;
  CHECK(Decode(Encode(16, 8, 4, false).bytes, &cmyk, &why) == JpegStatus::kUnsupported);
}

TEST_CASE("cut off, not a JPEG, over the pixel limit: failures with a reason") {
  const auto full = Encode(64, 64, 3, false);
  JpegImage img;
  std::string why;
  std::vector<uint8_t> cut(full.bytes.begin(), full.bytes.begin() + static_cast<long>(full.bytes.size() / 2));
  CHECK(Decode(cut, &img, &why) == JpegStatus::kFailed);
  CHECK(why == "premature end of JPEG image");
  CHECK(Decode(std::vector<uint8_t>{'G', 'I', 'F', '8', '9', 'a'}, &img, &why) == JpegStatus::kFailed);
  CHECK(why.rfind("not a JPEG file", 0) == 0);
  CHECK(Decode(full.bytes, &img, &why, 64 * 64 - 1) == JpegStatus::kFailed);
  CHECK(why == "image of 4096 pixels is over the limit of 4095");
}

TEST_CASE("a progressive file with more than 500 scans is refused") {
  // Greyscale: the DC scan, then every AC coefficient on its own, first at Al 9 and refined bit by bit to
  // 0: 1 + 63 x 10 = 631 scans, each a pass over the whole image for the decoder.
  std::vector<jpeg_scan_info> scans;
  scans.push_back({1, {0, 0, 0, 0}, 0, 0, 0, 0});
  for (int k = 1; k <= 63; ++k) {
    scans.push_back({1, {0, 0, 0, 0}, k, k, 0, 9});
    for (int al = 8; al >= 0; --al) scans.push_back({1, {0, 0, 0, 0}, k, k, al + 1, al});
  }
  const auto bomb = Encode(32, 32, 1, true, scans);
  JpegImage img;
  std::string why;
  CHECK(Decode(bomb.bytes, &img, &why) == JpegStatus::kFailed);
  CHECK(why == "more than 500 progressive scans");
  // The same kind of script under the bound decodes.
  std::vector<jpeg_scan_info> few(scans.begin(), scans.begin() + 1 + 10 * 20);
  for (int k = 21; k <= 63; ++k) few.push_back({1, {0, 0, 0, 0}, k, k, 0, 0});
  CHECK(Decode(Encode(32, 32, 1, true, few).bytes, &img, &why) == JpegStatus::kOk);
}

TEST_CASE("mutated files fail or decode, never crash") {
  const auto base = Encode(40, 24, 3, false).bytes;
  const auto prog = Encode(40, 24, 3, true).bytes;
  uint32_t seed = 7;
  auto next = [&seed] { seed = seed * 1664525u + 1013904223u; return seed >> 8; };
  int ok = 0, failed = 0;
  for (int i = 0; i < 3000; ++i) {
    std::vector<uint8_t> b = (i % 2) ? prog : base;
    const int edits = 1 + static_cast<int>(next() % 8);
    for (int e = 0; e < edits; ++e) b[next() % b.size()] = static_cast<uint8_t>(next());
    if (i % 7 == 0) b.resize(next() % b.size() + 1);
    JpegImage img;
    std::string why;
    const JpegStatus s = Decode(b, &img, &why, 1 << 20);
    if (s == JpegStatus::kOk) {
      ++ok;
      CHECK(img.rgb.size() == static_cast<size_t>(img.width) * static_cast<size_t>(img.height) * 3);
    } else {
      ++failed;
    }
  }
  CHECK(ok + failed == 3000);
  CHECK(failed > 0);
}

TEST_CASE("a shrink decodes ceil(size / shrink), into a target of that size; 3 is refused; mutated files stay safe, turned too") {
  const auto base = Encode(77, 45, 3, false);
  const auto prog = Encode(77, 45, 3, true);
  std::string why;
  for (const int d : {2, 4, 8}) {
    const int w = (77 + d - 1) / d, h = (45 + d - 1) / d;
    JpegImage a, b;
    REQUIRE(DecodeJpegRgb(base.bytes.data(), base.bytes.size(), 1 << 26, &a, &why, {}, d) == JpegStatus::kOk);
    REQUIRE(DecodeJpegRgb(prog.bytes.data(), prog.bytes.size(), 1 << 26, &b, &why, {}, d) == JpegStatus::kOk);
    CHECK(a.width == w);
    CHECK(a.height == h);
    REQUIRE(a.rgb.size() == static_cast<size_t>(w * h * 3));
    CHECK(a.rgb == b.rgb);
    std::vector<uint8_t> target(static_cast<size_t>(w * h * 3) + 4u, 0xAB);
    JpegImage into;
    REQUIRE(DecodeJpegRgb(base.bytes.data(), base.bytes.size(), 1 << 26, &into, &why, JpegTarget{target.data(), target.size()}, d) ==
            JpegStatus::kOk);
    CHECK(into.in_target);
    CHECK(std::equal(a.rgb.begin(), a.rgb.end(), target.begin()));
    CHECK(target[static_cast<size_t>(w * h * 3)] == 0xAB);
  }
  // Greyscale widens at a shrink too.
  JpegImage grey;
  REQUIRE(DecodeJpegRgb(Encode(33, 17, 1, false).bytes.data(), Encode(33, 17, 1, false).bytes.size(), 1 << 26, &grey, &why, {}, 4) ==
          JpegStatus::kOk);
  CHECK(grey.width == 9);
  CHECK(grey.height == 5);
  // The pixel limit is the file's own size whatever the shrink.
  JpegImage over;
  CHECK(DecodeJpegRgb(base.bytes.data(), base.bytes.size(), 77 * 45 - 1, &over, &why, {}, 8) == JpegStatus::kFailed);
  JpegImage odd;
  CHECK(DecodeJpegRgb(base.bytes.data(), base.bytes.size(), 1 << 26, &odd, &why, {}, 3) == JpegStatus::kFailed);
  CHECK(why == "a shrink of 3 (1, 2, 4 or 8 are made while decoding)");
  uint32_t seed = 11;
  auto next = [&seed] { seed = seed * 1664525u + 1013904223u; return seed >> 8; };
  for (int i = 0; i < 1500; ++i) {
    std::vector<uint8_t> b = (i % 2) ? prog.bytes : base.bytes;
    const int edits = 1 + static_cast<int>(next() % 8);
    for (int e = 0; e < edits; ++e) b[next() % b.size()] = static_cast<uint8_t>(next());
    if (i % 7 == 0) b.resize(next() % b.size() + 1);
    JpegImage img;
    if (DecodeJpegRgb(b.data(), b.size(), 1 << 20, &img, &why, {}, 1 << (1 + i % 3), 1 + i % 8) == JpegStatus::kOk)
      CHECK(img.rgb.size() == static_cast<size_t>(img.width) * static_cast<size_t>(img.height) * 3);
  }
}

TEST_CASE("an EXIF orientation comes out upright: each of 2-8 equals the upright decode turned, in strips, at a shrink too") {
  // 3 x 2 stored: pixel value = its index; upright corners by the EXIF definitions.
  const uint8_t px[6][3] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}, {4, 4, 4}, {5, 5, 5}};
  std::vector<uint8_t> small(18);
  for (int i = 0; i < 6; ++i) std::copy(px[i], px[i] + 3, small.begin() + 3 * i);
  // Upright images, row-major, for orientations 1-8 (rows of 3 for 1-4, rows of 2 for 5-8).
  const std::vector<std::vector<int>> want = {
      {0, 1, 2, 3, 4, 5}, {2, 1, 0, 5, 4, 3}, {5, 4, 3, 2, 1, 0}, {3, 4, 5, 0, 1, 2},
      {0, 3, 1, 4, 2, 5}, {3, 0, 4, 1, 5, 2}, {5, 2, 4, 1, 3, 0}, {2, 5, 1, 4, 0, 3},
  };
  for (int o = 1; o <= 8; ++o) {
    std::vector<uint8_t> up(18, 0xEE);
    Orient(small.data(), 3, 2, o, up.data());
    for (int i = 0; i < 6; ++i) CHECK_MESSAGE(up[3 * i] == want[o - 1][i], "orientation " << o << " pixel " << i);
  }
  // A decoded photo, rows not a whole number of strips: the decoder's upright pixels are the stored decode turned.
  const auto e = Encode(75, 41, 3, false);
  std::string why;
  for (const int d : {1, 2}) {
    JpegImage stored;
    REQUIRE(DecodeJpegRgb(e.bytes.data(), e.bytes.size(), 1 << 26, &stored, &why, {}, d) == JpegStatus::kOk);
    for (int o = 1; o <= 8; ++o) {
      JpegImage up;
      REQUIRE(DecodeJpegRgb(e.bytes.data(), e.bytes.size(), 1 << 26, &up, &why, {}, d, o) == JpegStatus::kOk);
      CHECK(up.width == (o >= 5 ? stored.height : stored.width));
      CHECK(up.height == (o >= 5 ? stored.width : stored.height));
      std::vector<uint8_t> expected(stored.rgb.size());
      Orient(stored.rgb.data(), stored.width, stored.height, o, expected.data());
      CHECK_MESSAGE(up.rgb == expected, "orientation " << o << " at 1/" << d);
    }
  }
}
