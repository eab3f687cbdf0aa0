// Unit tests of the image core's byte outputs (a model that takes uint8 NHWC RGB and normalises it in its
// graph): the letterbox and stretch give the float tensors' geometry and values, rounded to whole bytes.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "image/bilinear.h"
#include "image/crop_resize.h"
#include "image/letterbox.h"
#include "image/resize.h"

using namespace sightflow::image;

namespace {

std::vector<uint8_t> Noise(size_t n, uint32_t seed) {
  std::vector<uint8_t> px(n);
  for (auto& v : px) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<uint8_t>(seed >> 8);
  }
  return px;
}

// The float path's values with no normalisation (scale 1, mean 0, std 1, RGB, NHWC): what the bytes round.
TensorFormat Identity() {
  TensorFormat f;
  f.scale = 1.0f;
  f.layout = Layout::kNHWC;
  return f;
}

std::vector<uint8_t> Rounded(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = RoundToByte(v[i]);
  return out;
}

}  // namespace

TEST_CASE("rounding to a byte: nearest, halves up, clamped") {
  CHECK(RoundToByte(0.0f) == 0);
  CHECK(RoundToByte(-3.0f) == 0);
  CHECK(RoundToByte(0.49f) == 0);
  CHECK(RoundToByte(0.5f) == 1);
  CHECK(RoundToByte(114.4f) == 114);
  CHECK(RoundToByte(254.5f) == 255);
  CHECK(RoundToByte(255.0f) == 255);
  CHECK(RoundToByte(300.0f) == 255);
}

TEST_CASE("letterbox bytes are the float letterbox's unnormalised values rounded, with the same geometry") {
  struct Case {
    int w, h, stride, dw, dh;
    bool center, scale_up;
  };
  // Down and up, wide and tall, padded source rows, top-left content, small frames kept at 1x.
  const Case cases[] = {{97, 61, 3 * 97 + 5, 64, 64, true, true}, {61, 97, 3 * 61, 64, 48, true, true},
                        {40, 20, 3 * 40 + 1, 160, 160, false, true}, {30, 12, 3 * 30, 64, 64, true, false},
                        {640, 480, 3 * 640, 320, 320, true, true}, {640, 480, 3 * 640 + 2, 640, 640, true, true},
                        {192, 96, 3 * 192, 64, 64, true, true}};
  for (const Case& c : cases) {
    const std::vector<uint8_t> px = Noise(static_cast<size_t>(c.stride) * static_cast<size_t>(c.h), 3);
    const RgbView src{px.data(), c.w, c.h, c.stride};
    LetterboxOptions o;
    o.dst_width = c.dw;
    o.dst_height = c.dh;
    o.center = c.center;
    o.scale_up = c.scale_up;
    o.pad[0] = 114.4f;  // rounded like a pixel
    o.pad[1] = 0.0f;
    o.pad[2] = 255.0f;
    o.format = Identity();
    const size_t n = static_cast<size_t>(3 * c.dw * c.dh);
    std::vector<float> floats(n, -7.0f);
    LetterboxInfo fi, bi;
    REQUIRE(Letterbox(src, o, floats.data(), &fi).empty());
    // The format is not read: a normalising one gives the same bytes.
    o.format.scale = 1.0f / 255.0f;
    o.format.bgr = true;
    o.format.layout = Layout::kNCHW;
    std::vector<uint8_t> bytes(n, 7);
    REQUIRE(LetterboxBytes(src, o, bytes.data(), &bi).empty());
    CHECK(bytes == Rounded(floats));
    CHECK(bi.scale == fi.scale);
    CHECK(bi.pad_x == fi.pad_x);
    CHECK(bi.pad_y == fi.pad_y);
    CHECK(bi.content_width == fi.content_width);
    CHECK(bi.content_height == fi.content_height);
  }
}

TEST_CASE("letterbox bytes at the image's own size: the content is the source's bytes, exactly") {
  // 640x480 into 640x640: every tap has weight 0 (the skipped second pixel and row, the packed stores).
  const int w = 640, h = 480, stride = 3 * w + 4;
  const std::vector<uint8_t> px = Noise(static_cast<size_t>(stride) * static_cast<size_t>(h), 11);
  const RgbView src{px.data(), w, h, stride};
  LetterboxOptions o;
  o.dst_width = 640;
  o.dst_height = 640;
  o.center = true;
  o.pad[0] = 114.0f;
  o.pad[1] = 114.0f;
  o.pad[2] = 114.0f;
  std::vector<uint8_t> out(static_cast<size_t>(3 * 640 * 640), 7);
  LetterboxInfo info;
  REQUIRE(LetterboxBytes(src, o, out.data(), &info).empty());
  REQUIRE(info.pad_y == 80);
  bool content = true, padding = true;
  for (int y = 0; y < 640; ++y)
    for (int x = 0; x < 3 * 640; ++x) {
      const uint8_t got = out[static_cast<size_t>(y) * 3 * 640 + static_cast<size_t>(x)];
      if (y < 80 || y >= 560) padding = padding && got == 114;
      else content = content && got == px[static_cast<size_t>(y - 80) * static_cast<size_t>(stride) + static_cast<size_t>(x)];
    }
  CHECK(content);
  CHECK(padding);
}

TEST_CASE("letterbox bytes of a wide frame: padding rows hold the rounded pad colour, content the pixels") {
  std::vector<uint8_t> px(40 * 20 * 3);
  for (size_t i = 0; i < px.size(); i += 3) {
    px[i] = 255;
    px[i + 1] = 0;
    px[i + 2] = 51;
  }
  const RgbView src{px.data(), 40, 20, 120};
  LetterboxOptions o;
  o.dst_width = 16;
  o.dst_height = 16;
  std::vector<uint8_t> out(3 * 16 * 16, 7);
  LetterboxInfo info;
  REQUIRE(LetterboxBytes(src, o, out.data(), &info).empty());
  CHECK(info.pad_y == 4);
  CHECK(info.content_height == 8);
  for (int x = 0; x < 16; ++x) {
    const size_t top = static_cast<size_t>(3 * x), mid = static_cast<size_t>(3 * (8 * 16 + x));
    const size_t bottom = static_cast<size_t>(3 * (15 * 16 + x));
    for (size_t p : {top, bottom}) {
      CHECK(out[p] == 114);
      CHECK(out[p + 1] == 114);
      CHECK(out[p + 2] == 114);
    }
    CHECK(out[mid] == 255);
    CHECK(out[mid + 1] == 0);
    CHECK(out[mid + 2] == 51);
  }
}

TEST_CASE("stretch bytes are the float stretch's unnormalised values rounded, direct and through the 2x1 shrink view") {
  const int w = 99, h = 37;
  const std::vector<uint8_t> px = Noise(static_cast<size_t>(3 * w * h), 11);
  const RgbView stored{px.data(), w, h, 3 * w};
  RgbView pairs = stored;
  pairs.pairs = true;
  pairs.width = w / 2;
  const int sizes[][2] = {{32, 32}, {120, 50}, {7, 3}};
  for (const RgbView& src : {stored, pairs})
    for (const auto& sz : sizes) {
      const BoxF whole{0, 0, static_cast<float>(src.width), static_cast<float>(src.height)};
      const size_t n = static_cast<size_t>(3 * sz[0] * sz[1]);
      std::vector<float> floats(n, -7.0f);
      std::vector<uint8_t> bytes(n, 7);
      REQUIRE(CropResize(src, &whole, 1, sz[0], sz[1], Identity(), floats.data()).empty());
      REQUIRE(CropResizeBytes(src, &whole, 1, sz[0], sz[1], bytes.data()).empty());
      CHECK(bytes == Rounded(floats));
    }
  const BoxF bad{3, 3, 3, 9};
  std::vector<uint8_t> out(3 * 4 * 4);
  CHECK_FALSE(CropResizeBytes(stored, &bad, 1, 4, 4, out.data()).empty());
}
