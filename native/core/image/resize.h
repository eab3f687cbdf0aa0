// Plain bilinear resize of packed RGB24 to packed RGB24 (model inputs that want bytes, thumbnails).
#pragma once
#include <cstdint>
#include <string>

#include "rgb_image.h"

namespace sightflow::image {

// out holds dst_width * dst_height * 3 bytes (no row padding). Inputs are trusted.
std::string ResizeRgb(const RgbView& src, int dst_width, int dst_height, uint8_t* out);

// Box shrink by whole factors: each output pixel is the rounded mean of an fx x fy block, so a large frame can
// be brought within bilinear sampling's range without skipping pixels. out holds (width / fx) * (height / fy)
// * 3 bytes (integer division: the last partial column or row of blocks is dropped). Inputs are trusted.
std::string ShrinkRgb(const RgbView& src, int fx, int fy, uint8_t* out);

}  // namespace sightflow::image
