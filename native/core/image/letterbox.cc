#include "letterbox.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "bilinear.h"

namespace sightflow::image {

namespace {

// The geometry (scale, padding, content rectangle) and the sampling, shared by the float tensor and the
// bytes: the padding goes through `pad_pixel`, the content through SampleRegion<Out>.
template <typename Out, typename PadPixel>
std::string LetterboxInto(const RgbView& src, const LetterboxOptions& opts, Out* out, LetterboxInfo* info, Layout layout,
                          const ChannelMap& m, PadPixel pad_pixel) {
  if (src.width <= 0 || src.height <= 0 || opts.dst_width <= 0 || opts.dst_height <= 0) return "empty image";
  float scale = std::min(static_cast<float>(opts.dst_width) / static_cast<float>(src.width),
                         static_cast<float>(opts.dst_height) / static_cast<float>(src.height));
  if (!opts.scale_up) scale = std::min(scale, 1.0f);
  const int cw = std::clamp(static_cast<int>(std::lround(static_cast<float>(src.width) * scale)), 1, opts.dst_width);
  const int ch = std::clamp(static_cast<int>(std::lround(static_cast<float>(src.height) * scale)), 1, opts.dst_height);
  const int px = opts.center ? (opts.dst_width - cw) / 2 : 0;
  const int py = opts.center ? (opts.dst_height - ch) / 2 : 0;

  // Padding: fill only the border strips, the content region is written by SampleRegion.
  for (int y = 0; y < opts.dst_height; ++y) {
    const bool row_in = y >= py && y < py + ch;
    for (int x = 0; x < opts.dst_width; ++x) {
      if (row_in && x >= px && x < px + cw) {
        x = px + cw - 1;
        continue;
      }
      pad_pixel(x, y);
    }
  }
  std::vector<Tap> xt, yt;
  SampleRegion<Out>(src, 0.0f, 0.0f, static_cast<float>(src.width), static_cast<float>(src.height), out, layout,
                    opts.dst_width, opts.dst_height, px, py, cw, ch, m, xt, yt);
  if (info != nullptr) *info = LetterboxInfo{scale, px, py, cw, ch};
  return {};
}

}  // namespace

std::string Letterbox(const RgbView& src, const LetterboxOptions& opts, float* out, LetterboxInfo* info) {
  const ChannelMap m(opts.format);
  const Layout layout = opts.format.layout;
  return LetterboxInto(src, opts, out, info, layout, m, [&](int x, int y) {
    StorePixel(out, layout, opts.dst_width, opts.dst_height, x, y, opts.pad, m);
  });
}

std::string LetterboxBytes(const RgbView& src, const LetterboxOptions& opts, uint8_t* out, LetterboxInfo* info) {
  const ChannelMap m{TensorFormat{}};
  const uint8_t pad[3] = {RoundToByte(opts.pad[0]), RoundToByte(opts.pad[1]), RoundToByte(opts.pad[2])};
  return LetterboxInto(src, opts, out, info, Layout::kNHWC, m, [&](int x, int y) {
    uint8_t* o = out + 3 * (static_cast<size_t>(y) * static_cast<size_t>(opts.dst_width) + static_cast<size_t>(x));
    o[0] = pad[0];
    o[1] = pad[1];
    o[2] = pad[2];
  });
}

}  // namespace sightflow::image
