// Shared bilinear sampling used by letterbox, crop-resize and resize: one set of pixel-centre rules
// (half-pixel centres, edges clamped, as OpenCV's INTER_LINEAR) so boxes map back the same way everywhere.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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

// A sampled or padding value (0..255 in exact arithmetic) as a byte: rounded to nearest, halves up (as
// ResizeRgb and JavaScript's Math.round), clamped against float rounding at the ends. Branch-free (min, max,
// truncation); v is never NaN (it comes from bytes).
inline uint8_t RoundToByte(float v) {
  return static_cast<uint8_t>(static_cast<int>(std::min(std::max(v + 0.5f, 0.0f), 255.0f)));
}

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

// The outputs [fast, ow) of an interpolated row, one value at a time (those whose pixel cannot be read as one
// 32-bit word within the row): output channel c of x reads source channel m.src[c] into dst[slot(c, x)].
template <typename Slot>
inline void LerpTail(const RgbView& src, const uint8_t* r, int px, const Tap* taps, int fast, int ow,
                     const ChannelMap& m, float* dst, const Slot& slot) {
  for (int c = 0; c < 3; ++c) {
    const int s = m.src[c];
    const auto at = [&](int i) {
      const uint8_t* p = r + px * i + s;
      return static_cast<float>(src.pairs ? (p[0] + p[3] + 1) >> 1 : p[0]);
    };
    for (int x = fast; x < ow; ++x) {
      const Tap& t = taps[x];
      const float p0 = at(t.i0);
      const float p1 = at(t.i1);
      dst[slot(c, x)] = p0 + (p1 - p0) * t.w;
    }
  }
}

// The outputs [0, fast) whose right tap lies two or more pixels from the row's end: there a pixel's three
// bytes and the next one can be read as one 32-bit word without reading past the row (taps only grow). With
// pairs, a pixel is two stored ones and the second word starts a stored pixel later. 0 without SSE2.
inline int FastOutputs(const RgbView& src, const Tap* taps, int ow) {
  int fast = 0;
#if defined(__SSE2__)
  const int px = src.pairs ? 6 : 3;
  const int row_bytes = src.pairs ? 6 * src.width : 3 * src.width;
  while (fast < ow && px * taps[fast].i1 + (src.pairs ? 7 : 4) <= row_bytes) ++fast;
#else
  (void)src;
  (void)taps;
  (void)ow;
#endif
  return fast;
}

// One pixel-interleaved output row: the vertical blend of two interpolated rows, then the scale and offset
// (or, for bytes, the rounding), over contiguous values the compiler vectorises.
template <typename Out>
inline void BlendRow(Out* o, const float* h0, const float* h1, float wy, const float* scale, const float* offset,
                     size_t n) {
  for (size_t k = 0; k < n; ++k) {
    const float top = h0[k];
    if constexpr (std::is_same_v<Out, uint8_t>) {
      o[k] = RoundToByte(top + (h1[k] - top) * wy);
    } else {
      o[k] = (top + (h1[k] - top) * wy) * scale[k] + offset[k];
    }
  }
}

// The two interpolated rows an output row blends, kept while consecutive output rows share them: h0 holds
// source row ty.i0 and, unless the weight is 0, h1 holds ty.i1 (row0 and row1 say which rows they hold).
// With weight 0 the row below is not needed: top + (h1 - top) * 0 is top for any finite h1, and h1 holds finite
// values (zeros at first, then some interpolated row), so it keeps whatever row it held.
template <typename Interpolate>
inline void CacheRows(const Tap& ty, float*& h0, float*& h1, int& row0, int& row1, const Interpolate& interpolate) {
  if (row0 != ty.i0) {
    if (row1 == ty.i0) {
      std::swap(h0, h1);
      std::swap(row0, row1);
    } else {
      interpolate(ty.i0, h0);
      row0 = ty.i0;
    }
  }
  if (ty.w != 0.0f && row1 != ty.i1) {
    interpolate(ty.i1, h1);
    row1 = ty.i1;
  }
}

// SampleRegion (below) when the output rows are pixel-interleaved in source channel order (NHWC, RGB: the bytes
// a model that normalises itself takes, NHWC float models): the same values, with shortcuts that need that
// layout. A function of its own: its loops beside the planar ones in one body made the planar rows slower.
template <typename Out>
inline void SampleRegionPacked(const RgbView& src, float sx, float sy, float sw, float sh, Out* out, int out_w, int ox,
                               int oy, int ow, int oh, const ChannelMap& m, std::vector<Tap>& xt, std::vector<Tap>& yt) {
  BuildTaps(sx, sw, ow, src.width, xt);
  BuildTaps(sy, sh, oh, src.height, yt);
  const size_t n = static_cast<size_t>(ow) * 3;
  // Two interpolated rows, each with a spare lane at its end (the four-lane store below writes a pixel's three
  // values as four) and 16-byte aligned, then the per-value scale and offset in a row's order.
  const size_t row_len = (n + 4) & ~size_t{3};
  std::vector<float> scratch(2 * row_len + 2 * n);
  float* h0 = scratch.data();
  float* h1 = h0 + row_len;
  float* scale = h1 + row_len;
  float* offset = scale + n;
  for (size_t k = 0; k < n; ++k) {
    scale[k] = m.a[k % 3];
    offset[k] = m.b[k % 3];
  }
  const Tap* taps = xt.data();
  const int px = src.pairs ? 6 : 3;
  const int fast = FastOutputs(src, taps, ow);
  // Bytes out, every horizontal tap with weight 0 and a row whose vertical one is 0 too (no resize, or a shrink
  // by an odd whole factor: a 640-wide photo into a 640 input, a 1080p frame into 640): each output byte is one
  // source byte, copied from the row. The arithmetic below gives the same: p0 + (p1 - p0) * 0 is p0, and so is
  // top + (h1 - top) * 0, and a byte read into a float and rounded back is the byte. Taps one pixel apart
  // (no resize) are one run of the row.
  bool aligned_x = std::is_same_v<Out, uint8_t> && !src.pairs;
  bool contiguous = true;
  for (int x = 0; x < ow && aligned_x; ++x) {
    aligned_x = taps[x].w == 0.0f;
    contiguous = contiguous && taps[x].i0 == taps[0].i0 + x;
  }
  const auto direct_row = [&](int sy_row, size_t row) {
    const uint8_t* r = src.data + static_cast<size_t>(sy_row) * static_cast<size_t>(src.stride);
    auto* o = reinterpret_cast<uint8_t*>(out + 3 * row);
    if (contiguous) {
      std::memcpy(o, r + 3 * static_cast<size_t>(taps[0].i0), n);
      return;
    }
    for (int x = 0; x < ow; ++x) std::memcpy(o + 3 * x, r + 3 * static_cast<size_t>(taps[x].i0), 3);
  };
  // A pixel's four lanes stored as they are: the fourth lands on the next pixel's first value, written after it
  // (or on the row's spare lane). A tap with weight 0 is its left pixel: p0 + (p1 - p0) * 0 is p0 for any finite
  // p1, so the right pixel is not read.
  const auto interpolate = [&](int sy_row, float* dst) {
    const uint8_t* r = src.data + static_cast<size_t>(sy_row) * static_cast<size_t>(src.stride);
#if defined(__SSE2__)
    const __m128i zero = _mm_setzero_si128();
    const auto lanes = [&](const uint8_t* p) {
      int32_t w0;
      std::memcpy(&w0, p, 4);
      __m128i b = _mm_cvtsi32_si128(w0);
      if (src.pairs) {
        int32_t w1;
        std::memcpy(&w1, p + 3, 4);
        b = _mm_avg_epu8(b, _mm_cvtsi32_si128(w1));  // (a + b + 1) >> 1 per byte: the shrink's rounding
      }
      return _mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_unpacklo_epi8(b, zero), zero));
    };
    for (int x = 0; x < fast; ++x) {
      const Tap& t = taps[x];
      const __m128 p0 = lanes(r + px * t.i0);
      const __m128 v =
          t.w == 0.0f ? p0 : _mm_add_ps(p0, _mm_mul_ps(_mm_sub_ps(lanes(r + px * t.i1), p0), _mm_set1_ps(t.w)));
      _mm_storeu_ps(dst + 3 * x, v);
    }
#endif
    LerpTail(src, r, px, taps, fast, ow, m, dst, [](int c, int x) { return static_cast<size_t>(3 * x + c); });
  };
  int row0 = -1, row1 = -1;
  for (int y = 0; y < oh; ++y) {
    const Tap ty = yt[static_cast<size_t>(y)];
    const size_t row = static_cast<size_t>(oy + y) * static_cast<size_t>(out_w) + static_cast<size_t>(ox);
    if (aligned_x && ty.w == 0.0f) {
      direct_row(ty.i0, row);
      continue;
    }
    const float wy = ty.w;
    CacheRows(ty, h0, h1, row0, row1, interpolate);
    BlendRow(out + 3 * row, h0, h1, wy, scale, offset, n);
  }
}

// Samples the source region [sx, sx+sw) x [sy, sy+sh) into the output rectangle at (ox, oy) of size ow x oh
// inside an out_w x out_h float image, normalising on the way (the "one pass"). This is the hot loop of every
// detector input, so it is separable: each source row it needs is interpolated horizontally once, into output
// channel order (planar for NCHW), and kept while consecutive output rows share it; the vertical blend and the
// normalisation then run over contiguous floats, which the compiler vectorises. The arithmetic is the
// per-pixel formula's, in the same order (top = p0 + (p1 - p0) * wx per row, then top + (bot - top) * wy,
// then * a + b), so values are identical to sampling each pixel on its own; 640x480 to 512x512 took about
// half the time of that per-pixel loop.
//
// With Out = uint8_t it writes bytes instead (the model normalises them itself): each value is the float
// path's before its scale and offset, rounded to the nearest whole number; the caller passes an identity
// ChannelMap (RGB order) and NHWC, so the bytes are the float path's values under scale 1, mean 0, std 1.
template <typename Out = float>
inline void SampleRegion(const RgbView& src, float sx, float sy, float sw, float sh, Out* out, Layout layout, int out_w,
                         int out_h, int ox, int oy, int ow, int oh, const ChannelMap& m, std::vector<Tap>& xt,
                         std::vector<Tap>& yt) {
  if (ow <= 0 || oh <= 0) return;
  if (layout == Layout::kNHWC && m.src[0] == 0 && m.src[1] == 1 && m.src[2] == 2) {
    SampleRegionPacked<Out>(src, sx, sy, sw, sh, out, out_w, ox, oy, ow, oh, m, xt, yt);
    return;
  }
  BuildTaps(sx, sw, ow, src.width, xt);
  BuildTaps(sy, sh, oh, src.height, yt);
  const size_t plane = static_cast<size_t>(out_w) * static_cast<size_t>(out_h);
  const size_t n = static_cast<size_t>(ow) * 3;
  const bool planar = layout == Layout::kNCHW;
  // Two interpolated rows, then the per-value scale and offset in the same order as a row's values.
  std::vector<float> scratch(4 * n);
  float* h0 = scratch.data();
  float* h1 = h0 + n;
  float* scale = h1 + n;
  float* offset = scale + n;
  for (size_t k = 0; k < n; ++k) {
    const int c = planar ? static_cast<int>(k / static_cast<size_t>(ow)) : static_cast<int>(k % 3);
    scale[k] = m.a[c];
    offset[k] = m.b[c];
  }
  const Tap* taps = xt.data();
  // Where a pixel's value lands in an interpolated row: output channel c of x reads source channel src[c].
  const auto slot = [&](int c, int x) {
    return planar ? static_cast<size_t>(c) * static_cast<size_t>(ow) + static_cast<size_t>(x) : static_cast<size_t>(3 * x + c);
  };
  const int px = src.pairs ? 6 : 3;
  const int fast = FastOutputs(src, taps, ow);
  const auto interpolate = [&](int sy_row, float* dst) {
    const uint8_t* r = src.data + static_cast<size_t>(sy_row) * static_cast<size_t>(src.stride);
#if defined(__SSE2__)
    // The three channels of a pixel in one 4-lane register (the fourth lane, the next pixel's red, unused):
    // the same lerp per lane as the scalar loop below, so the values are identical; about twice as fast.
    const __m128i zero = _mm_setzero_si128();
    const auto word = [](const uint8_t* p) {
      int32_t w;
      std::memcpy(&w, p, 4);
      return _mm_cvtsi32_si128(w);
    };
    const auto lanes = [&](const uint8_t* p) {
      // _mm_avg_epu8 is (a + b + 1) >> 1 per byte: the shrink's rounding.
      const __m128i b = src.pairs ? _mm_avg_epu8(word(p), word(p + 3)) : word(p);
      return _mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_unpacklo_epi8(b, zero), zero));
    };
    for (int x = 0; x < fast; ++x) {
      const Tap& t = taps[x];
      const __m128 p0 = lanes(r + px * t.i0);
      const __m128 p1 = lanes(r + px * t.i1);
      alignas(16) float v[4];
      _mm_store_ps(v, _mm_add_ps(p0, _mm_mul_ps(_mm_sub_ps(p1, p0), _mm_set1_ps(t.w))));
      dst[slot(0, x)] = v[m.src[0]];
      dst[slot(1, x)] = v[m.src[1]];
      dst[slot(2, x)] = v[m.src[2]];
    }
#endif
    LerpTail(src, r, px, taps, fast, ow, m, dst, slot);
  };
  int row0 = -1, row1 = -1;
  for (int y = 0; y < oh; ++y) {
    const Tap ty = yt[static_cast<size_t>(y)];
    const float wy = ty.w;
    CacheRows(ty, h0, h1, row0, row1, interpolate);
    const size_t row = static_cast<size_t>(oy + y) * static_cast<size_t>(out_w) + static_cast<size_t>(ox);
    if (planar) {
      for (int c = 0; c < 3; ++c) {
        Out* o = out + static_cast<size_t>(c) * plane + row;
        const size_t base = static_cast<size_t>(c) * static_cast<size_t>(ow);
        for (int x = 0; x < ow; ++x) {
          const size_t k = base + static_cast<size_t>(x);
          const float top = h0[k];
          if constexpr (std::is_same_v<Out, uint8_t>) {
            o[x] = RoundToByte(top + (h1[k] - top) * wy);
          } else {
            o[x] = (top + (h1[k] - top) * wy) * scale[k] + offset[k];
          }
        }
      }
    } else {
      BlendRow(out + 3 * row, h0, h1, wy, scale, offset, n);
    }
  }
}

}  // namespace sightflow::image
