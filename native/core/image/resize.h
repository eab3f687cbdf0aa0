// Plain bilinear resize of packed RGB24 to packed RGB24 (model inputs that want bytes, thumbnails).
#pragma once
#include <cstdint>
#include <string>

#include "rgb_image.h"

namespace sightflow::image {

// out holds dst_width * dst_height * 3 bytes (no row padding). Inputs are trusted.
std::string ResizeRgb(const RgbView& src, int dst_width, int dst_height, uint8_t* out);

}  // namespace sightflow::image
