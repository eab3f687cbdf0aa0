#include "letterbox.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "bilinear.h"

namespace sightflow::image {

std::string Letterbox(const RgbView& src, const LetterboxOptions& opts, float* out, LetterboxInfo* info) {
  if (src.width <= 0 || src.height <= 0 || opts.dst_width <= 0 || opts.dst_height <= 0) return "empty image";
  float scale = std::min(static_cast<float>(opts.dst_width) / static_cast<float>(src.width),
                         static_cast<float>(opts.dst_height) / static_cast<float>(src.height));
  if (!opts.scale_up) scale = std::min(scale, 1.0f);
  const int cw = std::clamp(static_cast<int>(std::lround(static_cast<float>(src.width) * scale)), 1, opts.dst_width);
  const int ch = std::clamp(static_cast<int>(std::lround(static_cast<float>(src.height) * scale)), 1, opts.dst_height);
  const int px = opts.center ? (opts.dst_width - cw) / 2 : 0;
  const int py = opts.center ? (opts.dst_height - ch) / 2 : 0;

  const ChannelMap m(opts.format);
  // Padding: fill only the border strips, the content region is written by SampleRegion.
  for (int y = 0; y < opts.dst_height; ++y) {
    const bool row_in = y >= py && y < py + ch;
    for (int x = 0; x < opts.dst_width; ++x) {
      if (row_in && x >= px && x < px + cw) {
        x = px + cw - 1;
        continue;
      }
      StorePixel(out, opts.format.layout, opts.dst_width, opts.dst_height, x, y, opts.pad, m);
    }
  }
  std::vector<Tap> xt, yt;
  SampleRegion(src, 0.0f, 0.0f, static_cast<float>(src.width), static_cast<float>(src.height), out, opts.format.layout,
               opts.dst_width, opts.dst_height, px, py, cw, ch, m, xt, yt);
  if (info != nullptr) *info = LetterboxInfo{scale, px, py, cw, ch};
  return {};
}

}  // namespace sightflow::image
