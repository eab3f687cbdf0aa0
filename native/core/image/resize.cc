#include "resize.h"

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

}  // namespace sightflow::image
