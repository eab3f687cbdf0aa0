#include "crop_resize.h"

#include <vector>

#include "bilinear.h"

namespace sightflow::image {

namespace {

template <typename Out>
std::string CropResizeInto(const RgbView& src, const BoxF* rois, int count, int out_width, int out_height, Layout layout,
                           const ChannelMap& m, Out* out) {
  if (src.width <= 0 || src.height <= 0) return "empty image";
  const size_t per = static_cast<size_t>(3) * static_cast<size_t>(out_width) * static_cast<size_t>(out_height);
  std::vector<Tap> xt, yt;
  for (int i = 0; i < count; ++i) {
    const BoxF& r = rois[i];
    if (!(r.x2 > r.x1) || !(r.y2 > r.y1)) return "roi " + std::to_string(i) + " has no area";
    SampleRegion<Out>(src, r.x1, r.y1, r.x2 - r.x1, r.y2 - r.y1, out + per * static_cast<size_t>(i), layout, out_width,
                      out_height, 0, 0, out_width, out_height, m, xt, yt);
  }
  return {};
}

}  // namespace

std::string CropResize(const RgbView& src, const BoxF* rois, int count, int out_width, int out_height,
                       const TensorFormat& format, float* out) {
  return CropResizeInto(src, rois, count, out_width, out_height, format.layout, ChannelMap(format), out);
}

std::string CropResizeBytes(const RgbView& src, const BoxF* rois, int count, int out_width, int out_height, uint8_t* out) {
  return CropResizeInto(src, rois, count, out_width, out_height, Layout::kNHWC, ChannelMap(TensorFormat{}), out);
}

}  // namespace sightflow::image
