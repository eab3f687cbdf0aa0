// Crop-and-resize of many regions of one frame into one batch tensor (e.g. person crops for a re-id or
// colour model): one N x 3 x H x W (or N x H x W x 3) float32 tensor, each ROI stretched to H x W.
#pragma once
#include <cstdint>
#include <string>

#include "rgb_image.h"

namespace sightflow::image {

// out holds count * 3 * out_width * out_height floats. ROIs may extend past the frame: samples outside are
// clamped to the nearest edge pixel. A ROI with no area gives an error. Inputs are otherwise trusted.
std::string CropResize(const RgbView& src, const BoxF* rois, int count, int out_width, int out_height,
                       const TensorFormat& format, float* out);

// The same sampling written as bytes for a model that normalises its input itself: out holds count * 3 *
// out_width * out_height bytes, RGB, NHWC, each CropResize's value under scale 1, mean 0, std 1 rounded to the
// nearest whole number (halves up).
std::string CropResizeBytes(const RgbView& src, const BoxF* rois, int count, int out_width, int out_height, uint8_t* out);

}  // namespace sightflow::image
