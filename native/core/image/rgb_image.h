// Plain views and options shared by the image operations. No ownership: callers keep buffers alive.
#pragma once
#include <cstddef>
#include <cstdint>

namespace sightflow::image {

// A packed RGB24 frame; stride is bytes per row (>= 3 * width, rows may be padded as FFmpeg does).
struct RgbView {
  const uint8_t* data = nullptr;
  int width = 0;
  int height = 0;
  int stride = 0;
  // Read as the 2x1 box shrink of the stored frame: pixel x is the rounded mean of stored pixels 2x and 2x + 1
  // (ShrinkRgb's values), and width is the shrunk width (stored width / 2). Only the bilinear sampling
  // (SampleRegion) reads views like this: it saves a pass over the frame and the shrunk copy.
  bool pairs = false;
};

enum class Layout { kNCHW, kNHWC };

// out[c] = (pixel[c] * scale - mean[c]) / std[c], channel c in OUTPUT order (after an RGB->BGR swap).
struct TensorFormat {
  float scale = 1.0f / 255.0f;
  float mean[3] = {0.0f, 0.0f, 0.0f};
  float std[3] = {1.0f, 1.0f, 1.0f};
  bool bgr = false;
  Layout layout = Layout::kNCHW;
};

// An axis-aligned box in source pixels, x2/y2 exclusive edges (so a full frame is 0,0,width,height).
struct BoxF {
  float x1 = 0, y1 = 0, x2 = 0, y2 = 0;
};

}  // namespace sightflow::image
