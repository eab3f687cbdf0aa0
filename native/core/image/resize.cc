#include "resize.h"

#include <algorithm>
#include <vector>

#include "bilinear.h"

namespace sightflow::image {

std::string ResizeRgb(const RgbView& src, int dst_width, int dst_height, uint8_t* out) {
  if (src.width <= 0 || src.height <= 0 || dst_width <= 0 || dst_height <= 0) return "empty image";
  std::vector<Tap> xt, yt;
  BuildTaps(0.0f, static_cast<float>(src.width), dst_width, src.width, xt);
  BuildTaps(0.0f, static_cast<float>(src.height), dst_height, src.height, yt);
  for (int y = 0; y < dst_height; ++y) {
    const Tap ty = yt[static_cast<size_t>(y)];
    const uint8_t* r0 = src.data + static_cast<size_t>(ty.i0) * static_cast<size_t>(src.stride);
    const uint8_t* r1 = src.data + static_cast<size_t>(ty.i1) * static_cast<size_t>(src.stride);
    uint8_t* o = out + static_cast<size_t>(y) * static_cast<size_t>(dst_width) * 3;
    for (int x = 0; x < dst_width; ++x) {
      const Tap tx = xt[static_cast<size_t>(x)];
      for (int c = 0; c < 3; ++c) {
        const float p00 = r0[3 * tx.i0 + c], p01 = r0[3 * tx.i1 + c];
        const float p10 = r1[3 * tx.i0 + c], p11 = r1[3 * tx.i1 + c];
        const float top = p00 + (p01 - p00) * tx.w;
        const float bot = p10 + (p11 - p10) * tx.w;
        const float v = top + (bot - top) * ty.w + 0.5f;  // round to nearest
        o[3 * x + c] = static_cast<uint8_t>(v >= 255.0f ? 255.0f : v);
      }
    }
  }
  return {};
}

std::string ShrinkRgb(const RgbView& src, int fx, int fy, uint8_t* out) {
  if (fx < 1 || fy < 1) return "shrink factors must be at least 1";
  const int w = src.width / fx, h = src.height / fy;
  if (w <= 0 || h <= 0) return "empty image";
  const float inv = 1.0f / (static_cast<float>(fx) * static_cast<float>(fy));
  if (fx == 2 && fy == 1) {
    // The common case (a 720p frame's width to a 512-wide input): pairs of neighbours, no accumulator.
    for (int y = 0; y < h; ++y) {
      const uint8_t* row = src.data + static_cast<size_t>(y) * static_cast<size_t>(src.stride);
      uint8_t* o = out + static_cast<size_t>(y) * static_cast<size_t>(w) * 3;
      for (int x = 0; x < w; ++x) {
        const uint8_t* p = row + static_cast<size_t>(x) * 6;
        o[3 * x] = static_cast<uint8_t>((p[0] + p[3] + 1) >> 1);
        o[3 * x + 1] = static_cast<uint8_t>((p[1] + p[4] + 1) >> 1);
        o[3 * x + 2] = static_cast<uint8_t>((p[2] + p[5] + 1) >> 1);
      }
    }
    return "";
  }
  std::vector<uint32_t> acc(static_cast<size_t>(w) * 3);
  for (int y = 0; y < h; ++y) {
    std::fill(acc.begin(), acc.end(), 0u);
    for (int r = 0; r < fy; ++r) {
      const uint8_t* row = src.data + static_cast<size_t>(y * fy + r) * static_cast<size_t>(src.stride);
      for (int x = 0; x < w; ++x) {
        const uint8_t* p = row + static_cast<size_t>(x) * static_cast<size_t>(fx) * 3;
        uint32_t* a = &acc[static_cast<size_t>(x) * 3];
        for (int k = 0; k < fx; ++k, p += 3) {
          a[0] += p[0];
          a[1] += p[1];
          a[2] += p[2];
        }
      }
    }
    // A multiply, not an integer division per byte (that alone took most of the time); exact for sums of
    // up to 255 * n at the factors a frame meets.
    uint8_t* o = out + static_cast<size_t>(y) * static_cast<size_t>(w) * 3;
    for (size_t i = 0; i < acc.size(); ++i) o[i] = static_cast<uint8_t>(static_cast<float>(acc[i]) * inv + 0.5f);
  }
  return "";
}

}  // namespace sightflow::image
