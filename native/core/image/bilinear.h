// Shared bilinear sampling used by letterbox, crop-resize and resize: one set of pixel-centre rules
// (half-pixel centres, edges clamped, as OpenCV's INTER_LINEAR) so boxes map back the same way everywhere.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "rgb_image.h"

namespace sightflow::image {

// Source taps for one output coordinate: value = a * (1 - w) + b * w.
struct Tap {
  int i0;
  int i1;
  float w;
};

// Taps for `count` outputs covering source span [start, start + length) of an axis of `size` pixels.
inline void BuildTaps(float start, float length, int count, int size, std::vector<Tap>& taps) {
  taps.resize(static_cast<size_t>(count));
  const float step = length / static_cast<float>(count);
  for (int i = 0; i < count; ++i) {
    float s = start + (static_cast<float>(i) + 0.5f) * step - 0.5f;
    s = std::min(std::max(s, 0.0f), static_cast<float>(size - 1));
    int i0 = static_cast<int>(s);
    int i1 = std::min(i0 + 1, size - 1);
    taps[static_cast<size_t>(i)] = Tap{i0, i1, s - static_cast<float>(i0)};
  }
}

// Per-output-channel affine (v * a + b) and the source channel feeding it, from a TensorFormat.
struct ChannelMap {
  float a[3];
  float b[3];
  int src[3];
  explicit ChannelMap(const TensorFormat& f) {
    for (int c = 0; c < 3; ++c) {
      a[c] = f.scale / f.std[c];
      b[c] = -f.mean[c] / f.std[c];
      src[c] = f.bgr ? 2 - c : c;
    }
  }
};

// Writes one output pixel at (x, y) of an out_w x out_h image into a float tensor (one image of a batch).
inline void StorePixel(float* out, Layout layout, int out_w, int out_h, int x, int y, const float rgb[3], const ChannelMap& m) {
  const size_t plane = static_cast<size_t>(out_w) * static_cast<size_t>(out_h);
  const size_t p = static_cast<size_t>(y) * static_cast<size_t>(out_w) + static_cast<size_t>(x);
  if (layout == Layout::kNCHW) {
    out[p] = rgb[m.src[0]] * m.a[0] + m.b[0];
    out[plane + p] = rgb[m.src[1]] * m.a[1] + m.b[1];
    out[2 * plane + p] = rgb[m.src[2]] * m.a[2] + m.b[2];
  } else {
    float* o = out + 3 * p;
    o[0] = rgb[m.src[0]] * m.a[0] + m.b[0];
    o[1] = rgb[m.src[1]] * m.a[1] + m.b[1];
    o[2] = rgb[m.src[2]] * m.a[2] + m.b[2];
  }
}

// Bilinear value of the three channels at one output pixel.
inline void Lerp3(const uint8_t* r0, const uint8_t* r1, const Tap& tx, float wy, float rgb[3]) {
  const uint8_t* p00 = r0 + 3 * tx.i0;
  const uint8_t* p01 = r0 + 3 * tx.i1;
  const uint8_t* p10 = r1 + 3 * tx.i0;
  const uint8_t* p11 = r1 + 3 * tx.i1;
  for (int c = 0; c < 3; ++c) {
    const float top = static_cast<float>(p00[c]) + (static_cast<float>(p01[c]) - static_cast<float>(p00[c])) * tx.w;
    const float bot = static_cast<float>(p10[c]) + (static_cast<float>(p11[c]) - static_cast<float>(p10[c])) * tx.w;
    rgb[c] = top + (bot - top) * wy;
  }
}

// Samples the source region [sx, sx+sw) x [sy, sy+sh) into the output rectangle at (ox, oy) of size ow x oh
// inside an out_w x out_h float image, normalising on the way (the "one pass"). The layout branch is hoisted
// out of the pixel loop: this is the hot loop of every detector input.
inline void SampleRegion(const RgbView& src, float sx, float sy, float sw, float sh, float* out, Layout layout, int out_w,
                         int out_h, int ox, int oy, int ow, int oh, const ChannelMap& m, std::vector<Tap>& xt,
                         std::vector<Tap>& yt) {
  if (ow <= 0 || oh <= 0) return;
  BuildTaps(sx, sw, ow, src.width, xt);
  BuildTaps(sy, sh, oh, src.height, yt);
  const size_t plane = static_cast<size_t>(out_w) * static_cast<size_t>(out_h);
  const int s0 = m.src[0], s1 = m.src[1], s2 = m.src[2];
  const float a0 = m.a[0], a1 = m.a[1], a2 = m.a[2], b0 = m.b[0], b1 = m.b[1], b2 = m.b[2];
  float rgb[3];
  for (int y = 0; y < oh; ++y) {
    const Tap ty = yt[static_cast<size_t>(y)];
    const uint8_t* r0 = src.data + static_cast<size_t>(ty.i0) * static_cast<size_t>(src.stride);
    const uint8_t* r1 = src.data + static_cast<size_t>(ty.i1) * static_cast<size_t>(src.stride);
    const size_t row = static_cast<size_t>(oy + y) * static_cast<size_t>(out_w) + static_cast<size_t>(ox);
    if (layout == Layout::kNCHW) {
      float* o0 = out + row;
      float* o1 = o0 + plane;
      float* o2 = o1 + plane;
      for (int x = 0; x < ow; ++x) {
        Lerp3(r0, r1, xt[static_cast<size_t>(x)], ty.w, rgb);
        o0[x] = rgb[s0] * a0 + b0;
        o1[x] = rgb[s1] * a1 + b1;
        o2[x] = rgb[s2] * a2 + b2;
      }
    } else {
      float* o = out + 3 * row;
      for (int x = 0; x < ow; ++x, o += 3) {
        Lerp3(r0, r1, xt[static_cast<size_t>(x)], ty.w, rgb);
        o[0] = rgb[s0] * a0 + b0;
        o[1] = rgb[s1] * a1 + b1;
        o[2] = rgb[s2] * a2 + b2;
      }
    }
  }
}

}  // namespace sightflow::image
