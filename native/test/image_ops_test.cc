// Unit tests of the image core: letterbox geometry and values, crop batches, resize.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "image/bilinear.h"
#include "image/crop_resize.h"
#include "image/letterbox.h"
#include "image/resize.h"

using namespace sightflow::image;

namespace {

std::vector<uint8_t> Solid(int w, int h, uint8_t r, uint8_t g, uint8_t b) {
  std::vector<uint8_t> px(static_cast<size_t>(w * h * 3));
  for (size_t i = 0; i < px.size(); i += 3) {
    px[i] = r;
    px[i + 1] = g;
    px[i + 2] = b;
  }
  return px;
}

// The per-pixel formula SampleRegion must equal: two horizontal lerps, a vertical one, then scale and offset.
void ReferenceCrop(const RgbView& src, const BoxF& r, int ow, int oh, const TensorFormat& f, std::vector<float>& out) {
  const ChannelMap m(f);
  std::vector<Tap> xt, yt;
  BuildTaps(r.x1, r.x2 - r.x1, ow, src.width, xt);
  BuildTaps(r.y1, r.y2 - r.y1, oh, src.height, yt);
  out.assign(static_cast<size_t>(3 * ow * oh), 0.0f);
  for (int y = 0; y < oh; ++y)
    for (int x = 0; x < ow; ++x) {
      const Tap tx = xt[static_cast<size_t>(x)], ty = yt[static_cast<size_t>(y)];
      float rgb[3];
      for (int c = 0; c < 3; ++c) {
        auto px = [&](int yy, int xx) { return static_cast<float>(src.data[static_cast<size_t>(yy) * static_cast<size_t>(src.stride) + static_cast<size_t>(3 * xx + c)]); };
        const float top = px(ty.i0, tx.i0) + (px(ty.i0, tx.i1) - px(ty.i0, tx.i0)) * tx.w;
        const float bot = px(ty.i1, tx.i0) + (px(ty.i1, tx.i1) - px(ty.i1, tx.i0)) * tx.w;
        rgb[c] = top + (bot - top) * ty.w;
      }
      StorePixel(out.data(), f.layout, ow, oh, x, y, rgb, m);
    }
}

// Bytes from a fixed-seed linear congruential generator, so a failure reproduces.
std::vector<uint8_t> Noise(size_t n, uint32_t seed) {
  std::vector<uint8_t> px(n);
  for (auto& v : px) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<uint8_t>(seed >> 8);
  }
  return px;
}

// Variant 0-3: each layout with each channel order.
TensorFormat Variant(int variant) {
  TensorFormat f;
  f.layout = (variant & 1) ? Layout::kNHWC : Layout::kNCHW;
  f.bgr = (variant & 2) != 0;
  return f;
}

}  // namespace

TEST_CASE("separable sampling equals the per-pixel formula exactly, up and down, any layout and channel order") {
  const int w = 97, h = 61, stride = 3 * w + 5;
  const std::vector<uint8_t> px = Noise(static_cast<size_t>(stride * h), 1);
  const RgbView src{px.data(), w, h, stride};
  // With the whole image at its own size every tap has weight 0, as with {0, 0, 96, 60} shrunk by 3 to 32 x 20:
  // the paths that skip the second pixel and the second row.
  const BoxF rois[] = {{0, 0, 97, 61}, {10.5f, 3.25f, 60.0f, 40.0f}, {-8, -4, 120, 70}, {50, 30, 51, 31}, {0, 0, 96, 60}};
  const int sizes[][2] = {{64, 48}, {200, 150}, {33, 97}, {1, 1}, {97, 61}, {32, 20}};
  for (const BoxF& roi : rois)
    for (const auto& sz : sizes)
      for (int variant = 0; variant < 4; ++variant) {
        TensorFormat f = Variant(variant);
        f.mean[0] = 0.485f; f.mean[1] = 0.456f; f.mean[2] = 0.406f;
        f.std[0] = 0.229f; f.std[1] = 0.224f; f.std[2] = 0.225f;
        std::vector<float> want, got(static_cast<size_t>(3 * sz[0] * sz[1]), -7.0f);
        ReferenceCrop(src, roi, sz[0], sz[1], f, want);
        REQUIRE(CropResize(src, &roi, 1, sz[0], sz[1], f, got.data()).empty());
        CHECK(got == want);
      }
}

TEST_CASE("a pairs view samples the 2x1 box shrink exactly, reading nothing past the last stored byte") {
  // Odd stored width (the shrink drops the last column), rows packed: the last row ends the buffer, so a
  // read past it is AddressSanitizer's to catch.
  const int w = 99, h = 23;
  const std::vector<uint8_t> px = Noise(static_cast<size_t>(3 * w * h), 7);
  const RgbView stored{px.data(), w, h, 3 * w};
  std::vector<uint8_t> shrunk(static_cast<size_t>(3 * (w / 2) * h));
  REQUIRE(ShrinkRgb(stored, 2, 1, shrunk.data()).empty());
  const RgbView copy{shrunk.data(), w / 2, h, 3 * (w / 2)};
  RgbView pairs = stored;
  pairs.pairs = true;
  pairs.width = w / 2;
  const BoxF rois[] = {{0, 0, 49, 23}, {3.5f, 2.25f, 40.0f, 20.0f}, {-6, -3, 60, 30}};
  const int sizes[][2] = {{32, 32}, {120, 50}, {7, 3}};
  for (const BoxF& roi : rois)
    for (const auto& sz : sizes)
      for (int variant = 0; variant < 4; ++variant) {
        const TensorFormat f = Variant(variant);
        std::vector<float> want(static_cast<size_t>(3 * sz[0] * sz[1])), got(want.size(), -7.0f);
        REQUIRE(CropResize(copy, &roi, 1, sz[0], sz[1], f, want.data()).empty());
        REQUIRE(CropResize(pairs, &roi, 1, sz[0], sz[1], f, got.data()).empty());
        CHECK(got == want);
      }
}

TEST_CASE("letterbox of a wide frame pads top and bottom and normalises") {
  auto px = Solid(40, 20, 255, 0, 51);
  RgbView src{px.data(), 40, 20, 40 * 3};
  LetterboxOptions o;
  o.dst_width = 16;
  o.dst_height = 16;
  std::vector<float> out(3 * 16 * 16, -1.0f);
  LetterboxInfo info;
  REQUIRE(Letterbox(src, o, out.data(), &info).empty());
  CHECK(info.scale == doctest::Approx(0.4));
  CHECK(info.content_width == 16);
  CHECK(info.content_height == 8);
  CHECK(info.pad_x == 0);
  CHECK(info.pad_y == 4);
  const size_t plane = 16 * 16;
  // Row 0 is padding (114/255), row 8 is content.
  CHECK(out[0] == doctest::Approx(114.0 / 255.0));
  CHECK(out[8 * 16 + 3] == doctest::Approx(1.0));
  CHECK(out[plane + 8 * 16 + 3] == doctest::Approx(0.0));
  CHECK(out[2 * plane + 8 * 16 + 3] == doctest::Approx(0.2));
  CHECK(out[15 * 16 + 15] == doctest::Approx(114.0 / 255.0));
  for (float v : out) CHECK(v >= 0.0f);  // every element written
}

TEST_CASE("letterbox NHWC, BGR and mean/std") {
  auto px = Solid(10, 10, 200, 100, 50);
  RgbView src{px.data(), 10, 10, 30};
  LetterboxOptions o;
  o.dst_width = 5;
  o.dst_height = 5;
  o.format.layout = Layout::kNHWC;
  o.format.bgr = true;
  o.format.scale = 1.0f;
  o.format.mean[0] = 50;
  o.format.std[0] = 2;
  std::vector<float> out(75);
  LetterboxInfo info;
  REQUIRE(Letterbox(src, o, out.data(), &info).empty());
  CHECK(info.scale == doctest::Approx(0.5));
  CHECK(out[0] == doctest::Approx((50 - 50) / 2.0));  // channel 0 is blue
  CHECK(out[1] == doctest::Approx(100));
  CHECK(out[2] == doctest::Approx(200));
}

TEST_CASE("letterbox interpolates a gradient and keeps row padding of the source") {
  // 4 x 1 image with stride 16 (padded rows), upscaled x2: half-pixel centres give linear ramps.
  std::vector<uint8_t> px(16 * 2, 0);
  const uint8_t vals[4] = {0, 40, 80, 120};
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 4; ++x)
      for (int c = 0; c < 3; ++c) px[static_cast<size_t>(y * 16 + x * 3 + c)] = vals[x];
  RgbView src{px.data(), 4, 2, 16};
  LetterboxOptions o;
  o.dst_width = 8;
  o.dst_height = 4;
  o.format.scale = 1.0f;
  std::vector<float> out(3 * 8 * 4);
  LetterboxInfo info;
  REQUIRE(Letterbox(src, o, out.data(), &info).empty());
  CHECK(info.pad_x == 0);
  CHECK(info.pad_y == 0);
  const float expect[8] = {0, 10, 30, 50, 70, 90, 110, 120};
  for (int x = 0; x < 8; ++x) CHECK(out[static_cast<size_t>(x)] == doctest::Approx(expect[x]));
}

TEST_CASE("scale_up=false keeps small frames at 1x, centred") {
  auto px = Solid(4, 2, 10, 20, 30);
  RgbView src{px.data(), 4, 2, 12};
  LetterboxOptions o;
  o.dst_width = 8;
  o.dst_height = 8;
  o.scale_up = false;
  std::vector<float> out(3 * 64);
  LetterboxInfo info;
  REQUIRE(Letterbox(src, o, out.data(), &info).empty());
  CHECK(info.scale == doctest::Approx(1.0));
  CHECK(info.pad_x == 2);
  CHECK(info.pad_y == 3);
}

TEST_CASE("crop-resize fills one tensor per roi, clamping outside samples") {
  // Left half red, right half blue.
  std::vector<uint8_t> px(20 * 10 * 3);
  for (int y = 0; y < 10; ++y)
    for (int x = 0; x < 20; ++x) {
      uint8_t* p = &px[static_cast<size_t>((y * 20 + x) * 3)];
      p[0] = x < 10 ? 255 : 0;
      p[2] = x < 10 ? 0 : 255;
    }
  RgbView src{px.data(), 20, 10, 60};
  BoxF rois[3] = {{0, 0, 8, 10}, {12, 2, 20, 8}, {-5, -5, 5, 5}};
  TensorFormat f;
  std::vector<float> out(3 * 3 * 4 * 4, -1.0f);
  REQUIRE(CropResize(src, rois, 3, 4, 4, f, out.data()).empty());
  const size_t per = 3 * 16;
  CHECK(out[0] == doctest::Approx(1.0));            // roi 0 red
  CHECK(out[2 * 16] == doctest::Approx(0.0));       // roi 0 blue plane
  CHECK(out[per] == doctest::Approx(0.0));          // roi 1 red plane
  CHECK(out[per + 2 * 16 + 5] == doctest::Approx(1.0));  // roi 1 blue plane
  CHECK(out[2 * per + 15] == doctest::Approx(1.0)); // roi 2 clamped into the red half
  BoxF bad{3, 3, 3, 9};
  CHECK_FALSE(CropResize(src, &bad, 1, 4, 4, f, out.data()).empty());
}

TEST_CASE("resize RGB24 keeps solid colours and halves a checker to its mean") {
  auto px = Solid(9, 7, 12, 34, 56);
  RgbView src{px.data(), 9, 7, 27};
  std::vector<uint8_t> out(5 * 3 * 3);
  REQUIRE(ResizeRgb(src, 5, 3, out.data()).empty());
  for (size_t i = 0; i < out.size(); i += 3) {
    CHECK(out[i] == 12);
    CHECK(out[i + 1] == 34);
    CHECK(out[i + 2] == 56);
  }
  std::vector<uint8_t> checker(4 * 4 * 3);
  for (int i = 0; i < 16; ++i) checker[static_cast<size_t>(i * 3)] = ((i % 4) + (i / 4)) % 2 ? 200 : 0;
  RgbView cs{checker.data(), 4, 4, 12};
  std::vector<uint8_t> half(2 * 2 * 3);
  REQUIRE(ResizeRgb(cs, 2, 2, half.data()).empty());
  CHECK(half[0] == 100);
}

TEST_CASE("box shrink averages whole blocks and drops the partial last ones") {
  // 5x2, shrunk 2x1 (the pair path) and 2x2 (the general path).
  std::vector<uint8_t> px(5 * 2 * 3);
  for (int i = 0; i < 10; ++i) for (int c = 0; c < 3; ++c) px[static_cast<size_t>(3 * i + c)] = static_cast<uint8_t>(i * 10 + c);
  RgbView src{px.data(), 5, 2, 15};
  std::vector<uint8_t> pairs(2 * 2 * 3);
  REQUIRE(ShrinkRgb(src, 2, 1, pairs.data()).empty());
  // Row 0: pixels 0,1 -> 5 (rounded up from 5.0), pixels 2,3 -> 25; row 1: pixels 5,6 -> 55, 7,8 -> 75.
  CHECK(pairs[0] == 5);
  CHECK(pairs[3] == 25);
  CHECK(pairs[6] == 55);
  CHECK(pairs[9] == 75);
  CHECK(pairs[1] == 6);
  std::vector<uint8_t> blocks(2 * 1 * 3);
  REQUIRE(ShrinkRgb(src, 2, 2, blocks.data()).empty());
  CHECK(blocks[0] == 30);  // (0 + 10 + 50 + 60) / 4
  CHECK(blocks[3] == 50);  // (20 + 30 + 70 + 80) / 4
  CHECK_FALSE(ShrinkRgb(src, 0, 1, blocks.data()).empty());
  CHECK_FALSE(ShrinkRgb(src, 6, 1, blocks.data()).empty());
}

